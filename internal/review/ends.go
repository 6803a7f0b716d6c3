package review

import (
	"fmt"
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/diskfs"
	"github.com/regionctl/regionctl/internal/gitbase"
)

// ends are a review's two sides as the ends stage resolves them: each
// commit, its label for the report, and the tree its fleet is read from.
type ends struct {
	base      *object.Commit
	baseLabel string
	// baseFS is read through the handle Run opened, by the load stage and
	// then by the compare stage, never by two at once.
	baseFS fs.FS
	// head is the commit named, or HEAD for the working tree (worktree).
	head     *object.Commit
	worktree bool
	// headLabel names the head; a working tree's says whether it holds
	// uncommitted changes once the head stage has found them (label).
	headLabel string
	// headFS is the head's tree: a commit's read through a handle of its
	// own (closed by close), first by the head's parse and then by the
	// load stage, which waits for the parse.
	headFS fs.FS
	close  func()
}

// resolve finds the review's ends through repo: o.Base, or the merge base
// with the deploy branch when it is empty, and o.Head, or the working tree.
func resolve(repo *gitbase.Repo, o Options) (*ends, error) {
	e := &ends{close: func() {}}
	var err error
	label := o.Base
	if o.Base == "" {
		e.base, label, err = repo.DefaultBase(o.Branch)
	} else {
		e.base, err = repo.Commit(o.Base)
	}
	if err != nil {
		return nil, err
	}
	if e.baseFS, err = repo.FS(e.base); err != nil {
		return nil, err
	}
	e.baseLabel = fmt.Sprintf("%s (%s)", short(e.base), label)
	if o.Head == "" {
		if e.head, err = repo.Commit("HEAD"); err != nil {
			return nil, err
		}
		e.worktree, e.headFS = true, diskfs.New(o.Root)
		e.headLabel = fmt.Sprintf("%s (HEAD)", short(e.head))
		return e, nil
	}
	if e.head, err = repo.Commit(o.Head); err != nil {
		return nil, err
	}
	e.headLabel = fmt.Sprintf("%s (%s)", short(e.head), o.Head)
	// The head's tree is read through a handle of its own while this one
	// reads the base's.
	headRepo, err := gitbase.Open(o.Root)
	if err != nil {
		return nil, err
	}
	c, err := headRepo.Commit(e.head.Hash.String())
	if err == nil {
		e.headFS, err = headRepo.FS(c)
	}
	if err != nil {
		headRepo.Close()
		return nil, err
	}
	e.close = func() { headRepo.Close() }
	return e, nil
}

// label is the head's label once the head stage has found which of the
// render's inputs the working tree changed.
func (e *ends) label(uncommitted []string) string {
	if e.worktree && len(uncommitted) > 0 {
		return fmt.Sprintf("working tree (HEAD %s + uncommitted changes)", short(e.head))
	}
	return e.headLabel
}

func short(c *object.Commit) string { return c.Hash.String()[:8] }
