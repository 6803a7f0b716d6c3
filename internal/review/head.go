package review

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
)

// headState is what the head stage finds: which of the render's inputs the
// working tree changed from HEAD, and, for a review that holds the head's
// committed deploy/ to its render (drift), that deploy/ by blob hash.
type headState struct {
	uncommitted []string
	deploy      map[string]plumbing.Hash // nil without drift
}

// readHead reads the head's state through a handle of its own: a commit's
// deploy/ from its tree; the working tree's as git status finds it, reading
// only the files the git index cannot vouch for, with the git index read
// once for that and for the changed inputs, and let go with the handle.
func readHead(root string, head plumbing.Hash, worktree, drift bool) (headState, error) {
	return withHandle(root, func(repo *gitbase.Repo) (headState, error) {
		var h headState
		c, err := repo.Commit(head.String())
		if err != nil {
			return h, err
		}
		if !worktree {
			if drift {
				h.deploy, err = repo.CheckedOutBlobHashes(c, deployDir)
			}
			return h, err
		}
		if h.uncommitted, err = repo.Changed(c, root, render.Inputs...); err != nil {
			return h, err
		}
		if drift {
			h.deploy, err = repo.WorktreeHashes(root, deployDir)
		}
		return h, err
	})
}
