package deploytree

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/render"
)

// Write makes the tree at dir exactly out. Nothing is written when the tree
// is already clean. On any error dir is left as it was.
func Write(disk Disk, dir string, out *render.Output, opts Options) (*Changes, error) {
	s, err := Begin(disk, dir, opts)
	if err != nil {
		return nil, err
	}
	return s.Finish(out)
}

// Stream replaces the tree at dir with a render whose files are handed to
// it as they are rendered (Put), so that the render need not hold them all:
// a file that differs from the one at dir is written into a staging tree
// at once, and Finish links the unchanged ones beside it and swaps the two
// trees. Until then dir is as it was; a failed Put or Finish, or Abort,
// leaves it so and removes the staging tree. A Stream made by Compare
// writes nothing: Finish only tells how the render differs from dir.
type Stream struct {
	disk    Disk
	dir     string
	work    string
	opts    Options
	compare bool
	release func()
	old     *render.Index
	onDisk  map[string]bool

	mu    sync.Mutex
	stage string          // made with the first file that differs
	made  map[string]bool // directories of the staging tree
	put   map[string]bool
	ch    Changes
	err   error
	done  bool
}

// Begin takes the tree at dir for a render (waiting for another render as
// opts says) and reads what it holds.
func Begin(disk Disk, dir string, opts Options) (*Stream, error) {
	release, err := lock(dir, opts.LockWait, opts.Waiting)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	s := &Stream{disk: disk, dir: dir, opts: opts, release: func() { once.Do(release) },
		work: filepath.Join(filepath.Dir(filepath.Clean(dir)), WorkDir)}
	if err := removeStale(disk, dir, s.work); err != nil {
		s.release()
		return nil, err
	}
	if err := s.read(); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// Compare is a Stream that writes nothing and takes no lock: render --check.
func Compare(disk Disk, dir string) (*Stream, error) {
	s := &Stream{disk: disk, dir: dir, compare: true, release: func() {}}
	if err := s.read(); err != nil {
		return nil, err
	}
	return s, nil
}

// read lists the files at dir (refusing links) and reads its index.
func (s *Stream) read() error {
	if err := refuseLinks(s.disk, s.dir); err != nil {
		return err
	}
	files, err := s.disk.Files(s.dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", s.dir, err)
	}
	if s.old, err = ReadIndex(s.disk, s.dir); err != nil {
		return err
	}
	s.onDisk = make(map[string]bool, len(files))
	for _, f := range files {
		s.onDisk[f] = true
	}
	s.made, s.put = map[string]bool{}, map[string]bool{}
	return nil
}

// Index is the index.json of the tree at dir when the Stream began: the
// render that wrote it, or nil.
func (s *Stream) Index() *render.Index { return s.old }

// Put takes rendered files: each is compared with the file at dir, and
// written into the staging tree unless the two are the same. It is safe
// for concurrent use; the caller may drop the files' bytes once it returns.
func (s *Stream) Put(arts []render.Artifact) error {
	for _, a := range arts {
		if err := s.putOne(a); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stream) putOne(a render.Artifact) error {
	s.mu.Lock()
	if s.err != nil || s.done {
		err := s.err
		s.mu.Unlock()
		if err == nil {
			err = fmt.Errorf("internal error: %s was handed to %s after Finish", a.Path, s.dir)
		}
		return err
	}
	if s.put[a.Path] {
		s.mu.Unlock()
		return s.fail(fmt.Errorf("internal error: %s rendered twice", a.Path))
	}
	s.put[a.Path] = true
	present := s.onDisk[a.Path]
	s.mu.Unlock()
	if present {
		b, err := s.disk.ReadFile(s.path(s.dir, a.Path))
		if err != nil {
			return s.fail(fmt.Errorf("reading %s: %w", a.Path, err))
		}
		if bytes.Equal(b, a.Bytes) {
			s.record(&s.ch.Unchanged, a.Path)
			return nil
		}
		s.record(&s.ch.Changed, a.Path)
	} else {
		s.record(&s.ch.Added, a.Path)
	}
	if s.compare {
		return nil
	}
	target, err := s.target(a.Path)
	if err != nil {
		return s.fail(err)
	}
	if err := s.disk.WriteFile(target, a.Bytes); err != nil {
		return s.fail(fmt.Errorf("writing %s: %w", a.Path, err))
	}
	return nil
}

func (s *Stream) record(list *[]string, p string) {
	s.mu.Lock()
	*list = append(*list, p)
	s.mu.Unlock()
}

// fail records the first error; the Stream refuses everything after it.
func (s *Stream) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	return s.err
}

func (s *Stream) path(root, p string) string { return filepath.Join(root, filepath.FromSlash(p)) }

// staging returns the staging tree, made on the first call.
func (s *Stream) staging() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stage != "" {
		return s.stage, nil
	}
	stage, err := s.disk.MkdirTemp(s.work, stagingPattern)
	if err != nil {
		return "", fmt.Errorf("creating a staging directory in %s: %w", s.work, err)
	}
	s.stage = stage
	// MkdirTemp makes it 0700; deploy/ gets the mode a directory gets.
	if err := os.Chmod(stage, 0o777&^umask()); err != nil {
		return "", fmt.Errorf("setting the mode of %s: %w", stage, err)
	}
	return stage, nil
}

// target is where p goes in the staging tree, whose directories it makes.
func (s *Stream) target(p string) (string, error) {
	stage, err := s.staging()
	if err != nil {
		return "", err
	}
	d := path.Dir(p)
	s.mu.Lock()
	made := s.made[d]
	s.mu.Unlock()
	if !made {
		if err := s.disk.MkdirAll(s.path(stage, d)); err != nil {
			return "", fmt.Errorf("writing %s: %w", p, err)
		}
		s.mu.Lock()
		s.made[d] = true
		s.mu.Unlock()
	}
	return s.path(stage, p), nil
}

// Finish hands over what of out was not Put (its files with bytes), prunes
// what out no longer renders, and replaces dir with the staging tree: the
// unchanged files are hard links to the current ones. Nothing is written
// when the tree is already clean, or files regionctl did not write would
// be lost without opts.PruneForeign.
func (s *Stream) Finish(out *render.Output) (ch *Changes, err error) {
	defer func() {
		if err != nil || ch == nil || s.compare || ch.Clean() || (len(ch.Foreign) > 0 && !s.opts.PruneForeign) {
			s.Abort()
		}
	}()
	if len(out.Unchanged) > 0 {
		return nil, fmt.Errorf("internal error: a render that left out %d clusters cannot be compared with or written to %s", len(out.Unchanged), s.dir)
	}
	var rest []render.Artifact
	rendered := make(map[string]bool, len(out.Artifacts))
	s.mu.Lock()
	for _, a := range out.Artifacts {
		rendered[a.Path] = true
		if !s.put[a.Path] {
			rest = append(rest, a)
		}
	}
	s.mu.Unlock()
	if err := s.putAll(rest); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.done = true
	c := s.ch
	s.mu.Unlock()
	written := map[string]bool{render.IndexPath: true}
	if s.old != nil {
		for _, f := range s.old.Files {
			written[f] = true
		}
	}
	for p := range s.onDisk {
		switch {
		case rendered[p]:
		case written[p]:
			c.Removed = append(c.Removed, p)
		default:
			c.Foreign = append(c.Foreign, p)
		}
	}
	for _, l := range [][]string{c.Added, c.Changed, c.Removed, c.Foreign, c.Unchanged} {
		sort.Strings(l)
	}
	if s.compare || c.Clean() {
		return &c, nil
	}
	if len(c.Foreign) > 0 && !s.opts.PruneForeign {
		return &c, &ForeignFilesError{Dir: s.dir, Files: c.Foreign}
	}
	if err := s.linkUnchanged(c.Unchanged); err != nil {
		return nil, err
	}
	stage, err := s.staging() // made already, unless the render only removes
	if err != nil {
		return nil, err
	}
	exists, err := s.disk.Exists(s.dir)
	if err == nil {
		if exists {
			err = s.disk.Exchange(stage, s.dir)
		} else {
			err = s.disk.Rename(stage, s.dir)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("replacing %s: %w", s.dir, err)
	}
	defer s.release()
	s.mu.Lock()
	s.stage = "" // dir now; the previous tree, if any, is at stage
	s.mu.Unlock()
	if exists {
		// stage now holds the previous tree.
		if err := s.disk.RemoveAll(stage); err != nil {
			return &c, fmt.Errorf("%s was written, but the previous tree left in %s could not be removed: %w", s.dir, stage, err)
		}
	}
	return &c, nil
}

// Abort removes the staging tree and releases dir, which is as it was.
func (s *Stream) Abort() {
	s.mu.Lock()
	s.done = true
	stage := s.stage
	s.stage = ""
	s.mu.Unlock()
	if stage != "" {
		_ = s.disk.RemoveAll(stage)
	}
	s.release()
}

// putAll puts arts a directory at a time on each core, as cp -r fills a
// tree: writers creating files in one directory wait on its lock (and, on
// ext4, search the same inode table), which costs more system time than a
// second writer saves.
func (s *Stream) putAll(arts []render.Artifact) error {
	return byDirectory(arts, func(a render.Artifact) string { return a.Path }, func(group []render.Artifact) error {
		return s.Put(group)
	})
}

// linkUnchanged links the unchanged files of dir into the staging tree;
// a file that cannot be linked is copied.
func (s *Stream) linkUnchanged(paths []string) error {
	return byDirectory(paths, func(p string) string { return p }, func(group []string) error {
		for _, p := range group {
			target, err := s.target(p)
			if err != nil {
				return s.fail(err)
			}
			if err := s.disk.Link(s.path(s.dir, p), target); err == nil {
				continue
			}
			b, err := s.disk.ReadFile(s.path(s.dir, p))
			if err == nil {
				err = s.disk.WriteFile(target, b)
			}
			if err != nil {
				return s.fail(fmt.Errorf("writing %s: %w", p, err))
			}
		}
		return nil
	})
}

// byDirectory runs fn over the runs of items (sorted by path) that share a
// directory, on GOMAXPROCS goroutines, and returns the first error; after
// one, no further run starts.
func byDirectory[T any](items []T, pathOf func(T) string, fn func([]T) error) error {
	sorted := append([]T(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool { return pathOf(sorted[i]) < pathOf(sorted[j]) })
	var groups [][]T
	for len(sorted) > 0 {
		n := 1
		for n < len(sorted) && path.Dir(pathOf(sorted[n])) == path.Dir(pathOf(sorted[0])) {
			n++
		}
		groups = append(groups, sorted[:n])
		sorted = sorted[n:]
	}
	var mu sync.Mutex
	var first error
	par.Workers(runtime.GOMAXPROCS(0), len(groups), func(_, i int) {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			return
		}
		if err := fn(groups[i]); err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
	})
	return first
}
