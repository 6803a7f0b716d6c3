package diskfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// linuxFS opens each file with the system's open and hands the descriptor
// to os.NewFile: os.Open registers every file with the runtime's poller
// (four fcntl calls and an epoll_ctl that fails for a regular file, on
// top of the open and the close), where os.NewFile of a blocking
// descriptor asks one fcntl. Everything but Open and ReadFile is
// os.DirFS's own.
type linuxFS struct {
	osFS
	root string
}

func newFS(root string) fs.FS { return linuxFS{dirOf(root), root} }

// Open is os.DirFS's Open: the same validation of name, the same file
// (named by its full path), the same *fs.PathError naming name.
func (d linuxFS) Open(name string) (fs.File, error) {
	full, err := d.join(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return open(name, full)
}

// open opens full (name's path under the root) read-only, as a file of
// os.NewFile's: no poller.
func open(name, full string) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(full, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), full), nil
}

// ReadFile is os.DirFS's ReadFile (os.ReadFile of the full path), with
// the file opened as Open opens it.
func (d linuxFS) ReadFile(name string) ([]byte, error) {
	full, err := d.join(name)
	if err != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: err}
	}
	f, err := open(name, full)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int
	if st, err := f.Stat(); err == nil {
		size = int(st.Size())
	}
	// One byte more than the size, so that the read that finds the end
	// needs no larger buffer, and at least 512 (as os.ReadFile: a file of
	// /proc claims no size).
	b := make([]byte, 0, max(size+1, 512))
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			if e, ok := err.(*fs.PathError); ok {
				e.Path = name
			}
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// join is os.DirFS's: name must be valid (fs.ValidPath) and hold no NUL.
func (d linuxFS) join(name string) (string, error) {
	if d.root == "" {
		return "", errors.New("os: DirFS with empty root")
	}
	if !fs.ValidPath(name) || strings.IndexByte(name, 0) >= 0 {
		return "", os.ErrInvalid
	}
	if strings.HasSuffix(d.root, "/") {
		return d.root + name, nil
	}
	return d.root + "/" + name, nil
}
