package gitbase

import (
	"os"
	"path/filepath"
)

// FleetRoot finds the fleet repository's root from dir, as git finds its
// work tree from a subdirectory: dir itself when it holds configDir, else
// the nearest enclosing directory that is a git work tree's top (it holds
// .git) and holds configDir. It returns the root as a path relative to dir
// (so that file names printed from it still open from where the user
// stands) and whether one was found.
func FleetRoot(dir, configDir string) (string, bool) {
	if isDir(filepath.Join(dir, configDir)) {
		return dir, true
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for cur := abs; ; {
		if _, err := os.Lstat(filepath.Join(cur, ".git")); err == nil {
			// The work tree's top: the search stops here, found or not,
			// as git's does (a repository nested in another is its own).
			if !isDir(filepath.Join(cur, configDir)) {
				return "", false
			}
			rel, err := filepath.Rel(abs, cur)
			if err != nil {
				return "", false
			}
			return filepath.Join(dir, rel), true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false
		}
		cur = parent
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
