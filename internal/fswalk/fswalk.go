// Package fswalk walks a directory tree with a few walkers at once: the
// time of a walk of a large tree (deploy/ at fleet scale) goes to reading
// directories and stat calls, which run side by side.
package fswalk

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/regionctl/regionctl/internal/par"
)

// Workers is how many walkers Walk runs.
const Workers = 4

// Stat is a regular file's size and modification time (Unix
// nanoseconds), as a walk or the writer of a file found them.
type Stat struct {
	Size  int64
	MTime int64
}

// Entry is what a walk found at a path that is not a directory, as lstat
// gives it (a link is not followed).
type Entry struct {
	// Type is the type bits of its mode: 0 for a regular file,
	// fs.ModeSymlink for a link, other bits for anything else.
	Type fs.FileMode
	// Size and MTime (nanoseconds since the epoch) are a regular file's.
	Size, MTime int64
}

// ModTime is a regular file's modification time.
func (e Entry) ModTime() time.Time { return time.Unix(0, e.MTime) }

// Walk calls fn for every entry under top that is not a directory (links
// are not followed), with its slash-separated path under top and the
// number of the walker that found it (0 to Workers; fn runs concurrently
// for different walkers, never for one). The directories depth levels
// down are shared out among the walkers; what lies above them walker 0
// takes first. The first error ends the walk and is returned.
//
// On Linux each walker reads a directory through a descriptor of its own
// and stats its files relative to it (walk_linux.go), which is what the
// walk of a fleet's deploy/ costs; elsewhere it is filepath.WalkDir's walk
// and Lstat. TestWalkIsWalkDirs holds both to filepath.WalkDir and
// os.Lstat.
func Walk(top string, depth int, fn func(walker int, rel string, e Entry) error) error {
	dirs := []string{""}
	for level := 0; level < depth; level++ {
		var next []string
		for _, rel := range dirs {
			entries, err := os.ReadDir(filepath.Join(top, filepath.FromSlash(rel)))
			if err != nil {
				return err
			}
			for _, d := range entries {
				p := path.Join(rel, d.Name())
				if d.IsDir() {
					next = append(next, p)
					continue
				}
				e, err := entryOf(d)
				if err != nil {
					return err
				}
				if err := fn(0, p, e); err != nil {
					return err
				}
			}
		}
		dirs = next
	}
	errs := make([]error, len(dirs))
	par.Workers(Workers, len(dirs), func(w, i int) {
		errs[i] = walkUnder(top, dirs[i], func(rel string, e Entry) error { return fn(w+1, rel, e) })
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// entryOf is the Entry of d, a directory's entry that is not a directory.
func entryOf(d fs.DirEntry) (Entry, error) {
	if !d.Type().IsRegular() {
		return Entry{Type: d.Type()}, nil
	}
	info, err := d.Info()
	if err != nil {
		return Entry{}, err
	}
	if !info.Mode().IsRegular() {
		return Entry{Type: info.Mode().Type()}, nil
	}
	return Entry{Size: info.Size(), MTime: info.ModTime().UnixNano()}, nil
}

// walkDirUnder is walkUnder by filepath.WalkDir and Lstat: the walk where
// walk_linux.go's is not built, and its judge.
func walkDirUnder(top, dir string, fn func(rel string, e Entry) error) error {
	return filepath.WalkDir(filepath.Join(top, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(top, p)
		if err != nil {
			return err
		}
		e, err := entryOf(d)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), e)
	})
}
