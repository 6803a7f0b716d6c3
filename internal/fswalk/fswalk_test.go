package fswalk

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Walk finds every entry that is not a directory, at every depth, once,
// links included and not followed; one walker's calls never overlap.
func TestWalkFindsEachFileOnce(t *testing.T) {
	top := t.TempDir()
	var want []string
	for _, p := range []string{"index.json", "a/x.yaml", "a/b/y.yaml", "a/b/c/z.yaml", "d/e/f/g/h.yaml", "d/e/i.yaml", "j/k.yaml"} {
		full := filepath.Join(top, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if err := os.Symlink("/etc", filepath.Join(top, "a", "b", "link")); err != nil {
		t.Fatal(err)
	}
	want = append(want, "a/b/link")
	sort.Strings(want)
	var mu sync.Mutex
	var got []string
	busy := make([]bool, Workers+1)
	err := Walk(top, 2, func(w int, rel string, _ Entry) error {
		mu.Lock()
		if busy[w] {
			t.Errorf("walker %d called twice at once", w)
		}
		busy[w] = true
		got = append(got, rel)
		mu.Unlock()
		mu.Lock()
		busy[w] = false
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("walked\n %v\nwant\n %v", got, want)
	}
	if err := Walk(filepath.Join(top, "missing"), 2, func(int, string, Entry) error { return nil }); err == nil {
		t.Error("a missing top walked")
	}
}

// TestWalkIsWalkDirs holds Walk (on Linux its own getdents and fstatat
// walk) to the standard library's: every path filepath.WalkDir finds that
// is not a directory, once, with the type, size and modification time
// os.Lstat gives it. The tree holds what a walk meets: regular files of
// many sizes and times to the nanosecond, links to a file, to a directory
// and to nothing, a named pipe, empty directories, deep nesting, names
// with spaces, newlines and non-ASCII letters, and a directory of 3,000
// long names that getdents reads in many calls. Walked from every depth.
func TestWalkIsWalkDirs(t *testing.T) {
	top := t.TempDir()
	write := func(p string, size int, mtime time.Time) {
		full := filepath.Join(top, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC)
	for i, p := range []string{"index.json", "central/a.json", "clusters/x/eu-west-1/mc01/tfvars.json",
		"clusters/x/eu-west-1/mc01/argocd/app.yaml", "clusters/x/eu-west-1/mc02/iam/a b.json",
		"clusters/y/us-east-1/mc01/line\nbreak.json", "clusters/y/us-east-1/mc01/ünïcödé.yaml",
		"clusters/y/us-east-1/mc01/" + strings.Repeat("d/", 20) + "deep.yaml", "top-level-file", "clusters/file-at-depth-1"} {
		write(p, i*97, base.Add(time.Duration(i)*time.Nanosecond*123457))
	}
	write("clusters/y/us-east-1/mc01/line\nbreak.json", 1, base)
	for i := range 3000 {
		write(fmt.Sprintf("clusters/z/many/%s-%04d.json", strings.Repeat("long-name-", 8), i), i%13, base.Add(time.Duration(i)*time.Second))
	}
	for _, d := range []string{"clusters/empty", "clusters/x/empty/deeper", "empty-top"} {
		if err := os.MkdirAll(filepath.Join(top, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"clusters/x/to-file": "eu-west-1/mc01/tfvars.json", "clusters/x/to-dir": "eu-west-1", "clusters/x/eu-west-1/dangling": "nowhere", "link-at-top": "clusters"} {
		if err := os.Symlink(target, filepath.Join(top, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(top, "clusters", "x", "eu-west-1", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The standard library's walk: what Walk must find.
	want := map[string]Entry{}
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		e := Entry{Type: info.Mode().Type()}
		if info.Mode().IsRegular() {
			e.Size, e.MTime = info.Size(), info.ModTime().UnixNano()
		}
		want[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 3014 {
		t.Fatalf("the tree holds %d entries", len(want))
	}
	for depth := range 5 {
		var mu sync.Mutex
		got := map[string]Entry{}
		err := Walk(top, depth, func(_ int, rel string, e Entry) error {
			mu.Lock()
			defer mu.Unlock()
			if _, twice := got[rel]; twice {
				t.Errorf("depth %d: %s found twice", depth, rel)
			}
			got[rel] = e
			return nil
		})
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		for rel, e := range want {
			if g, ok := got[rel]; !ok {
				t.Errorf("depth %d: %q not found", depth, rel)
			} else if g != e {
				t.Errorf("depth %d: %q is %+v, Lstat says %+v", depth, rel, g, e)
			}
		}
		for rel := range got {
			if _, ok := want[rel]; !ok {
				t.Errorf("depth %d: %q found, and filepath.WalkDir finds no such file", depth, rel)
			}
		}
	}
	// The walk the Linux walk stands in for finds the same.
	got := map[string]Entry{}
	if err := walkDirUnder(top, "", func(rel string, e Entry) error { got[rel] = e; return nil }); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("walkDirUnder finds %d entries, not the %d filepath.WalkDir does", len(got), len(want))
	}
}

// A top that is missing or not a directory fails the walk from every
// depth, naming it: at depth 0 the walkers open it themselves.
func TestWalkFailsOnATopItCannotOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, top := range []string{filepath.Join(dir, "missing"), file} {
		for depth := range 3 {
			err := Walk(top, depth, func(int, string, Entry) error { return nil })
			if err == nil || !strings.Contains(err.Error(), top) {
				t.Errorf("%s from depth %d: %v", top, depth, err)
			}
		}
	}
}
