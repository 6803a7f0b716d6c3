package gitbase

import (
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// BranchTip is the newest commit of branch as this clone knows it: its
// remote-tracking ref origin/<branch> (what a fresh clone holds), else the
// local branch. Only a branch's own ref counts: a tag or commit id of the
// same name does not.
func (r *Repo) BranchTip(branch string) (*object.Commit, error) {
	for _, name := range []plumbing.ReferenceName{plumbing.NewRemoteReferenceName("origin", branch), plumbing.NewBranchReferenceName(branch)} {
		ref, err := r.repo.Reference(name, true)
		if err != nil {
			continue
		}
		c, err := r.repo.CommitObject(ref.Hash())
		if err != nil {
			return nil, fmt.Errorf("reading the tip of %s: %w", branch, err)
		}
		return c, nil
	}
	return nil, &UserError{fmt.Sprintf("no branch %q in this clone (neither origin/%s nor %s)", branch, branch, branch)}
}

// OnFirstParentHistory reports whether commit is the tip of branch or one
// of the commits reached from it by first parents only: a commit that was
// pushed to the branch or merged into it, never one that only a merged
// side branch or another branch holds. A deploy runs only such commits.
func (r *Repo) OnFirstParentHistory(branch string, commit plumbing.Hash) (bool, error) {
	c, err := r.BranchTip(branch)
	if err != nil {
		return false, err
	}
	return onFirstParentHistory(r.repo, c, commit)
}

func onFirstParentHistory(repo *git.Repository, c *object.Commit, commit plumbing.Hash) (bool, error) {
	for {
		if c.Hash == commit {
			return true, nil
		}
		if len(c.ParentHashes) == 0 {
			return false, nil
		}
		next, err := repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			// A shallow clone ends here: what it cannot see is not proven.
			return false, fmt.Errorf("walking the first-parent history from %s: %w (a shallow clone cannot prove where a commit was pushed; clone the history)", c.Hash.String()[:12], err)
		}
		c = next
	}
}
