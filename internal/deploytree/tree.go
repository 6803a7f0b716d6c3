package deploytree

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/par"
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

// Plan compares out with the tree at dir, writing nothing. It also
// returns the index of the render that wrote the tree, if any.
func Plan(disk Disk, dir string, out *render.Output) (*Changes, *render.Index, error) {
	s, err := Compare(disk, dir)
	if err != nil {
		return nil, nil, err
	}
	ch, err := s.Finish(out)
	if err != nil {
		return nil, nil, err
	}
	return ch, s.Index(), nil
}

// ReadFiles reads paths with read, eight at a time: a fleet's tree has tens
// of thousands of files, and each read waits on the system (a cold page
// cache on the disk, a warm one on the kernel's copying, git objects on
// inflating). The i-th content or error is the i-th path's.
func ReadFiles(paths []string, read func(string) ([]byte, error)) ([][]byte, []error) {
	contents := make([][]byte, len(paths))
	errs := make([]error, len(paths))
	par.Workers(8, len(paths), func(_, i int) { contents[i], errs[i] = read(paths[i]) })
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
	b, _, err := disk.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	idx, err := render.ParseIndex(b)
	if err != nil {
		return nil, &IndexError{Path: p, Err: err}
	}
	return idx, nil
}

// IndexError is an index.json regionctl cannot read as one it wrote.
type IndexError struct {
	Path string
	Err  error
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("%s is not an index regionctl wrote: %v", e.Path, e.Err)
}
func (e *IndexError) Unwrap() error { return e.Err }

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
