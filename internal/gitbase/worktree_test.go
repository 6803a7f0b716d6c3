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

// CheckedOutBlobHashes is the commit's listing as git ls-tree gives it, as
// BlobHashes's is, for the checked-out commit and for others, in every
// state of the index: after a commit or a checkout (HEAD's read from the
// index, no tree), with
// a staged change (its directory's cached tree dropped: read from the
// commit), with HEAD moved away from what the index holds, and for a
// commit sharing all but one directory with the checkout (only the trees
// on the way to it read). A directory deeper down (a fleet in a
// subdirectory has its deploy/ there) reads alike.
func TestCheckedOutBlobHashesIsGits(t *testing.T) {
	dir := t.TempDir()
	git := gitIn(t, dir)
	write := func(p, s string) { writeIn(t, dir, p, s) }
	check := func(stage, rev string, dirs ...string) int64 {
		t.Helper()
		return listingsAreGits(t, dir, stage, rev, dirs...)
	}
	git("init", "-q")
	write("deploy/a.yaml", "a: 1\n")
	write("deploy/x/b.yaml", "b: 1\n")
	write("deploy/x/y/c.yaml", "c: 1\n")
	write("deploy/z/d.yaml", "d: 1\n")
	write("deploy2/d.yaml", "d: 1\n")
	write("other/e.yaml", "e: 1\n")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	if n := check("after a commit", "HEAD", "deploy", "deploy/x", "other"); n != 0 {
		t.Errorf("after a commit, %d trees read: the index holds them", n)
	}
	// A staged change of deploy/x drops its cached tree and deploy/'s.
	write("deploy/x/b.yaml", "b: 2\n")
	git("add", "deploy/x/b.yaml")
	if n := check("a staged change", "HEAD", "deploy"); n != 2 {
		t.Errorf("with deploy/x/b.yaml staged, %d trees read; want deploy/ and deploy/x/ (deploy/x/y/ and deploy/z/ from the index)", n)
	}
	// Committed: the first commit shares deploy/z/ and deploy/x/y/ with
	// the checkout.
	git("commit", "-q", "-m", "two")
	if n := check("the commit before", "HEAD~1", "deploy"); n != 2 {
		t.Errorf("the commit before, %d trees read; want deploy/ and deploy/x/", n)
	}
	if n := check("the checked-out commit", "HEAD", "deploy"); n != 0 {
		t.Errorf("the checked-out commit, %d trees read", n)
	}
	// HEAD moved back with the index kept: the index holds another tree.
	git("reset", "-q", "--soft", "HEAD~1")
	if n := check("HEAD moved", "HEAD", "deploy", "deploy/x"); n == 0 {
		t.Error("the index was read while it holds another commit's tree")
	}
	// A checkout writes the cached tree again.
	git("reset", "-q", "--hard", "HEAD")
	if n := check("after a checkout", "HEAD", "deploy", "deploy/x"); n != 0 {
		t.Errorf("after a checkout, %d trees read", n)
	}
}

// listingsAreGits holds CheckedOutBlobHashes and BlobHashes of rev's dirs
// in the repository at dir to git ls-tree's, and says how many trees the
// first read for them.
func listingsAreGits(t *testing.T, dir, stage, rev string, dirs ...string) int64 {
	t.Helper()
	repo, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	c, err := repo.Commit(rev)
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	for i, d := range append(dirs, dirs...) {
		// Each directory read twice: beside the index, then from the
		// commit's trees alone (BlobHashes), after the count.
		list := repo.CheckedOutBlobHashes
		if i == len(dirs) {
			read = repo.TreesRead()
		}
		if i >= len(dirs) {
			list = repo.BlobHashes
		}
		got, err := list(c, d)
		if err != nil {
			t.Fatalf("%s: %s of %s: %v", stage, d, rev, err)
		}
		out, err := exec.Command("git", "-C", dir, "ls-tree", "-r", rev, d+"/").Output()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]plumbing.Hash{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			meta, name, ok := strings.Cut(line, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
				want[strings.TrimPrefix(name, d+"/")] = plumbing.NewHash(f[2])
			}
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Errorf("%s: %s of %s: %d files, git lists %d", stage, d, rev, len(got), len(want))
		}
		for p, h := range want {
			if got[p] != h {
				t.Errorf("%s: %s/%s of %s: %s, git has %s", stage, d, p, rev, got[p], h)
			}
		}
	}
	return read
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

// Handles of one process share the index they decode while it is the same
// file unchanged; once git rewrites it, the next handle decodes the new
// one.
func TestHandlesShareTheIndexUntilItChanges(t *testing.T) {
	dir := t.TempDir()
	git := gitIn(t, dir)
	git("init", "-q")
	writeIn(t, dir, "deploy/a.yaml", "a: 1\n")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	open := func() *gitbase.Repo {
		t.Helper()
		r, err := gitbase.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	first, second := open(), open()
	a, b := first.DecodedIndex(), second.DecodedIndex()
	if a == nil || a != b {
		t.Fatalf("two handles of the unchanged index decoded it apart (%p, %p)", a, b)
	}
	time.Sleep(10 * time.Millisecond)
	writeIn(t, dir, "deploy/b.yaml", "b: 1\n")
	git("add", "deploy/b.yaml")
	c := open().DecodedIndex()
	if c == a || c == nil || len(c.Entries) != 2 {
		t.Fatalf("after git add, a handle took the index decoded before it (%d entries)", len(c.Entries))
	}
}
