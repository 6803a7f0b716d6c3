package gitbase_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	git := gitIn(t, dir)
	write := func(p, s string, when time.Time) {
		t.Helper()
		full := writeIn(t, dir, p, s)
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

// IndexBlobHashes gives a commit's listing of a directory from the index
// only when git's cached tree of that directory is the commit's: after a
// commit or a checkout; not once a file of it is staged, nor when HEAD
// moved away from what the index holds. It then agrees with the walk of
// the commit's trees.
func TestIndexBlobHashesOnlyWhenTheIndexHoldsTheCommitsTree(t *testing.T) {
	dir := t.TempDir()
	git := gitIn(t, dir)
	write := func(p, s string) { writeIn(t, dir, p, s) }
	listing := func() (map[string]plumbing.Hash, bool, map[string]plumbing.Hash) {
		t.Helper()
		repo, err := gitbase.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer repo.Close()
		head, err := repo.Commit("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		fromIndex, ok := repo.IndexBlobHashes(head, "deploy")
		walked, err := repo.BlobHashes(head, "deploy")
		if err != nil {
			t.Fatal(err)
		}
		return fromIndex, ok, walked
	}
	git("init", "-q")
	write("deploy/a.yaml", "a: 1\n")
	write("deploy/x/b.yaml", "b: 1\n")
	write("deploy/x/y/c.yaml", "c: 1\n")
	write("deploy2/d.yaml", "d: 1\n")
	write("other/e.yaml", "e: 1\n")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	fromIndex, ok, walked := listing()
	if !ok || len(fromIndex) != 3 || len(walked) != 3 {
		t.Fatalf("after a commit: %v %v, walked %v", ok, fromIndex, walked)
	}
	for p, h := range walked {
		if fromIndex[p] != h {
			t.Errorf("%s: the index gives %s, the commit %s", p, fromIndex[p], h)
		}
	}
	// A directory deeper down (a fleet in a subdirectory has its deploy/
	// there).
	repo, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Commit("HEAD")
	if nested, ok := repo.IndexBlobHashes(head, "deploy/x"); !ok || len(nested) != 2 || nested["y/c.yaml"] != walked["x/y/c.yaml"] {
		t.Errorf("deploy/x from the index: %v %v", ok, nested)
	}
	repo.Close()
	// A staged change of deploy/ drops its cached tree.
	write("deploy/x/b.yaml", "b: 2\n")
	git("add", "deploy/x/b.yaml")
	if _, ok, _ := listing(); ok {
		t.Error("the index was read with a staged change of deploy/")
	}
	// Committed, then HEAD moved back with the index kept: another tree.
	git("commit", "-q", "-m", "two")
	if _, ok, _ := listing(); !ok {
		t.Error("after the second commit the index was not read")
	}
	git("reset", "-q", "--soft", "HEAD~1")
	if _, ok, _ := listing(); ok {
		t.Error("the index was read while it holds another commit's tree")
	}
	// A checkout writes the cached tree again.
	git("reset", "-q", "--hard", "HEAD")
	if _, ok, _ := listing(); !ok {
		t.Error("after a checkout the index was not read")
	}
}

// gitIn runs git in dir as a test's committer, failing the test on error.
func gitIn(t *testing.T, dir string) func(args ...string) {
	return func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@e"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// writeIn writes s to p under dir, making its directories, and returns the
// file's full path.
func writeIn(t *testing.T, dir, p, s string) string {
	t.Helper()
	full := filepath.Join(dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return full
}

// TestChangedIsDirty holds Changed, which takes a commit's listing from the
// index where git's cached tree vouches for it and reads only what the
// index cannot vouch for, to Dirty, which walks the commit's trees and
// reads every file, in a repository git writes: unchanged, with a file
// edited, with a change staged (config/'s cached tree invalidated), a new
// file and a deleted one, from the repository's root and from a
// directory inside it.
func TestChangedIsDirty(t *testing.T) {
	dir := t.TempDir()
	git := gitIn(t, dir)
	git("init", "-q")
	for _, p := range []string{"fleet/config/global/a.yaml", "fleet/config/global/b.yaml", "fleet/config/clusters/r/m.yaml", "fleet/charts/x/Chart.yaml"} {
		writeIn(t, dir, p, p+"\n")
	}
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"fleet/config/global/a.yaml", "fleet/config/global/b.yaml", "fleet/config/clusters/r/m.yaml", "fleet/charts/x/Chart.yaml", ".git/index"} {
		// Older than the index, as a checkout long ago leaves them.
		os.Chtimes(filepath.Join(dir, p), old, old)
	}
	git("update-index", "--refresh")
	same := func(state string) {
		t.Helper()
		for _, root := range []string{dir, filepath.Join(dir, "fleet")} {
			base := filepath.Join(dir, "fleet")
			r, err := gitbase.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			c, err := r.Commit("HEAD")
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, base)
			dirs := []string{filepath.ToSlash(filepath.Join(rel, "config")), filepath.ToSlash(filepath.Join(rel, "charts"))}
			changed, err1 := r.Changed(c, root, dirs...)
			dirty, err2 := r.Dirty(c, root, dirs...)
			r.Close()
			if err1 != nil || err2 != nil || strings.Join(changed, " ") != strings.Join(dirty, " ") {
				t.Errorf("%s, from %s: Changed %v (%v), Dirty %v (%v)", state, root, changed, err1, dirty, err2)
			}
		}
	}
	same("unchanged")
	writeIn(t, dir, "fleet/config/global/a.yaml", "edited\n")
	same("a file edited")
	writeIn(t, dir, "fleet/config/global/b.yaml", "staged\n")
	git("add", "fleet/config/global/b.yaml")
	same("a change staged")
	writeIn(t, dir, "fleet/config/global/new.yaml", "new\n")
	os.Remove(filepath.Join(dir, "fleet/charts/x/Chart.yaml"))
	same("a file added and one deleted")
}

// TestLargeBlobsReadAsGitHoldsThem: blobs past the size go-git is told to
// stream (a base's index.json) read as git cat-file gives them, loose and
// packed, whole and as a delta of another, beside a small file.
func TestLargeBlobsReadAsGitHoldsThem(t *testing.T) {
	dir := t.TempDir()
	run := gitIn(t, dir)
	run("init", "-q", "-b", "main")
	var big strings.Builder
	for i := 0; big.Len() < 2*gitbase.LargeObject; i++ {
		fmt.Fprintf(&big, "line %d of a file larger than the streaming threshold: %x\n", i, i*2654435761)
	}
	first := big.String()
	second := strings.Replace(first, "line 1000 ", "line one thousand ", 1) + "one more line\n"
	writeIn(t, dir, "deploy/index.json", first)
	writeIn(t, dir, "deploy/small.yaml", "a: 1\n")
	run("add", "-A")
	run("commit", "-qm", "first")
	writeIn(t, dir, "deploy/index.json", second)
	run("commit", "-qam", "second")
	read := func(stage string) {
		t.Helper()
		repo, err := gitbase.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer repo.Close()
		for rev, want := range map[string]map[string]string{
			"HEAD~1": {"deploy/index.json": first, "deploy/small.yaml": "a: 1\n"},
			"HEAD":   {"deploy/index.json": second, "deploy/small.yaml": "a: 1\n"},
		} {
			c, err := repo.Commit(rev)
			if err != nil {
				t.Fatal(err)
			}
			fsys, err := repo.FS(c)
			if err != nil {
				t.Fatal(err)
			}
			for p, w := range want {
				got, err := fs.ReadFile(fsys, p)
				if err != nil {
					t.Fatalf("%s: %s of %s: %v", stage, p, rev, err)
				}
				out, err := exec.Command("git", "-C", dir, "cat-file", "blob", rev+":"+p).Output()
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != w || string(got) != w {
					t.Errorf("%s: %s of %s read %d bytes, git holds %d (%d written)", stage, p, rev, len(got), len(out), len(w))
				}
			}
		}
	}
	read("loose")
	run("gc", "-q", "--aggressive")
	if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) == 0 {
		t.Fatal("git gc left no pack")
	}
	read("packed")
}
