package review

import (
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// deployDir is where the rendered tree lives in a repository.
const deployDir = "deploy"

// Options say what to compare and how.
type Options struct {
	Root       string // the repository
	Base, Head string // refs; an empty Base is the merge base with the deploy branch, an empty Head the working tree
	// Branch is the deploy branch (gitops.revision; "" is main): an empty
	// Base is the merge base of HEAD and the branch as gitbase.DefaultBase
	// finds it (its upstream, origin/<Branch>, <Branch>, then origin/HEAD).
	Branch string
	// Drift holds the head's committed deploy/ to its render.
	Drift bool
	// Full renders every cluster on both sides.
	Full    bool
	Checker *schema.Checker
	Render  render.Options
	// Trusted says Render.Renderer names this build's renderer by its
	// source (render.Renderer.Modified is false): only then is a base's
	// deploy/ whose index.json names that renderer taken as what this
	// renderer makes of the base's inputs, and the clusters whose inputs
	// did not change left unrendered. A build of modified sources renders
	// every cluster.
	Trusted bool
	// Manifests renders the charts of this repository's Applications that
	// the change alters, on both sides, into Report.Manifests (render
	// --diff).
	Manifests bool
	// ChartCache is the directory of the cache of other projects' charts
	// (manifests.Cache; regionctl charts pull): their Applications are
	// rendered when both sides' charts are there. "" renders none.
	ChartCache string
	// ListOnly lists the changed files in Report.Files without their
	// unified diffs, for a caller that shows none (affected prints
	// clusters; at 19,215 clusters the diffs of a sector's change are half
	// a second of CPU).
	ListOnly bool
	// Partial lets a change that skips a step of some clusters' deletion
	// through: those clusters are in Result.Refused, for the caller to
	// leave out (dispatch starts the change's other clusters).
	Partial bool

	// hold keeps every file of a review's renders, rather than only
	// those that differ between the sides: this package's tests compare
	// the two.
	hold bool
}

// Result is a review.
type Result struct {
	Report     *diff.Report
	HeadOut    *render.Output
	HeadCommit *object.Commit
	HeadFleet  *config.Fleet // the head's fleet, for the rules held to its date (EKS's support calendar)
	Refused    []diff.Skip   // with Options.Partial: clusters whose deletion skips a step

	// baseAlike counts the clusters a base rendered again left to the
	// head's render (render.Pair's BaseAlike): this package's tests see
	// it.
	baseAlike int
}

// NotRendered says one side of the review does not render.
type NotRendered struct {
	Label string
	Diags diag.Diagnostics
}

func (e *NotRendered) Error() string { return e.Label + " does not render; fix the errors above" }

// Refused is a change the review refuses: a cluster deleted in fewer
// steps than its lifecycle takes (diff.Lifecycle).
type Refused struct{ Diags diag.Diagnostics }

func (e *Refused) Error() string {
	return "the change skips a step of a cluster's deletion; fix the errors above"
}

// InputError is a repository the review cannot read as a fleet.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Run reviews the change from o.Base to o.Head, in stages: the ends
// (resolve: which commits, which trees), then, beside one another, the
// base's committed deploy/ (readCommitted), the head's deploy/ and the
// working tree's changes (readHead) and the head's layer files (fleet.Parse),
// then the fleets loaded and rendered (load), then the comparison (compare).
// Each stage that reads git beside another reads through a handle of its
// own (withHandle): go-git's object storage is not safe for concurrent
// use. Git errors come back as they are (*gitbase.UserError when the caller
// named something absent).
func Run(o Options) (*Result, error) {
	repo, err := gitbase.Open(o.Root)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	e, err := resolve(repo, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	// Why the base's committed deploy/ cannot stand for its render, when
	// that is known before anything is read ("" when it may).
	unvouched := vouch(repo, e.base, o)
	b := beside(o, e)
	defer b.wait()
	l, err := load(e, o, b.parsed.Wait(), unvouched, func() committedDeploy { return *b.committed.Wait() })
	if err != nil {
		return nil, err
	}
	d := b.committed.Wait()
	if d.err != nil {
		return nil, d.err
	}
	h, err := b.head.Wait().get()
	if err != nil {
		return nil, err
	}
	if err := b.warm.Wait(); err != nil {
		return nil, err
	}
	return compare(repo, e, o, l, d, h, unvouched)
}

// besides are the stages that run while the fleets load.
type besides struct {
	committed *par.Future[*committedDeploy]
	head      *par.Future[result[headState]]
	parsed    *par.Future[*fleet.Parsed]
	// warm reads, while the fleets load, what later stages ask for once
	// a process: the Terraform roots' declarations the render checks
	// against (the load asks first thing once the head's files are
	// parsed) and the schema's rollout orders (compiling it) the compare
	// stage asks for.
	warm *par.Future[error]
}

// beside starts the stages that read what the load does not wait for: the
// base's committed deploy/ (the load waits for its index only once it knows
// which clusters are unchanged), the head's deploy/ and the working tree's
// changes, and the head's layer files, read through the head's own handle.
func beside(o Options, e *ends) *besides {
	return &besides{
		committed: par.Go(func() *committedDeploy {
			d := readCommitted(o.Root, e.base.Hash)
			return &d
		}),
		head: par.Go(func() result[headState] {
			h, err := readHead(o.Root, e.head.Hash, e.worktree, o.Drift)
			return result[headState]{h, err}
		}),
		parsed: par.Go(func() *fleet.Parsed { return fleet.Parse(e.headFS, "config", o.Checker) }),
		warm: par.Go(func() error {
			render.Prepare()
			_, err := schema.RolloutOrders()
			return err
		}),
	}
}

// wait waits for every stage, so that none reads a tree whose handle is
// closed after Run returns.
func (b *besides) wait() {
	b.committed.Wait()
	b.head.Wait()
	b.parsed.Wait()
	b.warm.Wait()
}

// result is a value or an error, as a stage gives it.
type result[T any] struct {
	v   T
	err error
}

func (r result[T]) get() (T, error) { return r.v, r.err }

// withHandle runs fn on a repository handle of its own, opened for it and
// closed when it returns: a stage that runs beside another reads git only
// through the handle it is given here, so no handle is shared.
func withHandle[T any](root string, fn func(*gitbase.Repo) (T, error)) (T, error) {
	repo, err := gitbase.Open(root)
	if err != nil {
		var zero T
		return zero, err
	}
	defer repo.Close()
	return fn(repo)
}
