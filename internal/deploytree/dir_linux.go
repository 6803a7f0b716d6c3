package deploytree

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/regionctl/regionctl/internal/fswalk"
)

// OpenDir opens the directory name, never through a link, as a
// descriptor.
func (OS) OpenDir(name string) (Dir, error) { return openFdDir(unix.AT_FDCWD, name, name) }

// ReadFile reads name with the system's calls alone: package os would
// try to register each file with its poller (an epoll_ctl that fails for
// a regular file and four fcntl calls around it), which is most of the
// system calls of a read of deploy/'s files. Links are not followed.
func (OS) ReadFile(name string) ([]byte, fswalk.Stat, error) {
	var fd int
	err := noEINTR(func() (err error) {
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, fswalk.Stat{}, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	st, err := fstat(fd)
	if err != nil {
		return nil, fswalk.Stat{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	// The size read must be the size stat'ed: a file that grows or
	// shrinks while it is read has no one content.
	b := make([]byte, st.Size)
	for n := 0; n < len(b); {
		var m int
		err := noEINTR(func() (err error) { m, err = unix.Read(fd, b[n:]); return err })
		if err != nil {
			return nil, fswalk.Stat{}, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if m == 0 {
			return nil, fswalk.Stat{}, &fs.PathError{Op: "read", Path: name, Err: io.ErrUnexpectedEOF}
		}
		n += m
	}
	return b, st, nil
}

// fdDir is a directory open at fd; name is its path, for messages.
type fdDir struct {
	fd   int
	name string
}

func openFdDir(at int, name, path string) (Dir, error) {
	var fd int
	err := noEINTR(func() (err error) {
		fd, err = unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &fdDir{fd: fd, name: path}, nil
}

func (d *fdDir) path(name string) string { return filepath.Join(d.name, name) }

func (d *fdDir) Mkdir(name string) (Dir, error) {
	if err := noEINTR(func() error { return unix.Mkdirat(d.fd, name, dirMode) }); err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: d.path(name), Err: err}
	}
	return openFdDir(d.fd, name, d.path(name))
}

func (d *fdDir) Open(name string) (Dir, error) { return openFdDir(d.fd, name, d.path(name)) }

func (d *fdDir) WriteFile(name string, data []byte) (fswalk.Stat, error) {
	var fd int
	err := noEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
		return err
	})
	if err != nil {
		return fswalk.Stat{}, &fs.PathError{Op: "open", Path: d.path(name), Err: err}
	}
	st, err := writeAll(fd, data)
	// A close that fails (a network file system reporting a failed
	// write late) fails the write.
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fswalk.Stat{}, &fs.PathError{Op: "write", Path: d.path(name), Err: err}
	}
	return st, nil
}

// writeAll writes data to fd and stats it.
func writeAll(fd int, data []byte) (fswalk.Stat, error) {
	for n := 0; n < len(data); {
		var m int
		err := noEINTR(func() (err error) { m, err = unix.Write(fd, data[n:]); return err })
		if err != nil {
			return fswalk.Stat{}, err
		}
		if m == 0 {
			return fswalk.Stat{}, io.ErrShortWrite
		}
		n += m
	}
	return fstat(fd)
}

func (d *fdDir) Link(oldname, name string) error {
	if err := noEINTR(func() error { return unix.Linkat(unix.AT_FDCWD, oldname, d.fd, name, 0) }); err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: d.path(name), Err: err}
	}
	return nil
}

func (d *fdDir) Close() error { return unix.Close(d.fd) }

// fstat is the size and modification time of the regular file open at fd.
func fstat(fd int) (fswalk.Stat, error) {
	var st unix.Stat_t
	if err := noEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return fswalk.Stat{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fswalk.Stat{}, errNotRegular
	}
	sec, nsec := st.Mtim.Unix()
	return fswalk.Stat{Size: st.Size, MTime: sec*1e9 + nsec}, nil
}

// noEINTR calls fn again while a signal interrupts it, as package os does.
func noEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}
