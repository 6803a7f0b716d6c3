package review

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/render"
)

// Checkout is a checkout whose deploy/ needs no render (CommittedCheckout).
type Checkout struct {
	Commit string // HEAD, abbreviated
	Files  int    // the files of its deploy/, index.json among them
	// Stats are the size and modification time of each file of deploy/
	// (by its path in deploy/) as the check found them, for the render
	// record; nil when it cannot say.
	Stats map[string]gitbase.FileStat
}

// CommittedCheckout says whether the checkout at root needs no render
// because it is a commit the deploy branch's CI held to render --check, by
// the rule a review trusts a base by: HEAD on branch's first-parent
// history, its committed index.json naming renderer (a build known by its
// source: the caller asks only then) and describing its deploy/
// (describes), nothing in deploy/ the index does not list (a render would
// report it), and the working tree's inputs and deploy/ exactly HEAD's.
// The questions run side by side, each through a handle of its own: the
// walk of deploy/ (every file, system calls), the inputs, the branch's
// history and the commit's listing of deploy/ (the git index and tree
// objects), and the committed index.json (inflating and decoding 4 MB at
// 2,200 clusters).
func CommittedCheckout(root, branch, renderer string) (Checkout, bool) {
	// A working tree without deploy/ holds no commit's: nothing to ask
	// the commit (a render into an empty deploy/ read its 25,000-file
	// listing and index.json for nothing).
	if _, err := os.Lstat(filepath.Join(root, deployDir)); err != nil {
		return Checkout{}, false
	}
	repo, err := gitbase.Open(root)
	if err != nil {
		return Checkout{}, false
	}
	defer repo.Close()
	head, err := repo.Commit("HEAD")
	if err != nil {
		return Checkout{}, false
	}
	// The working tree's deploy/ as git status finds it.
	type walk struct {
		now   map[string]plumbing.Hash
		stats map[string]gitbase.FileStat
		err   error
	}
	walked := par.Go(func() walk {
		w, err := withHandle(root, func(r *gitbase.Repo) (walk, error) {
			now, stats, err := r.WorktreeStats(root, deployDir)
			return walk{now, stats, err}, nil
		})
		if err != nil {
			return walk{err: err}
		}
		return w
	})
	defer walked.Wait()
	// The inputs as HEAD has them, HEAD on the branch's first-parent
	// history, and the commit's listing of deploy/ (from the git index
	// when it holds that very tree, as a fresh checkout's does): nil
	// unless all hold.
	listed := par.Go(func() map[string]plumbing.Hash {
		committed, _ := withHandle(root, func(r *gitbase.Repo) (map[string]plumbing.Hash, error) {
			c, err := r.Commit(head.Hash.String())
			if err != nil {
				return nil, err
			}
			if changed, err := r.Changed(c, root, render.Inputs...); err != nil || len(changed) > 0 {
				return nil, err
			}
			if ok, err := r.OnFirstParentHistory(branch, c.Hash); err != nil || !ok {
				return nil, err
			}
			return r.CheckedOutBlobHashes(c, deployDir)
		})
		return committed
	})
	defer listed.Wait()
	tree, err := repo.FS(head)
	if err != nil {
		return Checkout{}, false
	}
	b, err := fs.ReadFile(tree, path.Join(deployDir, render.IndexPath))
	if err != nil {
		return Checkout{}, false
	}
	idx, err := render.ParseIndex(b)
	if err != nil || idx.Renderer == "" || idx.Renderer != renderer {
		return Checkout{}, false
	}
	committed := listed.Wait()
	if committed == nil || len(committed) != len(idx.Files)+1 || describes(idx, committed) != "" {
		return Checkout{}, false
	}
	// The working tree's deploy/, held to the listing above.
	w := walked.Wait()
	if w.err != nil || len(w.now) != len(committed) {
		return Checkout{}, false
	}
	for p, h := range w.now {
		if committed[p] != h {
			return Checkout{}, false
		}
	}
	return Checkout{Commit: head.Hash.String()[:12], Files: len(committed), Stats: w.stats}, true
}
