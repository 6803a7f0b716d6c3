package review

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render"
)

// loaded is what the load stage gives: both fleets loaded and rendered,
// and, for a whole review streamed against the base's committed deploy/,
// the head's files the same on both sides, by blob hash (settled).
type loaded struct {
	pair    *render.Pair
	settled map[string]plumbing.Hash
}

// load loads and renders both ends (render.FromFSPair) from the head as
// parsed. committed waits for the base's committed deploy/ (the
// committed stage's); an incremental review asks for it only once the
// fleets are loaded and it knows which clusters are unchanged, and takes
// the base's index when this renderer wrote it and nothing else vouches
// against it (unvouched, vouch's).
func load(e *ends, o Options, parsed *fleet.Parsed, unvouched string, committed func() committedDeploy) (*loaded, error) {
	var trust func() render.Trust
	if !o.Full && unvouched == "" {
		trust = func() render.Trust {
			d := committed()
			idx, why := trustIndex(d.index, d.hashes, o.Render.Renderer)
			// The base's side of the review is what it committed
			// (compare's asCommitted) when it committed anything.
			return render.Trust{Index: idx, Why: why, Committed: d.err == nil && len(d.hashes) > 0}
		}
	}
	// A review against a committed base streams the renders: the base's
	// view is what it committed (asCommitted), so its render, when it has
	// one, need give only each file's path and owner, and the head's files
	// the base committed as they are settle (settler): most files of a
	// changed cluster do not change, and are not held.
	var streams *render.Streams
	var settle *settler
	if !o.hold {
		committedBase := func() *committedDeploy {
			if d := committed(); d.err == nil && len(d.hashes) > 0 {
				return &d
			}
			return nil
		}
		streams = &render.Streams{
			Base: func() func([]render.Artifact) error {
				if committedBase() == nil {
					return nil
				}
				return func([]render.Artifact) error { return nil }
			},
			Head: func(base *render.Output) (func([]render.Artifact) error, bool) {
				d := committedBase()
				if d == nil || base == nil {
					return nil, false
				}
				settle = newSettler(d.hashes, d.owners, base)
				// Nor need the files the base's render kept whole
				// (index.json, the fleet-wide files) be held meanwhile:
				// the base's side is what it committed.
				return settle.take, true
			},
		}
	}
	// Neither side's index.json is compared as text (its changes are the
	// other files'), so the renders do not encode it; a review that holds
	// every file (hold) keeps it, and TestIncrementalReviewMatchesFull
	// holds the two to each other.
	ro := o.Render
	ro.NoIndexBytes = !o.hold
	pair, err := render.FromFSPair(e.baseFS, e.headFS, parsed, o.Checker, ro, trust, streams)
	if err != nil {
		return nil, &InputError{err}
	}
	l := &loaded{pair: pair}
	if settle != nil && pair.HeadOut != nil {
		l.pair.HeadOut, l.settled = settle.output(pair.HeadOut), settle.settled
	}
	return l, nil
}
