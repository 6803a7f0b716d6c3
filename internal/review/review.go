package review

import (
	"fmt"
	"io/fs"
	"os"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
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
	Full bool
	// Hold keeps every file of a Full review's renders, rather than only
	// those that differ between the sides (tests compare the two).
	Hold    bool
	Checker *schema.Checker
	Render  render.Options
	// Trusted says Render.Renderer names this build's renderer by its
	// source (render.Renderer.Modified is false): only then is a base's
	// deploy/ whose index.json names that renderer taken as what this
	// renderer makes of the base's inputs, and the clusters whose inputs
	// did not change left unrendered. A build of modified sources renders
	// every cluster.
	Trusted bool
	// Partial lets a change that skips a step of some clusters' deletion
	// through: those clusters are in Result.Refused, for the caller to
	// leave out (dispatch starts the change's other clusters).
	Partial bool
}

// Result is a review.
type Result struct {
	Report     *diff.Report
	HeadOut    *render.Output
	HeadCommit *object.Commit
	HeadFleet  *config.Fleet // the head's fleet, for the rules held to its date (EKS's support calendar)
	Refused    []diff.Skip   // with Options.Partial: clusters whose deletion skips a step
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

// Run reviews the change from o.Base to o.Head. Git errors come back as
// they are (*gitbase.UserError when the caller named something absent).
func Run(o Options) (*Result, error) {
	repo, err := gitbase.Open(o.Root)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	var base *object.Commit
	baseLabel := o.Base
	if o.Base == "" {
		base, baseLabel, err = repo.DefaultBase(o.Branch)
	} else {
		base, err = repo.Commit(o.Base)
	}
	if err != nil {
		return nil, err
	}
	baseFS, err := repo.FS(base)
	if err != nil {
		return nil, err
	}
	baseLabel = fmt.Sprintf("%s (%s)", short(base), baseLabel)
	// Why the base's committed deploy/ cannot stand for its render, when
	// that is known before anything is read ("" when it may).
	unvouched := vouch(repo, base, o)

	var headFS fs.FS
	var head *object.Commit
	var uncommitted []string
	var headLabel string
	if o.Head != "" {
		if head, err = repo.Commit(o.Head); err != nil {
			return nil, err
		}
		// The head's tree is read through a handle of its own, while
		// this one reads the base's (below).
		headRepo, err := gitbase.Open(o.Root)
		if err != nil {
			return nil, err
		}
		defer headRepo.Close()
		c, err := headRepo.Commit(head.Hash.String())
		if err != nil {
			return nil, err
		}
		if headFS, err = headRepo.FS(c); err != nil {
			return nil, err
		}
		headLabel = fmt.Sprintf("%s (%s)", short(head), o.Head)
	} else {
		if head, err = repo.Commit("HEAD"); err != nil {
			return nil, err
		}
		headFS = os.DirFS(o.Root)
	}

	// The head's layer files are read and decoded while the base's
	// deploy/ listing and index.json are read from git: the head's come
	// from the working tree or another commit's tree, which is read by
	// its own handle, since go-git's object storage is not safe for
	// concurrent use.
	headFleet := make(chan *fleet.Parsed, 1)
	go func() { headFleet <- fleet.Parse(headFS, "config", o.Checker) }()
	defer func() { <-headFleet }()

	// The working tree's deploy/ is hashed while the fleets load and
	// render: it reads the git index and files, never the object storage
	// the rest of the review reads (go-git's is not safe for concurrent
	// use). Run waits for it on every return, before the repository
	// closes.
	var worktree struct {
		hashes map[string]plumbing.Hash
		err    error
	}
	// The git index is read once for both that and repo.Changed (below),
	// and let go when both are done, before the fleets render.
	var indexUsers sync.WaitGroup
	hashed := make(chan struct{})
	if o.Drift && o.Head == "" {
		indexUsers.Add(1)
		go func() {
			defer close(hashed)
			worktree.hashes, worktree.err = repo.WorktreeHashes(o.Root, deployDir)
			indexUsers.Done()
		}()
	} else {
		close(hashed)
	}
	if o.Head == "" {
		indexUsers.Add(1) // repo.Changed, below
	}
	go func() {
		indexUsers.Wait()
		repo.ReleaseIndex()
	}()
	defer func() { <-hashed }()

	// The base's committed deploy/ (its listing and index.json) is read
	// through a handle of its own while the fleets load: the review needs
	// the index only once it knows which clusters are unchanged.
	deployed := make(chan committedDeploy, 1)
	go func() { deployed <- readCommitted(o.Root, base.Hash) }()
	var baseDeploy *committedDeploy
	waitDeployed := func() *committedDeploy {
		if baseDeploy == nil {
			d := <-deployed
			baseDeploy = &d
		}
		return baseDeploy
	}
	defer waitDeployed()
	var trust func() (*render.Index, string)
	if !o.Full && unvouched == "" {
		trust = func() (*render.Index, string) {
			d := waitDeployed()
			return trustIndex(d.index, d.hashes, o.Render.Renderer)
		}
	}
	if o.Head == "" {
		// Which inputs the working tree changed is found while the head
		// is read and decoded; it reads the commit's tree, which nothing
		// else reads through this handle until the fleets load.
		uncommitted, err = repo.Changed(head, o.Root, render.Inputs...)
		indexUsers.Done()
		if err != nil {
			return nil, err
		}
		headLabel = fmt.Sprintf("%s (HEAD)", short(head))
		if len(uncommitted) > 0 {
			headLabel = fmt.Sprintf("working tree (HEAD %s + uncommitted changes)", short(head))
		}
	}
	// A whole review against a committed base streams both renders: the
	// base's view is what it committed (asCommitted), so its render need
	// give only each file's path and owner, and the head's files the base
	// committed as they are settle (settler).
	var streams *render.Streams
	var settle *settler
	if o.Full && !o.Hold {
		committedBase := func() *committedDeploy {
			if d := waitDeployed(); d.err == nil && len(d.hashes) > 0 {
				return d
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
	parsedHead := <-headFleet
	headFleet <- parsedHead // for the deferred wait
	pair, err := render.FromFSPair(baseFS, headFS, parsedHead, o.Checker, o.Render, trust, streams)
	if err != nil {
		return nil, &InputError{err}
	}
	var settled map[string]plumbing.Hash
	if settle != nil && pair.HeadOut != nil {
		pair.HeadOut, settled = settle.output(pair.HeadOut), settle.settled
	}
	if err := waitDeployed().err; err != nil {
		return nil, err
	}
	committed, trusted := baseDeploy.hashes, pair.Trusted
	for _, s := range []struct {
		label string
		diags diag.Diagnostics
		out   *render.Output
	}{{baseLabel, pair.BaseDiags, pair.BaseOut}, {headLabel, pair.HeadDiags, pair.HeadOut}} {
		if s.diags.HasErrors() || s.out == nil {
			return nil, &NotRendered{Label: s.label, Diags: s.diags}
		}
	}
	skips := diff.LifecycleSkips(pair.Base, pair.Head, baseLabel)
	if len(skips) > 0 && !o.Partial {
		var ds diag.Diagnostics
		for _, s := range skips {
			ds = append(ds, s.Diag)
		}
		return nil, &Refused{Diags: ds}
	}
	baseSide := diff.Side{Label: baseLabel, Fleet: pair.Base, Output: pair.BaseOut}
	if len(committed) > 0 {
		// What the base deployed is what it committed, whatever this
		// regionctl would render of it: a renderer that changed shows as
		// changed files, and starts the pipelines they need.
		baseSide.Output = asCommitted(pair.BaseOut, baseFS, committed, baseDeploy.owners, pair.HeadOut, settled)
	}
	baseSide.Settled = settled
	if len(pair.Unchanged) > 0 && o.Drift {
		baseSide.Committed = committed
		baseSide.Index = trusted
	}
	headSide := diff.Side{Label: headLabel, Fleet: pair.Head, Output: pair.HeadOut}
	if o.Drift {
		// The head's deploy/ by blob hash: a commit's from its tree, the
		// working tree's as git status finds it, reading only the files
		// the index cannot vouch for.
		var deploy map[string]plumbing.Hash
		if o.Head != "" {
			deploy, err = blobHashes(o.Root, head)
		} else {
			<-hashed
			deploy, err = worktree.hashes, worktree.err
		}
		if err != nil {
			return nil, err
		}
		if len(deploy) > 0 {
			headSide.Deploy = deploy
		}
	}
	orders, err := schema.RolloutOrders()
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(orders))
	for k := range orders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r := diff.Compare(baseSide, headSide, keys)
	if len(r.Drift) > 0 {
		r.DriftFiles = driftDiffs(r, headSide.Output.ByPath(), headFS, baseFS)
	}
	diff.MarkDowngrades(r, orders)
	diff.Redact(r)
	r.Uncommitted = uncommitted
	r.BaseRendered = pair.BaseRendered
	if unvouched != "" {
		r.BaseRendered = unvouched
	}
	return &Result{Report: r, HeadOut: headSide.Output, HeadCommit: head, HeadFleet: pair.Head, Refused: skips}, nil
}

// asCommitted is the base's render with each file as the base committed it:
// a file the base rendered but never committed was never deployed, and a
// committed file the render lacks (of a cluster or region it rendered) was.
// Owners come from the render, else from owners (the committed index.json's,
// render.Index.Owners). A committed file whose blob the head renders byte
// for byte (the same git blob hash) takes the head's bytes instead of being
// read from git: most files of a changed cluster do not change. The settled
// files (settler), the same on both sides, are left out.
func asCommitted(out *render.Output, fsys fs.FS, committed map[string]plumbing.Hash, owners map[string]string, head *render.Output, settled map[string]plumbing.Hash) *render.Output {
	// The base's files: those it rendered and committed, then those it
	// committed of owners it rendered but renders no more.
	rendered := make(map[string]bool, len(out.Artifacts))
	var arts []render.Artifact
	for _, a := range out.Artifacts {
		rendered[a.Path] = true
		if _, ok := committed[a.Path]; ok {
			if _, same := settled[a.Path]; !same {
				arts = append(arts, a)
			}
		}
	}
	for p := range committed {
		if _, same := settled[p]; same {
			continue
		}
		if owner, known := owners[p]; known && !rendered[p] && !out.Skipped[owner] {
			arts = append(arts, render.Artifact{Path: p, Owner: owner})
		}
	}
	headBytes := make(map[string][]byte, len(arts))
	for _, a := range head.Artifacts {
		headBytes[a.Path] = a.Bytes
	}
	// Each file is hashed, or read, by one of ReadFiles' workers: the
	// hashing runs on every core while the reads take turns on the
	// handle.
	paths := make([]string, len(arts))
	for i := range arts {
		paths[i] = arts[i].Path
	}
	contents, errs := deploytree.ReadFiles(paths, func(p string) ([]byte, error) {
		if b := headBytes[p]; b != nil && plumbing.ComputeHash(plumbing.BlobObject, b) == committed[p] {
			return b, nil
		}
		return fs.ReadFile(fsys, deployDir+"/"+p)
	})
	// A file that cannot be read is left out.
	kept := arts[:0]
	for i, a := range arts {
		if errs[i] == nil {
			a.Bytes = contents[i]
			kept = append(kept, a)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Path < kept[j].Path })
	c := *out
	c.Artifacts = kept
	return &c
}

// committedDeploy is a commit's deploy/: each file's blob hash, and
// index.json (nil when absent or unreadable) with the owner of each file it
// lists (Index.Owners: asCommitted and the settler both need it).
type committedDeploy struct {
	hashes map[string]plumbing.Hash
	index  *render.Index
	owners map[string]string
	err    error
}

// readCommitted reads commit c's deploy/ through a repository handle of its
// own, so that it may run beside the rest of the review.
func readCommitted(root string, c plumbing.Hash) committedDeploy {
	repo, err := gitbase.Open(root)
	if err != nil {
		return committedDeploy{err: err}
	}
	defer repo.Close()
	commit, err := repo.Commit(c.String())
	if err != nil {
		return committedDeploy{err: err}
	}
	hashes, err := repo.BlobHashes(commit, deployDir)
	if err != nil {
		return committedDeploy{err: err}
	}
	fsys, err := repo.FS(commit)
	if err != nil {
		return committedDeploy{err: err}
	}
	idx := readIndex(fsys)
	return committedDeploy{hashes: hashes, index: idx, owners: idx.Owners()}
}

// blobHashes is the deploy/ of commit c by blob hash, read through a
// handle of its own.
func blobHashes(root string, c *object.Commit) (map[string]plumbing.Hash, error) {
	repo, err := gitbase.Open(root)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	commit, err := repo.Commit(c.Hash.String())
	if err != nil {
		return nil, err
	}
	return repo.BlobHashes(commit, deployDir)
}

// readIndex is the deploy/index.json of fsys, or nil.
func readIndex(fsys fs.FS) *render.Index {
	b, err := fs.ReadFile(fsys, deployDir+"/"+render.IndexPath)
	if err != nil {
		return nil
	}
	idx, err := render.ParseIndex(b)
	if err != nil {
		return nil
	}
	return idx
}

func short(c *object.Commit) string { return c.Hash.String()[:8] }

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
