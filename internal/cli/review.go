package cli

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// review renders a base ref and a head (a ref, or the working tree when
// headRef is empty) and compares them.
func (a *app) review(baseRef, headRef string) (*diff.Report, *render.Output, *object.Commit, error) {
	repo, err := gitbase.Open(a.root)
	if err != nil {
		return nil, nil, nil, fail(ExitExternal, "%v", err)
	}
	var base *object.Commit
	baseLabel := baseRef
	if baseRef == "" {
		base, baseLabel, err = repo.DefaultBase()
	} else {
		base, err = repo.Commit(baseRef)
	}
	if err != nil {
		return nil, nil, nil, fail(ExitExternal, "%v", err)
	}
	baseFS, err := repo.FS(base)
	if err != nil {
		return nil, nil, nil, fail(ExitExternal, "%v", err)
	}
	baseSide, err := a.side(baseFS, fmt.Sprintf("%s (%s)", short(base), baseLabel), false)
	if err != nil {
		return nil, nil, nil, err
	}

	var headFS fs.FS
	var head *object.Commit
	var uncommitted []string
	var headLabel string
	if headRef != "" {
		if head, err = repo.Commit(headRef); err != nil {
			return nil, nil, nil, fail(ExitExternal, "%v", err)
		}
		if headFS, err = repo.FS(head); err != nil {
			return nil, nil, nil, fail(ExitExternal, "%v", err)
		}
		headLabel = fmt.Sprintf("%s (%s)", short(head), headRef)
	} else {
		if head, err = repo.Commit("HEAD"); err != nil {
			return nil, nil, nil, fail(ExitExternal, "%v", err)
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
	headSide, err := a.side(headFS, headLabel, true)
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := schema.RolloutKeys()
	if err != nil {
		return nil, nil, nil, fail(ExitExternal, "%v", err)
	}
	r := diff.Compare(baseSide, headSide, keys)
	r.Uncommitted = uncommitted
	return r, headSide.Output, head, nil
}

// side renders one end of a review; withDeploy also reads its committed
// deploy/, which drift detection needs of the head side only.
func (a *app) side(fsys fs.FS, label string, withDeploy bool) (diff.Side, error) {
	f, out, diags, err := a.renderFS(fsys)
	if err != nil {
		return diff.Side{}, err
	}
	if diags.HasErrors() || out == nil {
		a.printer(a.stderr).Diagnostics(diags)
		return diff.Side{}, fail(ExitInput, "%s does not render; fix the errors above", label)
	}
	if !withDeploy {
		return diff.Side{Label: label, Fleet: f, Output: out}, nil
	}
	deploy := map[string][]byte{}
	_ = fs.WalkDir(fsys, deployDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := fs.ReadFile(fsys, p); err == nil {
			deploy[strings.TrimPrefix(p, deployDir+"/")] = b
		}
		return nil
	})
	if len(deploy) == 0 {
		deploy = nil // nothing committed yet: no drift to speak of
	}
	return diff.Side{Label: label, Fleet: f, Output: out, Deploy: deploy}, nil
}

func short(c *object.Commit) string { return c.Hash.String()[:8] }
