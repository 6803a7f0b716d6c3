package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// gitFail is the exit for a git error: a usage error when the caller named
// something that is not there, an external failure otherwise.
func gitFail(err error) error {
	var user *gitbase.UserError
	if errors.As(err, &user) {
		return fail(ExitUsage, "%v", err)
	}
	return fail(ExitExternal, "%v", err)
}

// review renders a base ref and a head (a ref, or the working tree when
// headRef is empty) and compares them; with drift, it also holds the head's
// committed deploy/ to the head's render. When the base's committed deploy/
// was rendered by this version of regionctl, the clusters whose inputs are
// the same on both sides are neither checked nor rendered (they cannot
// differ), and the head's committed files of those clusters are held to the
// base's for drift.
func (a *app) review(baseRef, headRef string, drift bool) (*diff.Report, *render.Output, *object.Commit, error) {
	repo, err := gitbase.Open(a.root)
	if err != nil {
		return nil, nil, nil, gitFail(err)
	}
	defer repo.Close()
	var base *object.Commit
	baseLabel := baseRef
	if baseRef == "" {
		base, baseLabel, err = repo.DefaultBase()
	} else {
		base, err = repo.Commit(baseRef)
	}
	if err != nil {
		return nil, nil, nil, gitFail(err)
	}
	baseFS, err := repo.FS(base)
	if err != nil {
		return nil, nil, nil, fail(ExitExternal, "%v", err)
	}
	baseLabel = fmt.Sprintf("%s (%s)", short(base), baseLabel)

	var headFS fs.FS
	var head *object.Commit
	var uncommitted []string
	var headLabel string
	if headRef != "" {
		if head, err = repo.Commit(headRef); err != nil {
			return nil, nil, nil, gitFail(err)
		}
		if headFS, err = repo.FS(head); err != nil {
			return nil, nil, nil, fail(ExitExternal, "%v", err)
		}
		headLabel = fmt.Sprintf("%s (%s)", short(head), headRef)
	} else {
		if head, err = repo.Commit("HEAD"); err != nil {
			return nil, nil, nil, gitFail(err)
		}
		headFS = os.DirFS(a.root)
		if uncommitted, err = gitbase.Dirty(head, a.root, render.Inputs...); err != nil {
			return nil, nil, nil, fail(ExitExternal, "%v", err)
		}
		headLabel = fmt.Sprintf("%s (HEAD)", short(head))
		if len(uncommitted) > 0 {
			headLabel = fmt.Sprintf("working tree (HEAD %s + uncommitted changes)", short(head))
		}
	}

	checker, err := a.checker()
	if err != nil {
		return nil, nil, nil, err
	}
	opts := a.renderOptions()
	var baseIndex *render.Index
	if !a.fullReview {
		baseIndex = committedIndex(baseFS)
	}
	pair, err := render.FromFSPair(baseFS, headFS, checker, opts, baseIndex != nil)
	if err == nil && !indexes(baseIndex, pair.Same) {
		// The base's deploy/ does not list some unchanged cluster (it was
		// not rendered when committed): compare whole renders instead.
		pair, err = render.FromFSPair(baseFS, headFS, checker, opts, false)
	}
	if err != nil {
		return nil, nil, nil, fail(ExitInput, "%v", err)
	}
	for _, s := range []struct {
		label string
		diags diag.Diagnostics
		out   *render.Output
	}{{baseLabel, pair.BaseDiags, pair.BaseOut}, {headLabel, pair.HeadDiags, pair.HeadOut}} {
		if s.diags.HasErrors() || s.out == nil {
			a.printer(a.stderr).Diagnostics(s.diags)
			return nil, nil, nil, fail(ExitInput, "%s does not render; fix the errors above", s.label)
		}
	}
	baseSide := diff.Side{Label: baseLabel, Fleet: pair.Base, Output: pair.BaseOut}
	if len(pair.Same) > 0 && drift {
		if baseSide.Committed, err = gitbase.BlobHashes(base, deployDir); err != nil {
			return nil, nil, nil, fail(ExitExternal, "%v", err)
		}
		baseSide.Index = baseIndex
	}
	headSide := diff.Side{Label: headLabel, Fleet: pair.Head, Output: pair.HeadOut}
	if drift {
		headSide.Deploy = committedDeploy(headFS)
	}
	orders, err := schema.RolloutOrders()
	if err != nil {
		return nil, nil, nil, fail(ExitExternal, "%v", err)
	}
	keys := make([]string, 0, len(orders))
	for k := range orders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r := diff.Compare(baseSide, headSide, keys)
	diff.MarkDowngrades(r, orders)
	diff.Redact(r)
	r.Uncommitted = uncommitted
	return r, headSide.Output, head, nil
}

// committedIndex is the deploy/index.json of fsys when this version of
// regionctl wrote it, else nil.
func committedIndex(fsys fs.FS) *render.Index {
	b, err := fs.ReadFile(fsys, deployDir+"/"+render.IndexPath)
	if err != nil {
		return nil
	}
	idx, err := render.ParseIndex(b)
	if err != nil || idx.Generator != "regionctl "+Version {
		return nil
	}
	return idx
}

// indexes reports whether idx lists every cluster of ids.
func indexes(idx *render.Index, ids map[string]bool) bool {
	if len(ids) == 0 {
		return true
	}
	if idx == nil {
		return false
	}
	listed := map[string]bool{}
	for _, c := range idx.Clusters {
		listed[c.ID] = true
	}
	for id := range ids {
		if !listed[id] {
			return false
		}
	}
	return true
}

// committedDeploy reads the deploy/ tree of fsys (path → bytes), or nil when
// nothing is committed yet (no drift to speak of).
func committedDeploy(fsys fs.FS) map[string][]byte {
	var paths []string
	_ = fs.WalkDir(fsys, deployDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) == 0 {
		return nil
	}
	// Several readers: a cold page cache waits on the disk, a warm one on
	// the kernel's copying, and a fleet's tree has thousands of files.
	contents := make([][]byte, len(paths))
	read := make([]bool, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				b, err := fs.ReadFile(fsys, paths[i])
				contents[i], read[i] = b, err == nil
			}
		}()
	}
	wg.Wait()
	deploy := make(map[string][]byte, len(paths))
	for i, p := range paths {
		if read[i] {
			deploy[strings.TrimPrefix(p, deployDir+"/")] = contents[i]
		}
	}
	return deploy
}

func short(c *object.Commit) string { return c.Hash.String()[:8] }
