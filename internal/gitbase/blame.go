package gitbase

import (
	"path"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Blamer tells which commit introduced a line of a file at one commit,
// with go-git's blame, each file blamed once, and when that commit reached
// the mainline.
type Blamer struct {
	repo   *Repo
	commit *object.Commit
	prefix string // the fleet root's path inside the repository
	mu     sync.Mutex
	files  map[string]*git.BlameResult
	// mainline, when set, is the tip of the branch that deploys (main): a
	// line's time is when its commit reached it, not when it was written.
	mainline *object.Commit
	chain    []*object.Commit // mainline's first-parent history, oldest first
	reached  map[string]reach
}

type reach struct {
	when time.Time
	ok   bool
}

// WithMainline makes Blame answer when each commit reached main's
// first-parent history: the commit itself when it was made on main, else
// the merge that brought it. A commit main does not hold has not reached it.
func (b *Blamer) WithMainline(main *object.Commit) *Blamer {
	b.mainline, b.reached = main, map[string]reach{}
	return b
}

// Blamer returns a Blamer at commit c for paths relative to root (a
// directory inside the repository's worktree).
func (r *Repo) Blamer(c *object.Commit, root string) *Blamer {
	return &Blamer{repo: r, commit: c, files: map[string]*git.BlameResult{}, prefix: r.Prefix(root)}
}

// Prefix is the path of directory root inside the repository's worktree
// ("" for the top), so that a tree can be read as root sees it.
func (r *Repo) Prefix(root string) string {
	wt, err := r.repo.Worktree()
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(wt.Filesystem.Root(), abs)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// Blame returns the commit that introduced line (1-based) of file and the
// time it was committed.
func (b *Blamer) Blame(file string, line int) (string, time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := path.Join(b.prefix, file)
	res, ok := b.files[p]
	if !ok {
		var err error
		res, err = git.Blame(b.commit, p)
		if err != nil {
			res = nil
		}
		b.files[p] = res
	}
	if res == nil || line < 1 || line > len(res.Lines) {
		return "", time.Time{}, false
	}
	h := res.Lines[line-1].Hash
	c, err := b.repo.repo.CommitObject(h)
	if err != nil {
		return "", time.Time{}, false
	}
	if b.mainline == nil {
		return h.String(), c.Committer.When, true
	}
	r, known := b.reached[h.String()]
	if !known {
		r.when, r.ok = b.reachedMainline(c)
		b.reached[h.String()] = r
	}
	return h.String(), r.when, r.ok
}

// reachedMainline is the commit time of the oldest commit of the
// mainline's first-parent history that holds c.
func (b *Blamer) reachedMainline(c *object.Commit) (time.Time, bool) {
	if b.chain == nil {
		for m := b.mainline; ; {
			b.chain = append(b.chain, m)
			if m.NumParents() == 0 {
				break
			}
			p, err := m.Parent(0)
			if err != nil {
				break // a shallow clone: the history known
			}
			m = p
		}
		slices.Reverse(b.chain)
	}
	holds := func(m *object.Commit) bool {
		if m.Hash == c.Hash {
			return true
		}
		ok, err := c.IsAncestor(m)
		return err == nil && ok
	}
	// Holding c is monotone along the first-parent chain.
	i := sort.Search(len(b.chain), func(i int) bool { return holds(b.chain[i]) })
	if i == len(b.chain) {
		return time.Time{}, false
	}
	return b.chain[i].Committer.When, true
}
