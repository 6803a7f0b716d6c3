package fswalk

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
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
	err := Walk(top, 2, func(w int, rel string, d fs.DirEntry) error {
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
	if err := Walk(filepath.Join(top, "missing"), 2, func(int, string, fs.DirEntry) error { return nil }); err == nil {
		t.Error("a missing top walked")
	}
}
