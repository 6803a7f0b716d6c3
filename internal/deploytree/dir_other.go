//go:build !linux

package deploytree

import (
	"io/fs"
	"os"

	"github.com/regionctl/regionctl/internal/fswalk"
)

// OpenDir opens the directory name, which must not be a link, by its path.
func (OS) OpenDir(name string) (Dir, error) { return openPathDir(name) }

// ReadFile reads name, which must be a regular file and not a link.
func (OS) ReadFile(name string) ([]byte, fswalk.Stat, error) {
	info, err := os.Lstat(name)
	if err != nil {
		return nil, fswalk.Stat{}, err
	}
	if !info.Mode().IsRegular() {
		return nil, fswalk.Stat{}, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fswalk.Stat{}, err
	}
	// The stat taken before the read stands for the content only if the
	// file kept its size.
	if int64(len(b)) != info.Size() {
		return nil, fswalk.Stat{}, &fs.PathError{Op: "read", Path: name, Err: errChanged}
	}
	return b, fswalk.Stat{Size: info.Size(), MTime: info.ModTime().UnixNano()}, nil
}
