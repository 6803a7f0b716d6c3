package gitbase_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/gitbase"
)

// TestOnlyTheDeployBranchsFirstParentsRun builds
//
//	main:  a ─ b ─ m ─ c        (m merges side into main)
//	side:   ╲ s ─╯
//	other:      b ─ x
//
// and asks which commits are on main's first-parent history: a commit of a
// merged side branch or of another branch is not, whoever pushed it.
func TestOnlyTheDeployBranchsFirstParentsRun(t *testing.T) {
	dir := t.TempDir()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := g.Worktree()
	commit := func(name string, parents ...plumbing.Hash) plumbing.Hash {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "f"), []byte(name), 0o644)
		wt.Add("f")
		h, err := wt.Commit(name, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@e", When: time.Now()}, Parents: parents, AllowEmptyCommits: true})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a := commit("a")
	b := commit("b", a)
	s := commit("s", a)
	m := commit("m", b, s)
	c := commit("c", m)
	x := commit("x", b)
	set := func(name plumbing.ReferenceName, h plumbing.Hash) {
		if err := g.Storer.SetReference(plumbing.NewHashReference(name, h)); err != nil {
			t.Fatal(err)
		}
	}
	set(plumbing.NewBranchReferenceName("main"), c)
	set(plumbing.NewBranchReferenceName("other"), x)
	set(plumbing.NewBranchReferenceName("side"), s)

	r, err := gitbase.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		name string
		h    plumbing.Hash
		want bool
	}{{"a", a, true}, {"b", b, true}, {"m", m, true}, {"c (the tip)", c, true}, {"s (merged side branch)", s, false}, {"x (another branch)", x, false}} {
		got, err := r.OnFirstParentHistory("main", tc.h)
		if err != nil || got != tc.want {
			t.Errorf("%s on main's first parents = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	// origin/main, when a clone has it, is the branch: a local main that
	// someone moved does not widen what runs.
	set(plumbing.NewRemoteReferenceName("origin", "main"), b)
	if got, err := r.OnFirstParentHistory("main", c); err != nil || got {
		t.Errorf("c with origin/main at b = %v, %v; want false", got, err)
	}
	// A tag named like the branch is not the branch.
	set(plumbing.NewTagReferenceName("release"), x)
	if _, err := r.OnFirstParentHistory("release", x); err == nil || !strings.Contains(err.Error(), `no branch "release"`) {
		t.Errorf("a tag passed for a branch: %v", err)
	}
}
