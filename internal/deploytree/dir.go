package deploytree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/regionctl/regionctl/internal/fswalk"
)

// Dir is a directory of the staging tree, open for making what lies in it
// by name. On Linux it is a descriptor (dir_linux.go): each of a fleet's
// tens of thousands of files is created relative to its directory, as
// cp -r creates them, instead of by a path looked up from the root again,
// and without the poller registration package os tries for every file it
// opens. Elsewhere it is the directory's path (pathDir).
type Dir interface {
	// Mkdir makes the directory name in it and opens it; name must not
	// exist.
	Mkdir(name string) (Dir, error)
	// Open opens the directory name in it, never through a link.
	Open(name string) (Dir, error)
	// WriteFile creates the file name in it, which must not exist, with
	// data, and returns its size and modification time as written.
	WriteFile(name string, data []byte) (fswalk.Stat, error)
	// Link makes name in it a hard link to the file at the path oldname,
	// which is not followed if it is a link.
	Link(oldname, name string) error
	Close() error
}

// Modes of what the writer makes, less the umask.
const (
	dirMode  = 0o755
	fileMode = 0o644
)

var (
	errNotRegular = errors.New("not a regular file")
	errChanged    = errors.New("changed while it was read")
)

// pathDir is a Dir by its path: each call looks the path up again.
type pathDir string

func openPathDir(name string) (Dir, error) {
	info, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		// As the system refuses it (O_DIRECTORY|O_NOFOLLOW), a link too.
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	return pathDir(name), nil
}

func (d pathDir) path(name string) string { return filepath.Join(string(d), name) }

func (d pathDir) Mkdir(name string) (Dir, error) {
	if err := os.Mkdir(d.path(name), dirMode); err != nil {
		return nil, err
	}
	return pathDir(d.path(name)), nil
}

func (d pathDir) Open(name string) (Dir, error) { return openPathDir(d.path(name)) }

func (d pathDir) WriteFile(name string, data []byte) (fswalk.Stat, error) {
	f, err := os.OpenFile(d.path(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return fswalk.Stat{}, err
	}
	_, err = f.Write(data)
	var info fs.FileInfo
	if err == nil {
		info, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fswalk.Stat{}, err
	}
	return fswalk.Stat{Size: info.Size(), MTime: info.ModTime().UnixNano()}, nil
}

func (d pathDir) Link(oldname, name string) error { return os.Link(oldname, d.path(name)) }
func (d pathDir) Close() error                    { return nil }

// checkPath refuses a rendered path that is not a plain relative path of
// named components: one that climbs out (".."), starts at the root, or
// holds empty or "." components would put a file outside the tree, or
// twice in it under two names.
func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return fmt.Errorf("internal error: %q is not a path inside deploy/", p)
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("internal error: %q is not a path inside deploy/", p)
		}
	}
	return nil
}
