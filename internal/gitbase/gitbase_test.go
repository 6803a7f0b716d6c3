package gitbase_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/config"
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

	r, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A directory inside the repository reads every tree as it sees it.
	sub, err := gitbase.Open(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := sub.Commit("HEAD"); err != nil {
		t.Fatal(err)
	} else if subFS, err := sub.FS(c); err != nil {
		t.Fatal(err)
	} else if err := fstest.TestFS(subFS, "global/a.yaml", "clusters/us-east-1/m.yaml"); err != nil {
		t.Fatalf("the tree as config/ sees it: %v", err)
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
	dirty, err := r.Dirty(c, dir, "config")
	if err != nil || len(dirty) != 2 || dirty[0] != "config/global/a.yaml" || dirty[1] != "config/global/new.yaml" {
		t.Errorf("dirty = %v, %v", dirty, err)
	}
	// Changed finds the same as git status does (the index vouches for
	// m.yaml; a.yaml, written as the index was, is read).
	os.Remove(filepath.Join(dir, "README.md"))
	changed, err := r.Changed(c, dir, "config", "charts")
	if err != nil || strings.Join(changed, " ") != "config/global/a.yaml config/global/new.yaml" {
		t.Errorf("changed = %v, %v", changed, err)
	}
	os.Remove(filepath.Join(dir, "config/clusters/us-east-1/m.yaml"))
	if changed, err = r.Changed(c, dir, "config"); err != nil || strings.Join(changed, " ") != "config/clusters/us-east-1/m.yaml config/global/a.yaml config/global/new.yaml" {
		t.Errorf("changed after a deletion = %v, %v", changed, err)
	}
	// A tree tells a file's blob hash without reading it; a directory or
	// a missing file has none.
	hasher := fsys.(config.BlobHasher)
	if h, ok := hasher.BlobHash("config/global/a.yaml"); !ok || plumbing.Hash(h) != plumbing.ComputeHash(plumbing.BlobObject, []byte("x: 1\n")) {
		t.Errorf("BlobHash(a.yaml) = %x, %v: want the committed blob's", h, ok)
	}
	for _, p := range []string{"config/global", "config/global/new.yaml", "../x", "config"} {
		if _, ok := hasher.BlobHash(p); ok {
			t.Errorf("BlobHash(%s) is a file's", p)
		}
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

// A value's soak starts when it reached main: a line written on a branch
// three days before its merge dates from the merge; a line only on a branch
// has not reached main at all.
func TestBlameDatesFromReachingMain(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	run := func(date string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("2026-11-01T09:00:00Z", "init", "-q", "-b", "main")
	write("sector.yaml", "soak: 24h\nversion: \"1.30\"\n")
	run("2026-11-01T09:00:00Z", "add", "-A")
	run("2026-11-01T09:00:00Z", "commit", "-q", "-m", "base")
	run("2026-11-01T10:00:00Z", "checkout", "-q", "-b", "bump")
	write("sector.yaml", "soak: 24h\nversion: \"1.31\"\n")
	run("2026-11-01T10:00:00Z", "commit", "-q", "-am", "bump on a branch")
	run("2026-11-02T09:00:00Z", "checkout", "-q", "main")
	write("other.yaml", "x: 1\n")
	run("2026-11-02T09:00:00Z", "add", "-A")
	run("2026-11-02T09:00:00Z", "commit", "-q", "-m", "meanwhile on main")
	run("2026-11-04T09:00:00Z", "merge", "-q", "--no-ff", "-m", "merge bump", "bump")
	run("2026-11-05T09:00:00Z", "checkout", "-q", "-b", "unmerged")
	write("other.yaml", "x: 2\n")
	run("2026-11-05T09:00:00Z", "commit", "-q", "-am", "only on a branch")

	repo, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	main, err := repo.Commit("main")
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time { d, _ := time.Parse(time.RFC3339, s); return d }

	if _, when, ok := repo.Blamer(head, dir).Blame("sector.yaml", 2); !ok || !when.Equal(day("2026-11-01T10:00:00Z")) {
		t.Errorf("without the mainline: %v %v, want the branch commit's time", when, ok)
	}
	b := repo.Blamer(head, dir).WithMainline(main)
	if _, when, ok := b.Blame("sector.yaml", 2); !ok || !when.Equal(day("2026-11-04T09:00:00Z")) {
		t.Errorf("the bump reached main at %v (%v), want the merge's time", when.UTC(), ok)
	}
	if _, when, ok := b.Blame("sector.yaml", 1); !ok || !when.Equal(day("2026-11-01T09:00:00Z")) {
		t.Errorf("a line committed on main: %v (%v), want its own time", when.UTC(), ok)
	}
	if _, when, ok := b.Blame("other.yaml", 1); ok {
		t.Errorf("a line only on a branch reached main at %v", when)
	}
}
