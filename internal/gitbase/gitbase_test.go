package gitbase_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/gitbase"
)

func TestCommitTreeIsAnFS(t *testing.T) {
	dir := t.TempDir()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"config/global/a.yaml":             "x: 1\n",
		"config/clusters/us-east-1/m.yaml": "type: management\n",
		"README.md":                        "hi\n",
	}
	for p, s := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
	wt, _ := g.Worktree()
	wt.AddWithOptions(&git.AddOptions{All: true})
	if _, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@e", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	// Change the worktree after the commit: the FS must not see it.
	os.WriteFile(filepath.Join(dir, "config/global/a.yaml"), []byte("x: 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "config/global/new.yaml"), []byte("y: 1\n"), 0o644)

	r, err := gitbase.Open(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := r.FS(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(fsys, "config/global/a.yaml", "config/clusters/us-east-1/m.yaml", "README.md"); err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(fsys, "config/global/a.yaml")
	if err != nil || string(b) != "x: 1\n" {
		t.Errorf("read %q, %v: want the committed content", b, err)
	}
	if _, err := fs.Stat(fsys, "config/global/new.yaml"); err == nil {
		t.Error("an uncommitted file is visible in the commit's tree")
	}
	dirty, err := gitbase.Dirty(c, dir, "config")
	if err != nil || len(dirty) != 2 || dirty[0] != "config/global/a.yaml" || dirty[1] != "config/global/new.yaml" {
		t.Errorf("dirty = %v, %v", dirty, err)
	}
}

func TestCommitPastTheFirst(t *testing.T) {
	dir := t.TempDir()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, _ := g.Worktree()
	if _, err := wt.Add("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit("one", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0)}}); err != nil {
		t.Fatal(err)
	}
	r, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("HEAD~1"); err == nil || !strings.Contains(err.Error(), "the history has no such commit") {
		t.Fatalf("HEAD~1 of a one-commit history: %v", err)
	}
}
