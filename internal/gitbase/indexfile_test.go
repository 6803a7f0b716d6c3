package gitbase_test

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/regionctl/regionctl/internal/gitbase"
)

// TestIndexDecodesAsGoGitDecodes holds decodeIndex to go-git's own index
// decoder, on index files git itself writes: after a commit (version 2,
// with its cached trees), a staged change (a cached tree invalidated), a
// sparse entry and an intended addition (version 3's extended flags), the
// three stages of a conflict, and the same index rewritten as version 4
// (names written as changes of the one before). Every entry's every field
// and the cached trees must be alike.
func TestIndexDecodesAsGoGitDecodes(t *testing.T) {
	dir := t.TempDir()
	git := gitIn(t, dir)
	git("init", "-q")
	for i := range 40 {
		writeIn(t, dir, fmt.Sprintf("deploy/production/r%d/%s/c%d.json", i%4, strings.Repeat("long-name-", i%7), i), fmt.Sprint(i))
	}
	writeIn(t, dir, "config/global/a.yaml", "a: 1\n")
	// A name of more than 128 bytes before a short one: version 4 writes
	// the short one as "drop 200 bytes", a varint of two bytes.
	writeIn(t, dir, "deploy/zz/"+strings.Repeat("n", 200), "long")
	writeIn(t, dir, "e.txt", "short")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	read := func() []byte {
		b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(stage string, wantVersion uint32) {
		t.Helper()
		b := read()
		ours, err := gitbase.DecodeIndex(b)
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		var theirs index.Index
		if err := index.NewDecoder(bytes.NewReader(b)).Decode(&theirs); err != nil {
			t.Fatalf("%s: go-git: %v", stage, err)
		}
		if ours.Version != wantVersion || theirs.Version != wantVersion {
			t.Errorf("%s: version %d, go-git %d, want %d", stage, ours.Version, theirs.Version, wantVersion)
		}
		if !reflect.DeepEqual(ours.Entries, theirs.Entries) {
			t.Errorf("%s: entries differ from go-git's:\nours   %v\ngo-git %v", stage, ours.Entries, theirs.Entries)
		}
		// go-git leaves out a tree git invalidated (entry count -1), which
		// gitformat-index keeps in its place ("Entry count of -1 indicates
		// that the entry is invalidated"): each tree's subtrees follow it,
		// so a tree left out puts its subtrees under another. The trees
		// alike are the valid ones; the invalidated are held to git below.
		if !reflect.DeepEqual(validTrees(ours.Cache), theirs.Cache) {
			t.Errorf("%s: cached trees differ from go-git's:\nours   %+v\ngo-git %+v", stage, ours.Cache, theirs.Cache)
		}
		if ours.Cache == nil && stage == "committed" {
			t.Errorf("%s: no cached trees: the case exercises too little", stage)
		}
	}
	check("committed", 2)
	writeIn(t, dir, "config/global/a.yaml", "a: 2\n")
	git("add", "config/global/a.yaml")
	check("a staged change", 2)
	// The cached trees as git has them: config/ and the root invalidated,
	// deploy/ the commit's.
	repo, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	head, err := repo.Commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CheckedOutBlobHashes(head, "deploy"); err != nil || repo.TreesRead() != 0 {
		t.Errorf("deploy/ is the commit's, and the index's cached tree says so: %d trees read (%v)", repo.TreesRead(), err)
	}
	if _, err := repo.CheckedOutBlobHashes(head, "config"); err != nil || repo.TreesRead() == 0 {
		t.Errorf("config/ has a staged change: the index was taken for the commit's (%v)", err)
	}
	git("update-index", "--skip-worktree", "deploy/production/r0/c0.json")
	writeIn(t, dir, "config/new.yaml", "n: 1\n")
	git("add", "-N", "config/new.yaml")
	check("a sparse entry and an intended addition", 3)
	out, err := exec.Command("git", "-C", dir, "hash-object", "-w", "config/global/a.yaml").Output()
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(string(out))
	cmd := exec.Command("git", "-C", dir, "update-index", "--index-info")
	cmd.Stdin = strings.NewReader(fmt.Sprintf("0 %s\tconflict.yaml\n100644 %[1]s 1\tconflict.yaml\n100644 %[1]s 2\tconflict.yaml\n100644 %[1]s 3\tconflict.yaml\n", blob))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	check("a conflict's stages", 3)
	git("update-index", "--index-version", "4")
	check("version 4", 4)
}

// TestIndexDecodeRefuses holds decodeIndex to refusing what it cannot read
// whole, without a panic: every truncation of an index, a changed byte
// (the checksum), and a split index (its entries are in another file).
func TestIndexDecodeRefuses(t *testing.T) {
	dir := t.TempDir()
	git := gitIn(t, dir)
	git("init", "-q")
	for i := range 5 {
		writeIn(t, dir, fmt.Sprintf("d/f%d", i), fmt.Sprint(i))
	}
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := gitbase.DecodeIndex(b[:n]); err == nil {
			t.Errorf("the first %d of %d bytes decoded", n, len(b))
		}
	}
	// Entries out of name order, as no git writes them: the first two of
	// these five (d/f0 to d/f4, 72 bytes each after the 12 of the header)
	// swapped, the checksum made anew. A directory's entries are looked up
	// as a run of names.
	unsorted := bytes.Clone(b)
	copy(unsorted[12:84], b[84:156])
	copy(unsorted[84:156], b[12:84])
	sum := sha1.Sum(unsorted[:len(unsorted)-sha1.Size])
	copy(unsorted[len(unsorted)-sha1.Size:], sum[:])
	if _, err := gitbase.DecodeIndex(unsorted); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("entries out of order: %v", err)
	}
	changed := bytes.Clone(b)
	changed[20] ^= 1
	if _, err := gitbase.DecodeIndex(changed); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a changed byte: %v", err)
	}
	git("update-index", "--split-index")
	b, err = os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitbase.DecodeIndex(b); err == nil || !strings.Contains(err.Error(), "split") {
		t.Errorf("a split index: %v", err)
	}
}

// validTrees is t without the trees git invalidated.
func validTrees(t *index.Tree) *index.Tree {
	if t == nil {
		return nil
	}
	out := &index.Tree{}
	for _, e := range t.Entries {
		if e.Entries >= 0 {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}
