package gitbase

import (
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Blamer tells which commit introduced a line of a file at one commit,
// with go-git's blame, each file blamed once.
type Blamer struct {
	repo   *Repo
	commit *object.Commit
	prefix string // the fleet root's path inside the repository
	mu     sync.Mutex
	files  map[string]*git.BlameResult
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
	return h.String(), c.Committer.When, true
}
