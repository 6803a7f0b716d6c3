package deploytree

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/regionctl/regionctl/internal/fswalk"
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
	stage string             // made with the first file that differs
	made  map[string]bool    // directories of the staging tree
	open  map[string]*handle // those open, by path ("." the top)
	shut  bool               // no directory opens again; the last user closes it
	put   map[string]bool
	// written are the files written or found as they were, in the order
	// they were: Stats and Sums make their maps of them once, at the end.
	written []writtenFile
	stats   map[string]fswalk.Stat
	sums    map[string][sha256.Size]byte
	ch      Changes
	err     error
	done    bool
}

// handle is an open directory of the staging tree, shared by the writers
// of the files in it.
type handle struct {
	dir   Dir
	err   error
	refs  int
	ready chan struct{} // closed once dir or err is set
}

// maxOpen is how many directories of the staging tree may stay open that
// no writer uses: a fleet's tree has thousands, and a process only so many
// descriptors. Those of the regions and clusters being rendered stay.
const maxOpen = 64

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
	s.made, s.put, s.open = map[string]bool{}, map[string]bool{}, map[string]*handle{}
	return nil
}

// Index is the index.json of the tree at dir when the Stream began: the
// render that wrote it, or nil.
func (s *Stream) Index() *render.Index { return s.old }

// Stats are the size and modification time of each file of the tree
// Finish left at dir (or found there, clean), by slash-separated path, as
// the Stream read or wrote it: a caller that records them (the render
// record) need not walk the tree again. Only after a Finish that returned
// no error and wrote the tree or found it clean.
func (s *Stream) Stats() map[string]fswalk.Stat {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maps()
	return s.stats
}

// Sums are the SHA-256 sums of the files Put with the render's sum
// (Artifact.Sum: every cluster's and region's, in a render) and of those
// Finish was handed (index.json and the fleet-wide files), by
// slash-separated path relative to the tree, as they were written or
// compared: a record finds the files written last too recent to trust by
// their time alone and needs their content's hash, which it need not read
// back. Only after a Finish that returned no error and wrote the tree or
// found it clean.
func (s *Stream) Sums() map[string][sha256.Size]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maps()
	return s.sums
}

// writtenFile is a file as the Stream wrote or found it.
type writtenFile struct {
	path   string
	stat   fswalk.Stat
	sum    [sha256.Size]byte
	summed bool
}

// maps makes Stats' and Sums' maps of written, once, each at its size:
// kept as the files came, in maps under the lock, they grew step by step
// while the render's workers waited on each other (some 30 ms of a cold
// render of 25,000 files). s.mu is held.
func (s *Stream) maps() {
	if s.stats != nil {
		return
	}
	n := 0
	for _, w := range s.written {
		if w.summed {
			n++
		}
	}
	s.stats = make(map[string]fswalk.Stat, len(s.written))
	s.sums = make(map[string][sha256.Size]byte, n)
	for _, w := range s.written {
		s.stats[w.path] = w.stat
		if w.summed {
			s.sums[w.path] = w.sum
		}
	}
}

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
	if err := checkPath(a.Path); err != nil {
		return s.fail(err)
	}
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
		b, st, err := s.disk.ReadFile(s.path(s.dir, a.Path))
		if err != nil {
			return s.fail(fmt.Errorf("reading %s: %w", a.Path, err))
		}
		if bytes.Equal(b, a.Bytes) {
			s.record(&s.ch.Unchanged, a.Path)
			s.stat(a, st)
			return nil
		}
		s.record(&s.ch.Changed, a.Path)
	} else {
		s.record(&s.ch.Added, a.Path)
	}
	if s.compare {
		return nil
	}
	return s.write(a)
}

// write creates a's file in the staging tree.
func (s *Stream) write(a render.Artifact) error {
	h, err := s.dirOf(a.Path)
	if err != nil {
		return s.fail(fmt.Errorf("writing %s: %w", a.Path, err))
	}
	st, err := h.dir.WriteFile(path.Base(a.Path), a.Bytes)
	s.letGo(h)
	if err != nil {
		return s.fail(fmt.Errorf("writing %s: %w", a.Path, err))
	}
	s.stat(a, st)
	return nil
}

// stat keeps the size and time of a's file as written or found, and its
// sum when the render took one (Sums).
func (s *Stream) stat(a render.Artifact, st fswalk.Stat) {
	s.mu.Lock()
	s.written = append(s.written, writtenFile{a.Path, st, a.Sum, a.Summed})
	s.mu.Unlock()
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

// dirOf is the directory of the staging tree that p goes in, made if it
// was not and open, for the caller to let go of.
func (s *Stream) dirOf(p string) (*handle, error) {
	stage, err := s.staging()
	if err != nil {
		return nil, err
	}
	return s.openDir(stage, path.Dir(p))
}

// openDir opens d, a directory of the staging tree at stage ("." its
// top), making it and those above it as needed. Writers of files in one
// directory share its handle; one of them opens it, the others wait.
func (s *Stream) openDir(stage, d string) (*handle, error) {
	if d != "." && path.Dir(d) == d {
		// checkPath lets no such path through: its parent is itself.
		return nil, fmt.Errorf("internal error: %q is not a directory inside deploy/", d)
	}
	s.mu.Lock()
	if s.shut {
		s.mu.Unlock()
		return nil, fmt.Errorf("internal error: %s written to after Finish", d)
	}
	if h := s.open[d]; h != nil {
		h.refs++
		s.mu.Unlock()
		<-h.ready
		if h.err != nil {
			s.letGo(h)
			return nil, h.err
		}
		return h, nil
	}
	s.closeIdle(maxOpen)
	h := &handle{refs: 1, ready: make(chan struct{})}
	s.open[d] = h
	made := s.made[d]
	s.mu.Unlock()
	if d == "." {
		h.dir, h.err = s.disk.OpenDir(stage)
	} else if parent, err := s.openDir(stage, path.Dir(d)); err != nil {
		h.err = err
	} else {
		if made {
			h.dir, h.err = parent.dir.Open(path.Base(d))
		} else {
			h.dir, h.err = parent.dir.Mkdir(path.Base(d))
		}
		s.letGo(parent)
	}
	if h.err == nil && !made {
		s.mu.Lock()
		s.made[d] = true
		s.mu.Unlock()
	}
	close(h.ready)
	if h.err != nil {
		s.letGo(h)
		return nil, h.err
	}
	return h, nil
}

// letGo gives back a handle openDir returned.
func (s *Stream) letGo(h *handle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.refs--
	if s.shut {
		s.closeIdle(0)
	}
}

// closeIdle closes the directories no writer uses once more than keep
// are open. The caller holds s.mu.
func (s *Stream) closeIdle(keep int) {
	if len(s.open) <= keep {
		return
	}
	for d, h := range s.open {
		if h.refs > 0 {
			continue
		}
		if h.dir != nil {
			_ = h.dir.Close()
		}
		delete(s.open, d)
	}
}

// closeDirs closes the staging tree's directories and opens none again:
// each still in use is closed when its last user lets go of it.
func (s *Stream) closeDirs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shut = true
	s.closeIdle(0)
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
	for i := range rest {
		if !rest[i].Summed {
			rest[i].Sum, rest[i].Summed = sha256.Sum256(rest[i].Bytes), true
		}
	}
	if err = s.putAll(rest); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.done = true
	c := s.ch
	s.mu.Unlock()
	s.sortOut(&c, rendered)
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
	s.closeDirs()
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

// sortOut adds to c the files at dir the render did not give (rendered):
// removed when regionctl wrote them (the old index lists them), foreign
// otherwise; and sorts each list of c.
func (s *Stream) sortOut(c *Changes, rendered map[string]bool) {
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
}

// Abort removes the staging tree and releases dir, which is as it was.
func (s *Stream) Abort() {
	s.closeDirs()
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
			h, err := s.dirOf(p)
			if err != nil {
				return s.fail(fmt.Errorf("writing %s: %w", p, err))
			}
			err = h.dir.Link(s.path(s.dir, p), path.Base(p))
			s.letGo(h)
			if err == nil {
				continue
			}
			b, _, err := s.disk.ReadFile(s.path(s.dir, p))
			if err != nil {
				return s.fail(fmt.Errorf("writing %s: %w", p, err))
			}
			if err := s.write(render.Artifact{Path: p, Bytes: b}); err != nil {
				return err
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
