package gitbase_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
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
	dir, g, commit := history(t)
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

// TestDefaultBaseFindsTheDeployBranchAsGitWould: the deploy branch's
// configured upstream first, then origin/<branch>, then <branch>, and in a
// clone without it the remote's default branch (origin/HEAD), said so.
func TestDefaultBaseFindsTheDeployBranchAsGitWould(t *testing.T) {
	dir, g, commit := history(t)
	a := commit("a")
	b := commit("b", a)
	c := commit("c", b) // HEAD: the change under review
	set := func(ref *plumbing.Reference) {
		if err := g.Storer.SetReference(ref); err != nil {
			t.Fatal(err)
		}
	}
	set(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", "trunk"), b))
	set(plumbing.NewSymbolicReference(plumbing.NewRemoteReferenceName("origin", "HEAD"), plumbing.NewRemoteReferenceName("origin", "trunk")))

	open := func() *gitbase.Repo {
		r, err := gitbase.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	base, how, err := open().DefaultBase("main")
	if err != nil || base.Hash != b || !strings.Contains(how, "origin/HEAD") || !strings.Contains(how, "no main in this clone") {
		t.Errorf("without main: %v, %q, %v; want b by origin/HEAD, said so", base, how, err)
	}

	// The deploy branch's configured upstream wins over origin/<branch>.
	set(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("upstream", "deploy"), a))
	set(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", "deploy"), b))
	cfg, _ := g.Config()
	cfg.Remotes["upstream"] = &config.RemoteConfig{Name: "upstream", URLs: []string{"https://example.invalid/fleet.git"}}
	cfg.Branches["deploy"] = &config.Branch{Name: "deploy", Remote: "upstream", Merge: plumbing.NewBranchReferenceName("deploy")}
	if err := g.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	base, how, err = open().DefaultBase("deploy")
	if err != nil || base.Hash != a || how != "merge-base(HEAD, upstream/deploy)" {
		t.Errorf("with an upstream: %v, %q, %v; want a by upstream/deploy", base, how, err)
	}

	// Nothing to compare with: the error says what to fetch or pass.
	if err := g.Storer.RemoveReference(plumbing.NewRemoteReferenceName("origin", "HEAD")); err != nil {
		t.Fatal(err)
	}
	_, _, err = open().DefaultBase("main")
	if err == nil || !strings.Contains(err.Error(), "pass --base") {
		t.Errorf("no base: %v; want an error naming --base", err)
	}
	_ = c
}

// history is a new repository in a temporary directory and a function that
// commits to it with the given parents.
func history(t *testing.T) (string, *git.Repository, func(name string, parents ...plumbing.Hash) plumbing.Hash) {
	dir := t.TempDir()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := g.Worktree()
	return dir, g, func(name string, parents ...plumbing.Hash) plumbing.Hash {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "f"), []byte(name), 0o644)
		wt.Add("f")
		h, err := wt.Commit(name, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@e", When: time.Now()}, Parents: parents, AllowEmptyCommits: true})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
}
