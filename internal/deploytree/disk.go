package deploytree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/regionctl/regionctl/internal/fswalk"
)

// Disk is the file system the writer works on. OS is the real one; tests
// wrap it to inject failures such as a full disk.
type Disk interface {
	// ReadFile reads a regular file, not through a link, and returns its
	// size and modification time as read.
	ReadFile(name string) ([]byte, fswalk.Stat, error)
	// Files lists the regular files under root as slash-separated paths
	// relative to it; a missing root has none.
	Files(root string) ([]string, error)
	MkdirTemp(dir, pattern string) (string, error)
	// OpenDir opens a directory, not through a link, for making files
	// and directories in it.
	OpenDir(name string) (Dir, error)
	// Exchange swaps two directories atomically.
	Exchange(a, b string) error
	Rename(oldname, newname string) error
	RemoveAll(name string) error
	Exists(name string) (bool, error)
	// Links lists what under root is neither a regular file nor a
	// directory (symbolic links above all), slash-separated and relative
	// to it; root itself when it is one.
	Links(root string) ([]string, error)
}

// OS is the operating system's file system.
type OS struct{}

func (OS) Files(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		} else if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel)) // symlinks and others count as foreign files
		}
		return nil
	})
	return out, err
}

func (OS) MkdirTemp(dir, pattern string) (string, error) { return os.MkdirTemp(dir, pattern) }
func (OS) Rename(oldname, newname string) error          { return os.Rename(oldname, newname) }
func (OS) RemoveAll(name string) error                   { return os.RemoveAll(name) }
func (OS) Exists(name string) (bool, error) {
	_, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (OS) Links(root string) ([]string, error) {
	st, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{"."}, nil
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// Exchange swaps a and b atomically where the system can (renameat2 with
// RENAME_EXCHANGE on Linux, renamex_np with RENAME_SWAP on macOS). Elsewhere,
// or where the file system lacks it, it falls back to two renames, undoing
// the first when the second fails: b is briefly absent, never half-written.
func (d OS) Exchange(a, b string) error {
	if err := exchange(a, b); !errors.Is(err, errNoExchange) {
		return err
	}
	return renameExchange(a, b)
}

// errNoExchange says the system or file system cannot swap atomically.
var errNoExchange = errors.New("no atomic exchange here")

func renameExchange(a, b string) error {
	aside := b + ".old"
	if err := os.Rename(b, aside); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		_ = os.Rename(aside, b)
		return err
	}
	return os.Rename(aside, a)
}
