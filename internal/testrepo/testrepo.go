// Package testrepo builds real git repositories holding fleets, for tests of
// the commands that read git (render --diff, affected, rollout). Entry
// point: New.
package testrepo

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Repo is a git repository in a temporary directory, on branch main, whose
// commits are an hour apart from 2026-11-01 09:00 UTC.
type Repo struct {
	T    testing.TB
	Dir  string
	Git  *git.Repository
	WT   *git.Worktree
	tick time.Time
}

// New starts a repository and copies into it each source directory
// (relative to the calling test's package) to its destination path. Nothing
// is committed yet.
func New(t testing.TB, copies map[string]string) *Repo {
	t.Helper()
	dir := t.TempDir()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))); err != nil {
		t.Fatal(err)
	}
	wt, err := g.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	r := &Repo{T: t, Dir: dir, Git: g, WT: wt, tick: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	for src, dst := range copies {
		r.Copy(src, dst)
	}
	return r
}

// Copy copies the files under src into dst of the repository.
func (r *Repo) Copy(src, dst string) {
	r.T.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r.Write(filepath.Join(dst, rel), string(b))
		return nil
	})
	if err != nil {
		r.T.Fatal(err)
	}
}

// Write writes a file of the working tree, making its directories.
func (r *Repo) Write(name, content string) {
	r.T.Helper()
	p := filepath.Join(r.Dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.T.Fatal(err)
	}
}

// Read reads a file of the working tree.
func (r *Repo) Read(name string) string {
	r.T.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, name))
	if err != nil {
		r.T.Fatal(err)
	}
	return string(b)
}

// Edit replaces the first old in a file with new; the file must hold old.
func (r *Repo) Edit(name, old, new string) {
	r.T.Helper()
	s := r.Read(name)
	if !strings.Contains(s, old) {
		r.T.Fatalf("%s holds no %q", name, old)
	}
	r.Write(name, strings.Replace(s, old, new, 1))
}

// Remove deletes a file of the working tree.
func (r *Repo) Remove(name string) {
	r.T.Helper()
	if err := os.Remove(filepath.Join(r.Dir, name)); err != nil {
		r.T.Fatal(err)
	}
}

// Commit commits every change of the working tree.
func (r *Repo) Commit(msg string) plumbing.Hash {
	r.T.Helper()
	if err := r.WT.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		r.T.Fatal(err)
	}
	r.tick = r.tick.Add(time.Hour)
	h, err := r.WT.Commit(msg, &git.CommitOptions{All: true, Author: &object.Signature{Name: "Test", Email: "t@example.com", When: r.tick}})
	if err != nil {
		r.T.Fatal(err)
	}
	return h
}

// Golden starts a repository holding the golden fleet golden/<name> (its
// config and charts) and the project's Tekton Pipelines. Nothing is
// committed yet.
func Golden(t testing.TB, name string) *Repo {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testrepo: cannot find the project's root")
	}
	root := filepath.Join(filepath.Dir(self), "..", "..")
	return New(t, map[string]string{
		filepath.Join(root, "golden", name, "config"): "config",
		filepath.Join(root, "golden", name, "charts"): "charts",
		filepath.Join(root, "pipelines", "tekton"):    "pipelines/tekton",
	})
}
