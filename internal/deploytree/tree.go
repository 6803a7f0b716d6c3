package deploytree

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/regionctl/regionctl/internal/render"
)

// Changes is how a render differs from a deploy/ tree on disk.
type Changes struct {
	Added     []string // rendered, not on disk
	Changed   []string // on disk with other content
	Removed   []string // written by an earlier render, no longer rendered: pruned
	Foreign   []string // on disk, never written by regionctl
	Unchanged []string
}

// Clean reports whether the tree on disk is exactly the render.
func (c *Changes) Clean() bool {
	return len(c.Added)+len(c.Changed)+len(c.Removed)+len(c.Foreign) == 0
}

// Plan compares out with the tree at dir. It also returns the index of the
// render that wrote the tree, if any.
func Plan(disk Disk, dir string, out *render.Output) (*Changes, *render.Index, error) {
	if len(out.Skipped) > 0 {
		return nil, nil, fmt.Errorf("internal error: a render that left out %d clusters cannot be compared with or written to %s", len(out.Skipped), dir)
	}
	if err := refuseLinks(disk, dir); err != nil {
		return nil, nil, err
	}
	onDisk, err := disk.Files(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	old, err := ReadIndex(disk, dir)
	if err != nil {
		return nil, nil, err
	}
	written := map[string]bool{render.IndexPath: true}
	if old != nil {
		for _, f := range old.Files {
			written[f] = true
		}
	}
	rendered := out.ByPath()
	present := make(map[string]bool, len(onDisk))
	ch := &Changes{}
	var both []string
	for _, p := range onDisk {
		present[p] = true
		_, ok := rendered[p]
		switch {
		case !ok && written[p]:
			ch.Removed = append(ch.Removed, p)
		case !ok:
			ch.Foreign = append(ch.Foreign, p)
		default:
			both = append(both, p)
		}
	}
	same, err := sameOnDisk(disk, dir, both, rendered)
	if err != nil {
		return nil, nil, err
	}
	for i, p := range both {
		if same[i] {
			ch.Unchanged = append(ch.Unchanged, p)
		} else {
			ch.Changed = append(ch.Changed, p)
		}
	}
	for _, a := range out.Artifacts {
		if !present[a.Path] {
			ch.Added = append(ch.Added, a.Path)
		}
	}
	for _, l := range [][]string{ch.Added, ch.Changed, ch.Removed, ch.Foreign, ch.Unchanged} {
		sort.Strings(l)
	}
	return ch, old, nil
}

// sameOnDisk reports, for each path, whether the file under dir holds
// exactly want[path].
func sameOnDisk(disk Disk, dir string, paths []string, want map[string][]byte) ([]bool, error) {
	contents, errs := ReadFiles(paths, func(p string) ([]byte, error) {
		return disk.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	})
	same := make([]bool, len(paths))
	for i, p := range paths {
		if errs[i] != nil {
			return nil, fmt.Errorf("reading %s: %w", p, errs[i])
		}
		same[i] = bytes.Equal(contents[i], want[p])
	}
	return same, nil
}

// ReadFiles reads paths with read, eight at a time: a fleet's tree has tens
// of thousands of files, and each read waits on the system (a cold page
// cache on the disk, a warm one on the kernel's copying, git objects on
// inflating). The i-th content or error is the i-th path's.
func ReadFiles(paths []string, read func(string) ([]byte, error)) ([][]byte, []error) {
	contents := make([][]byte, len(paths))
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				contents[i], errs[i] = read(paths[i])
			}
		}()
	}
	wg.Wait()
	return contents, errs
}

// LinksError refuses a deploy/ tree that holds symbolic links (or is one):
// regionctl writes only regular files, and a link could point outside the
// repository while its target's content passes every check.
type LinksError struct {
	Dir   string
	Links []string
}

func (e *LinksError) Error() string {
	if len(e.Links) == 1 && e.Links[0] == "." {
		return fmt.Sprintf("%s is a symbolic link (or not a directory): regionctl writes deploy/ as a directory of the repository itself; replace the link with a directory (or remove it and render)", e.Dir)
	}
	return fmt.Sprintf("%s holds %d symbolic links (or other non-regular files), which regionctl never writes:\n  %s\nremove them and render again",
		e.Dir, len(e.Links), strings.Join(e.Links, "\n  "))
}

func refuseLinks(disk Disk, dir string) error {
	links, err := disk.Links(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(links) > 0 {
		sort.Strings(links)
		return &LinksError{Dir: dir, Links: links}
	}
	return nil
}

// ReadIndex reads the index.json of the tree at dir; nil when there is none.
func ReadIndex(disk Disk, dir string) (*render.Index, error) {
	p := filepath.Join(dir, render.IndexPath)
	ok, err := disk.Exists(p)
	if err != nil || !ok {
		return nil, err
	}
	b, err := disk.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	idx, err := render.ParseIndex(b)
	if err != nil {
		return nil, fmt.Errorf("%s is not an index regionctl wrote: %w", p, err)
	}
	return idx, nil
}

// ForeignFilesError refuses a write that would drop files regionctl did not
// write.
type ForeignFilesError struct {
	Dir   string
	Files []string
}

func (e *ForeignFilesError) Error() string {
	return fmt.Sprintf("%s holds %d files regionctl did not write:\n  %s\nmove them out of %s (it is rewritten on every render) or rerun with --prune-foreign to delete them",
		e.Dir, len(e.Files), strings.Join(e.Files, "\n  "), e.Dir)
}

// Options configure Write.
type Options struct {
	// PruneForeign deletes files regionctl did not write instead of
	// refusing to render.
	PruneForeign bool
	// LockWait is how long to wait for another render that holds the tree;
	// Waiting, when set, is told once who that is.
	LockWait time.Duration
	Waiting  func(holder string)
}

// Write makes the tree at dir exactly out. Nothing is written when the tree
// is already clean. On any error dir is left as it was.
func Write(disk Disk, dir string, out *render.Output, opts Options) (*Changes, error) {
	release, err := lock(dir, opts.LockWait, opts.Waiting)
	if err != nil {
		return nil, err
	}
	defer release()
	work := filepath.Join(filepath.Dir(filepath.Clean(dir)), WorkDir)
	if err := removeStale(disk, dir, work); err != nil {
		return nil, err
	}
	ch, _, err := Plan(disk, dir, out)
	if err != nil {
		return nil, err
	}
	if len(ch.Foreign) > 0 && !opts.PruneForeign {
		return ch, &ForeignFilesError{Dir: dir, Files: ch.Foreign}
	}
	if ch.Clean() {
		return ch, nil
	}
	stage, err := disk.MkdirTemp(work, stagingPattern)
	if err != nil {
		return nil, fmt.Errorf("creating a staging directory in %s: %w", work, err)
	}
	// MkdirTemp makes it 0700; deploy/ gets the mode a directory gets.
	if err := os.Chmod(stage, 0o777&^umask()); err != nil {
		_ = disk.RemoveAll(stage)
		return nil, fmt.Errorf("setting the mode of %s: %w", stage, err)
	}
	if err := build(disk, dir, stage, out, ch); err != nil {
		_ = disk.RemoveAll(stage)
		return nil, err
	}
	exists, err := disk.Exists(dir)
	if err == nil {
		if exists {
			err = disk.Exchange(stage, dir)
		} else {
			err = disk.Rename(stage, dir)
		}
	}
	if err != nil {
		_ = disk.RemoveAll(stage)
		return nil, fmt.Errorf("replacing %s: %w", dir, err)
	}
	if exists {
		// stage now holds the previous tree.
		if err := disk.RemoveAll(stage); err != nil {
			return ch, fmt.Errorf("%s was written, but the previous tree left in %s could not be removed: %w", dir, stage, err)
		}
	}
	return ch, nil
}

// build writes the staging tree: unchanged files are hard links to the
// current ones, the rest are written. Directories are filled in parallel,
// one writer a directory at a time: creating files is kernel work that a
// second core shares.
func build(disk Disk, dir, stage string, out *render.Output, ch *Changes) error {
	unchanged := map[string]bool{}
	for _, p := range ch.Unchanged {
		unchanged[p] = true
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	// Each writer makes a directory and then fills it, as cp -r does:
	// writers creating files in one directory wait on its lock (and, on
	// ext4, search the same inode table), which cost more system time
	// than a second writer saves.
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	work := make(chan []render.Artifact)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for arts := range work {
				if err := disk.MkdirAll(filepath.Join(stage, filepath.FromSlash(path.Dir(arts[0].Path)))); err != nil {
					fail(fmt.Errorf("writing %s: %w", arts[0].Path, err))
					continue
				}
				for _, a := range arts {
					target := filepath.Join(stage, filepath.FromSlash(a.Path))
					if unchanged[a.Path] {
						if err := disk.Link(filepath.Join(dir, filepath.FromSlash(a.Path)), target); err == nil {
							continue
						}
					}
					if err := disk.WriteFile(target, a.Bytes); err != nil {
						fail(fmt.Errorf("writing %s: %w", a.Path, err))
						break
					}
				}
			}
		}()
	}
	arts := out.Artifacts
	for len(arts) > 0 {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		n := 1
		for n < len(arts) && path.Dir(arts[n].Path) == path.Dir(arts[0].Path) {
			n++
		}
		work <- arts[:n]
		arts = arts[n:]
	}
	close(work)
	wg.Wait()
	return firstErr
}
