package gitbase_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/gitbase"
)

// WorktreeHashes trusts the index as git status does, and only there: a
// file whose size and time are the index's, written before the index, is
// not read (a same-size edit that keeps the time is invisible, as it is to
// git); any other file is read. Links are not followed.
func TestWorktreeHashesTrustTheIndexOnlyWhereGitWould(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@e"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(p, s string, when time.Time) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, when, when); err != nil {
			t.Fatal(err)
		}
	}
	blob := func(s string) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)) }
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	future := time.Now().Add(time.Hour)
	git("init", "-q")
	write("deploy/a.yaml", "a: 1\n", old)
	write("deploy/edited.yaml", "e: 1\n", old)
	write("deploy/racy.yaml", "r: 1\n", future)
	write("deploy/gone.yaml", "g: 1\n", old)
	write("secret.txt", "outside deploy/\n", old)
	git("add", "-A")
	git("commit", "-q", "-m", "c")

	// Same size, time kept: git status would not see it either.
	write("deploy/a.yaml", "a: 2\n", old)
	// Same size, new time: read.
	write("deploy/edited.yaml", "e: 2\n", time.Now().Add(-time.Minute))
	// Its time is the index's own or later: read, whatever the stat says.
	write("deploy/racy.yaml", "r: 2\n", future)
	write("deploy/new.yaml", "n: 1\n", old)
	if err := os.Remove(filepath.Join(dir, "deploy/gone.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.txt", filepath.Join(dir, "deploy/link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "deploy/fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}

	r, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.WorktreeHashes(dir, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]plumbing.Hash{
		"a.yaml":      blob("a: 1\n"),
		"edited.yaml": blob("e: 2\n"),
		"racy.yaml":   blob("r: 2\n"),
		"new.yaml":    blob("n: 1\n"),
		"link.yaml":   blob("../secret.txt"),
	}
	for p, h := range want {
		if got[p] != h {
			t.Errorf("%s: hash %s, want %s", p, got[p], h)
		}
	}
	if _, ok := got["gone.yaml"]; ok {
		t.Error("a deleted file has a hash")
	}
	if h, ok := got["fifo.yaml"]; !ok || h == blob("") {
		t.Errorf("a FIFO must be listed with a hash no file has, got %s %v", h, ok)
	}
	if len(got) != len(want)+1 {
		t.Errorf("got %d entries, want %d: %v", len(got), len(want)+1, got)
	}
	// From a subdirectory of the working tree, the same answer.
	sub, err := r.WorktreeHashes(filepath.Join(dir, "deploy", ".."), "deploy")
	if err != nil || sub["a.yaml"] != want["a.yaml"] {
		t.Errorf("through another path: %v %v", sub["a.yaml"], err)
	}
	// Once let go, the index is read again: a.yaml still comes from it.
	r.ReleaseIndex()
	again, err := r.WorktreeHashes(dir, "deploy")
	if err != nil || again["a.yaml"] != want["a.yaml"] || len(again) != len(got) {
		t.Errorf("after ReleaseIndex: a.yaml %v, %d entries, %v", again["a.yaml"], len(again), err)
	}
	// From a relative root, as `regionctl --root .` gives it.
	t.Chdir(filepath.Join(dir, "deploy"))
	rel, err := r.WorktreeHashes("..", "deploy")
	if err != nil || rel["a.yaml"] != want["a.yaml"] {
		t.Errorf("from a relative root: %v %v", rel["a.yaml"], err)
	}
	if none, err := r.WorktreeHashes(dir, "absent"); err != nil || len(none) != 0 {
		t.Errorf("a missing directory: %v %v", none, err)
	}
}
