package review

import (
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/manifests"
	"github.com/regionctl/regionctl/internal/schema"
)

// compare is the last stage: it holds both renders to what each side
// committed and compares them. A side that does not render, or a deletion
// that skips a step (unless o.Partial), ends the review with an error.
func compare(repo *gitbase.Repo, e *ends, o Options, l *loaded, d *committedDeploy, h headState, unvouched string) (*Result, error) {
	pair := l.pair
	headLabel := e.label(h.uncommitted)
	for _, s := range []struct {
		label string
		diags diag.Diagnostics
		ok    bool
	}{{e.baseLabel, pair.BaseDiags, pair.BaseOut != nil}, {headLabel, pair.HeadDiags, pair.HeadOut != nil}} {
		if s.diags.HasErrors() || !s.ok {
			return nil, &NotRendered{Label: s.label, Diags: s.diags}
		}
	}
	skips := diff.LifecycleSkips(pair.Base, pair.Head, e.baseLabel)
	if len(skips) > 0 && !o.Partial {
		var ds diag.Diagnostics
		for _, s := range skips {
			ds = append(ds, s.Diag)
		}
		return nil, &Refused{Diags: ds}
	}
	baseSide := diff.Side{Label: e.baseLabel, Fleet: pair.Base, Output: pair.BaseOut, Settled: l.settled}
	if len(d.hashes) > 0 {
		// What the base deployed is what it committed, whatever this
		// regionctl would render of it: a renderer that changed shows as
		// changed files, and starts the pipelines they need.
		baseSide.Output = asCommitted(pair.BaseOut, e.baseFS, *d, pair.HeadOut, l.settled, o.ListOnly)
		baseSide.Blobs = d.hashes
	}
	// Nothing reads the base's committed index.json (and the owner of
	// each file it lists) past this point but through the pair (Trusted,
	// when the review trusted it): a review whose base another renderer
	// wrote lets go of both before the comparison, its peak (19,215
	// clusters: some 55 MB of live heap).
	d.index, d.owners = nil, nil
	if (len(pair.Unchanged) > 0 || len(pair.SameChains) > 0) && o.Drift {
		baseSide.Committed = d.hashes
		baseSide.Index = pair.Trusted
	}
	headSide := diff.Side{Label: headLabel, Fleet: pair.Head, Output: pair.HeadOut}
	if len(h.deploy) > 0 {
		headSide.Deploy = h.deploy
	}
	keys, err := schema.RolloutKeys()
	if err != nil {
		return nil, err
	}
	orders, err := schema.RolloutOrders()
	if err != nil {
		return nil, err
	}
	r := diff.Compare(baseSide, headSide, keys, o.ListOnly)
	if len(r.Drift) > 0 {
		r.DriftFiles = driftDiffs(r, headSide.Output.ByPath(), e.headFS, e.baseFS)
	}
	if o.Manifests {
		if err := manifestChanges(repo, e, headLabel, l.settled, r, baseSide.Output, headSide.Output, pair.Base, pair.Head, manifests.Cache{Dir: o.ChartCache}); err != nil {
			return nil, err
		}
	}
	diff.MarkDowngrades(r, orders)
	diff.Redact(r)
	r.Uncommitted = h.uncommitted
	r.BaseRendered = pair.BaseRendered
	if unvouched != "" {
		r.BaseRendered = unvouched
	}
	return &Result{Report: r, HeadOut: headSide.Output, HeadCommit: e.head, HeadFleet: pair.Head, Refused: skips, baseAlike: pair.BaseAlike}, nil
}
