package review

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
)

// vouch says why a review may not take base's committed deploy/ as what
// this renderer makes of its inputs, when that is known before reading it:
// this build is not known by its source (o.Trusted), or the base is not on
// the deploy branch's first-parent history, so its CI never held its
// deploy/ to render --check. "" when it may, or when o.Full renders both
// sides anyway.
func vouch(repo *gitbase.Repo, base *object.Commit, o Options) string {
	if o.Full {
		return ""
	}
	if !o.Trusted {
		return "this regionctl is built from modified sources, so it trusts no committed deploy/ (regionctl version)"
	}
	branch := o.Branch
	if branch == "" {
		branch = gitbase.DefaultBranch
	}
	switch ok, err := repo.OnFirstParentHistory(branch, base.Hash); {
	case err != nil:
		return fmt.Sprintf("nothing vouches for the base %s: %v", short(base), err)
	case !ok:
		return fmt.Sprintf("the base %s is not on the first-parent history of %s, whose CI checked its deploy/", short(base), branch)
	}
	return ""
}

// trustIndex is the base's committed index.json when a review may take the
// base's deploy/ as what this renderer makes of its inputs (idx names
// renderer, and this build is known by its source: trusted), else nil and
// why not, for the review's header.
func trustIndex(idx *render.Index, committed map[string]plumbing.Hash, renderer string) (*render.Index, string) {
	switch {
	case idx == nil:
		return nil, "the base committed no readable deploy/index.json"
	case idx.Renderer == "":
		return nil, "the base's deploy/index.json names no renderer (written before regionctl recorded one)"
	case idx.Renderer != renderer:
		return nil, fmt.Sprintf("the base's deploy/ was rendered by another renderer (%s; this is %s)", shortID(idx.Renderer), shortID(renderer))
	}
	if why := describes(idx, committed); why != "" {
		return nil, "the base's deploy/index.json does not describe its deploy/: " + why
	}
	return idx, ""
}

// shortID is a renderer's ID as a reader compares them: sha256: and 12
// hex digits.
func shortID(id string) string {
	if len(id) > len("sha256:")+12 {
		return id[:len("sha256:")+12]
	}
	return id
}

// describes says how idx fails to describe a committed deploy/ (its files
// by path relative to deploy/), or "": a render writes every file
// index.json lists, and every region's and cluster's among them, so a tree
// without one of them, or an index that gives a cluster a file it does not
// list, was written or edited by something else. A committed file the
// index does not list is no cluster's: the review holds it to the head's
// render like any file no cluster owns, and reports it, trusted or not.
func describes(idx *render.Index, committed map[string]plumbing.Hash) string {
	listed := make(map[string]bool, len(idx.Files))
	for _, f := range idx.Files {
		if _, ok := committed[f]; !ok {
			return "it lists " + f + ", which is not committed"
		}
		listed[f] = true
	}
	for _, r := range idx.Regions {
		for _, f := range r.Files {
			if !listed[f] {
				return "region " + r.Name + "'s " + f + " is not among its files"
			}
		}
	}
	for _, c := range idx.Clusters {
		for _, f := range c.Files {
			if !listed[f] {
				return "cluster " + c.ID + "'s " + f + " is not among its files"
			}
		}
	}
	return ""
}
