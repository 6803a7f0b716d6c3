package fswalk

import (
	"encoding/binary"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// walkUnder calls fn for every entry under top/dir that is not a
// directory, with its slash-separated path under top. Each directory is
// opened relative to its parent's descriptor and its entries are read
// with getdents and stat'ed with fstatat relative to it: no path is
// looked up from the root again, no entry list sorted, no DirEntry made.
// A directory is opened with O_NOFOLLOW: a link swapped in for one fails
// the walk rather than being followed.
func walkUnder(top, dir string, fn func(rel string, e Entry) error) error {
	name := filepath.Join(top, filepath.FromSlash(dir))
	fd, err := openDir(unix.AT_FDCWD, name)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	w := &walker{top: top, fn: fn, buf: make([]byte, 16<<10)}
	return w.dir(fd, dir)
}

// walker is one walk under a directory: its buffer for getdents is read
// out before the walk goes down into a subdirectory.
type walker struct {
	top string
	fn  func(rel string, e Entry) error
	buf []byte
}

// The d_type values of a linux_dirent64.
const (
	dtUnknown = 0
	dtDir     = 4
	dtReg     = 8
	dtLink    = 10
)

// dir walks the directory open at fd, at rel under top, and closes fd.
func (w *walker) dir(fd int, rel string) error {
	defer unix.Close(fd)
	var subdirs []string
	for {
		var n int
		err := noEINTR(func() (err error) { n, err = unix.Getdents(fd, w.buf); return err })
		if err != nil {
			return w.pathError("getdents", rel, err)
		}
		if n <= 0 {
			break
		}
		for b := w.buf[:n]; len(b) > 0; {
			// linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type
			// (1), d_name (NUL-terminated, padded).
			if len(b) < 19 {
				return w.pathError("getdents", rel, unix.EIO)
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return w.pathError("getdents", rel, unix.EIO)
			}
			typ, raw := b[18], b[19:reclen]
			b = b[reclen:]
			end := 0
			for end < len(raw) && raw[end] != 0 {
				end++
			}
			name := string(raw[:end])
			if name == "." || name == ".." {
				continue
			}
			if typ == dtDir {
				subdirs = append(subdirs, name)
				continue
			}
			e, isDir, err := w.entry(fd, rel, name, typ)
			if err != nil {
				return err
			}
			if isDir {
				subdirs = append(subdirs, name)
				continue
			}
			if err := w.fn(join(rel, name), e); err != nil {
				return err
			}
		}
	}
	for _, name := range subdirs {
		sub, err := openDir(fd, name)
		if err != nil {
			return w.pathError("open", join(rel, name), err)
		}
		if err := w.dir(sub, join(rel, name)); err != nil {
			return err
		}
	}
	return nil
}

// entry stats name in the directory open at fd, whose d_type is typ: a
// regular file for its size and time, an unknown type for its type (a
// file system that gives none), anything else by its type alone. isDir
// says an entry of unknown type is a directory.
func (w *walker) entry(fd int, rel, name string, typ byte) (e Entry, isDir bool, err error) {
	if typ == dtLink {
		return Entry{Type: fs.ModeSymlink}, false, nil
	}
	if typ != dtReg && typ != dtUnknown {
		return Entry{Type: typeOf(dtMode(typ))}, false, nil
	}
	var st unix.Stat_t
	if err := noEINTR(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return Entry{}, false, w.pathError("lstat", join(rel, name), err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		sec, nsec := st.Mtim.Unix()
		return Entry{Size: st.Size, MTime: sec*1e9 + nsec}, false, nil
	case unix.S_IFDIR:
		return Entry{}, true, nil
	default:
		return Entry{Type: typeOf(st.Mode)}, false, nil
	}
}

// openDir opens the directory name in the directory open at dir (or
// the working directory: unix.AT_FDCWD), never through a link.
func openDir(dir int, name string) (int, error) {
	var fd int
	err := noEINTR(func() (err error) {
		fd, err = unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	return fd, err
}

// noEINTR calls fn again while a signal interrupts it, as package os does
// (a network or FUSE file system can be interrupted).
func noEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// join is name in the directory at rel ("" is top).
func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// dtMode is the S_IFMT bits of a d_type.
func dtMode(typ byte) uint32 { return uint32(typ) << 12 }

// typeOf is the fs.FileMode type bits of a stat mode, as os.Lstat gives
// them.
func typeOf(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

func (w *walker) pathError(op, rel string, err error) error {
	return &fs.PathError{Op: op, Path: filepath.Join(w.top, filepath.FromSlash(rel)), Err: err}
}
