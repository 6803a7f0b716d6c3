// Package diskfs is os.DirFS with a cheaper open where the system allows
// one: the file system of the fleet's working tree, whose layer files
// every command reads (2,400 of them at 2,200 clusters).
package diskfs

import (
	"io/fs"
	"os"
)

// New returns the file system of the directory tree at root: os.DirFS's,
// with the same names, errors and optional interfaces (ReadFile, ReadDir,
// Stat, Lstat, ReadLink), only each file opened more cheaply on Linux
// (open_linux.go). Links are followed as os.DirFS follows them; Lstat and
// ReadLink see them.
func New(root string) fs.FS { return newFS(root) }

// The interfaces os.DirFS implements, which New's file system must too:
// a reader that asks for one (fs.Lstat, to refuse a link) would otherwise
// fall back on another call (fs.Stat, which follows it).
var (
	_ fs.ReadFileFS = osFS(nil)
	_ fs.ReadDirFS  = osFS(nil)
	_ fs.StatFS     = osFS(nil)
	_ fs.ReadLinkFS = osFS(nil)
)

// osFS is what os.DirFS returns, by the interfaces it implements.
type osFS interface {
	fs.ReadFileFS
	fs.ReadDirFS
	fs.StatFS
	fs.ReadLinkFS
}

// dirOf is os.DirFS(root) as an osFS.
func dirOf(root string) osFS { return os.DirFS(root).(osFS) }
