package deploytree

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/fswalk"
)

// TestDirsAgree holds the directory the writer uses here (on Linux a
// descriptor) to the one it uses elsewhere (its path, through package
// os): the same files, modes and stats, and the same refusals: a name that
// exists (a file, a directory, a link, a dangling link), a directory that
// is a link, a link to read.
func TestDirsAgree(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	type result struct {
		Files map[string]string
		Modes map[string]fs.FileMode
		Errs  []string
	}
	run := func(open func(string) (Dir, error)) result {
		top := t.TempDir()
		if err := os.WriteFile(filepath.Join(top, "outside"), []byte("outside\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := open(top)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var errs []string
		note := func(what string, err error) {
			if err == nil {
				errs = append(errs, what+": ok")
				return
			}
			// The kind of refusal, not its wording.
			for _, e := range []error{fs.ErrExist, fs.ErrNotExist, syscall.ELOOP, syscall.ENOTDIR} {
				if errors.Is(err, e) {
					errs = append(errs, what+": "+e.Error())
					return
				}
			}
			errs = append(errs, what+": "+err.Error())
		}
		sub, err := d.Mkdir("sub")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		st, err := sub.WriteFile("a.yaml", []byte("a: 1\n"))
		note("write", err)
		if info, err := os.Lstat(filepath.Join(top, "sub", "a.yaml")); err != nil || st != (fswalk.Stat{Size: info.Size(), MTime: info.ModTime().UnixNano()}) {
			t.Errorf("write's stat %+v, lstat %+v (%v)", st, info, err)
		}
		_, err = sub.WriteFile("empty.yaml", nil)
		note("write empty", err)
		_, err = sub.WriteFile("a.yaml", []byte("again\n"))
		note("write over a file", err)
		_, err = d.WriteFile("sub", []byte("x\n"))
		note("write over a directory", err)
		_, err = d.Mkdir("sub")
		note("mkdir over a directory", err)
		if err := os.Symlink(filepath.Join(top, "outside"), filepath.Join(top, "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(top, "nowhere"), filepath.Join(top, "dangling")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(top, filepath.Join(top, "dirlink")); err != nil {
			t.Fatal(err)
		}
		_, err = d.WriteFile("link", []byte("through\n"))
		note("write through a link", err)
		_, err = d.WriteFile("dangling", []byte("through\n"))
		note("write through a dangling link", err)
		_, err = d.Open("dirlink")
		note("open a directory link", err)
		_, err = d.Open("outside")
		note("open a file as a directory", err)
		note("link", sub.Link(filepath.Join(top, "outside"), "linked"))
		note("link over a file", sub.Link(filepath.Join(top, "outside"), "a.yaml"))
		r, err := d.Open("sub")
		note("open", err)
		if r != nil {
			_, err := r.WriteFile("b.yaml", bytes.Repeat([]byte("b"), 1<<20))
			note("write 1 MiB", err)
			r.Close()
		}
		res := result{Files: map[string]string{}, Modes: map[string]fs.FileMode{}, Errs: errs}
		_ = filepath.WalkDir(top, func(p string, e fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(top, p)
			info, _ := os.Lstat(p)
			res.Modes[rel] = info.Mode()
			if info.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				res.Files[rel] = fmt.Sprintf("%d bytes %x", len(b), b[:min(len(b), 8)])
			}
			return nil
		})
		return res
	}
	byPath := run(openPathDir)
	if diff := cmp.Diff(byPath, run(OS{}.OpenDir)); diff != "" {
		t.Errorf("(-by path +OS):\n%s", diff)
	}
	// The writer's refusals themselves, whichever it is.
	want := []string{"write: ok", "write empty: ok", "write over a file: file already exists", "write over a directory: file already exists",
		"mkdir over a directory: file already exists", "write through a link: file already exists", "write through a dangling link: file already exists"}
	if diff := cmp.Diff(want, byPath.Errs[:len(want)]); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	if got := byPath.Files["outside"]; got != fmt.Sprintf("%d bytes %x", 8, "outside\n") {
		t.Errorf("the file a link points to changed: %s", got)
	}
}
