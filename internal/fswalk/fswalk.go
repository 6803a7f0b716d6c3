// Package fswalk walks a directory tree with a few walkers at once: the
// time of a walk of a large tree (deploy/ at fleet scale) goes to stat
// calls, which run side by side.
package fswalk

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/regionctl/regionctl/internal/par"
)

// Workers is how many walkers Walk runs.
const Workers = 4

// Walk calls fn for every entry under top that is not a directory (links
// are not followed), with its slash-separated path under top and the
// number of the walker that found it (0 to Workers; fn runs concurrently
// for different walkers, never for one). The directories depth levels
// down are shared out among the walkers; what lies above them walker 0
// takes first. The first error ends the walk and is returned.
func Walk(top string, depth int, fn func(walker int, rel string, d fs.DirEntry) error) error {
	dirs := []string{""}
	for level := 0; level < depth; level++ {
		var next []string
		for _, rel := range dirs {
			entries, err := os.ReadDir(filepath.Join(top, filepath.FromSlash(rel)))
			if err != nil {
				return err
			}
			for _, e := range entries {
				p := path.Join(rel, e.Name())
				if e.IsDir() {
					next = append(next, p)
				} else if err := fn(0, p, e); err != nil {
					return err
				}
			}
		}
		dirs = next
	}
	errs := make([]error, len(dirs))
	par.Workers(Workers, len(dirs), func(w, i int) {
		errs[i] = filepath.WalkDir(filepath.Join(top, filepath.FromSlash(dirs[i])), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(top, p)
			if err != nil {
				return err
			}
			return fn(w+1, filepath.ToSlash(rel), d)
		})
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
