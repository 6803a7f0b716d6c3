package cli

import (
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/renderstate"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// reviewRepo is a git repository holding the golden uneven-sectors fleet
// (five sectors, two environments, five regions) with its deploy/ rendered
// and committed, as a fleet repository's main is.
type reviewRepo struct{ *testrepo.Repo }

func newReviewRepo(t *testing.T) *reviewRepo {
	t.Helper()
	r := &reviewRepo{testrepo.Golden(t, "uneven-sectors")}
	r.render()
	r.Commit("fleet")
	return r
}

// withRenderer makes this test's regionctl a build whose renderer is r.
func withRenderer(t *testing.T, r render.Renderer) {
	old := renderer
	renderer = func() render.Renderer { return r }
	t.Cleanup(func() { renderer = old })
}

func (r *reviewRepo) render() {
	r.T.Helper()
	var errs strings.Builder
	if code := Run([]string{"--root", r.Dir, "--no-cache", "render"}, io.Discard, &errs); code != 0 {
		r.T.Fatalf("render: exit %d\n%s", code, errs.String())
	}
}

// TestReviewLeavesOutUnchangedRegionalClusters: a regional cluster's files
// are made of its own config, as a management cluster's are, so a review
// leaves it out in a region where nothing changed (elsewhere its central
// pipeline may run for its region's chain: the next test). It is still
// checked (the central pipeline's policy is made of every region's).
func TestReviewLeavesOutUnchangedRegionalClusters(t *testing.T) {
	r := newReviewRepo(t)
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	r.render()
	r.Commit("sector change")
	a := &app{stdout: io.Discard, stderr: io.Discard, root: r.Dir, noCache: true}
	_, out, _, err := a.review("HEAD~1", "HEAD", true)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Unchanged["us-east-1/regional"] {
		t.Errorf("the regional cluster of an unchanged region was rendered; left out: %v", out.Unchanged)
	}
	for id := range out.Unchanged {
		if strings.HasPrefix(id, "eu-west-1/") {
			t.Errorf("%s of the changed sector was left out", id)
		}
	}
}

// TestReviewHoldsTheRunOfEveryClusterItRuns: dispatch and affected take the
// PipelineRun of every cluster whose pipeline must run from the review's
// head render. A regional cluster whose own config did not change still
// runs the central pipeline when its region's identity chain changes, as
// when a management cluster's OIDC bucket is renamed, so it is rendered.
func TestReviewHoldsTheRunOfEveryClusterItRuns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *reviewRepo)
	}{
		{"a management cluster added to a region", func(r *reviewRepo) {
			r.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
		}},
		{"a management cluster's OIDC bucket renamed", func(r *reviewRepo) {
			r.Write("config/clusters/us-east-1/mc01.yaml", r.Read("config/clusters/us-east-1/mc01.yaml")+"hypershift:\n  oidc_bucket: hypershift-oidc-renamed-us-east-1-mc01\n")
		}},
		{"a sector change", func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReviewRepo(t)
			tc.change(r)
			r.render()
			r.Commit(tc.name)
			a := &app{stdout: io.Discard, stderr: io.Discard, root: r.Dir, noCache: true}
			rep, out, _, err := a.review("HEAD~1", "HEAD", false)
			if err != nil {
				t.Fatal(err)
			}
			files := out.ByPath()
			runs := diff.Runs(rep.Affected)
			if len(runs) == 0 {
				t.Fatal("no pipeline runs")
			}
			for _, c := range runs {
				if files[tekton.Path(c.Environment, c.Region, c.Cluster)] == nil {
					t.Errorf("the %s pipeline of %s runs, but the review did not render its PipelineRun", c.Pipeline, c.ID)
				}
			}
		})
	}
}

// TestReviewOfAStaleBaseIsWhole: when the base's deploy/ does not list a
// cluster (it was not rendered when committed), nothing is left out.
func TestReviewOfAStaleBaseIsWhole(t *testing.T) {
	r := newReviewRepo(t)
	r.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
	r.Commit("a cluster, not rendered")
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	r.render()
	r.Commit("sector change, rendered")
	a := &app{stdout: io.Discard, stderr: io.Discard, root: r.Dir, noCache: true}
	rep, out, _, err := a.review("HEAD~1", "HEAD", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Unchanged) != 0 {
		t.Errorf("left out %d clusters of a stale base", len(out.Unchanged))
	}
	if len(rep.Drift) != 0 {
		t.Errorf("drift %v", rep.Drift)
	}
}

// TestRendererChangeStartsPipelines: the base deployed what it committed.
// When a newer regionctl renders a cluster's files differently, the commit
// that re-renders them changes those files, and their pipelines run, though
// no config changed; neither side calls it drift.
func TestRendererChangeStartsPipelines(t *testing.T) {
	r := newReviewRepo(t)
	const file = "deploy/production/us-east-1/terraform/mc01.tfvars.json"
	rendered := r.Read(file)
	// What an older renderer wrote: another layout of the same variables,
	// under its own version.
	r.Write(file, strings.ReplaceAll(rendered, "\n  ", "\n    "))
	r.Edit("deploy/index.json", `"renderer": "`+renderer().ID+`"`, `"renderer": "sha256:0000"`)
	r.Commit("deployed by another renderer")
	r.render()
	r.Commit("re-rendered by this regionctl")
	for _, full := range []bool{false, true} {
		a := &app{stdout: io.Discard, stderr: io.Discard, root: r.Dir, noCache: true, fullReview: full}
		rep, _, _, err := a.review("HEAD~1", "HEAD", true)
		if err != nil {
			t.Fatal(err)
		}
		if want := "rendered by another renderer (sha256:0000; this is sha256:"; !full && !strings.Contains(rep.BaseRendered, want) {
			t.Errorf("the review does not say why it rendered the base: %q", rep.BaseRendered)
		}
		var files []string
		for _, f := range rep.Files {
			files = append(files, f.Path)
		}
		if !strings.Contains(strings.Join(files, " "), "production/us-east-1/terraform/mc01.tfvars.json") {
			t.Errorf("full=%v: the re-rendered file is not among the changed files %v", full, files)
		}
		var runs []string
		for _, c := range diff.Runs(rep.Affected) {
			runs = append(runs, c.Pipeline+" "+c.ID)
		}
		if !strings.Contains(strings.Join(runs, ","), "regional us-east-1/mc01") {
			t.Errorf("full=%v: no pipeline runs for the re-rendered cluster: %v", full, runs)
		}
		if len(rep.Drift) != 0 {
			t.Errorf("full=%v: drift %v", full, rep.Drift)
		}
	}
}

// TestModifiedBuildsRenderEverything: a build of modified sources may not
// be the renderer its ID names, so its review renders every cluster, even
// against a deploy/ whose index.json names its ID; the same build from
// committed sources leaves the unchanged clusters out.
func TestModifiedBuildsRenderEverything(t *testing.T) {
	r := newReviewRepo(t)
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	r.render()
	r.Commit("sector change")
	for _, modified := range []bool{false, true} {
		withRenderer(t, render.Renderer{ID: renderer().ID, Modified: modified})
		a := &app{stdout: io.Discard, stderr: io.Discard, root: r.Dir, noCache: true}
		rep, out, _, err := a.review("HEAD~1", "HEAD", true)
		if err != nil {
			t.Fatal(err)
		}
		if modified && (len(out.Unchanged) != 0 || !strings.Contains(rep.BaseRendered, "modified sources")) {
			t.Errorf("a build of modified sources left out %d clusters; base re-rendered: %q", len(out.Unchanged), rep.BaseRendered)
		}
		if !modified && (len(out.Unchanged) == 0 || rep.BaseRendered != "") {
			t.Errorf("a build of committed sources rendered every cluster of a base its renderer wrote: %q", rep.BaseRendered)
		}
	}
}

// TestBaseOffTheDeployBranchIsNotTrusted: a base on another branch was not
// checked by the deploy branch's CI, so its deploy/ may be edited by hand
// though its index.json names this renderer. The review renders it and says
// why, and a hand edit the change carries along shows as a file the head
// has not rendered yet, where a trusted base would have vouched for it.
func TestBaseOffTheDeployBranchIsNotTrusted(t *testing.T) {
	r := newReviewRepo(t)
	const file = "deploy/production/us-east-1/terraform/mc01.tfvars.json" // an unchanged cluster's
	if err := r.WT.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true, Keep: true}); err != nil {
		t.Fatal(err)
	}
	r.Edit(file, `"node_max": 6`, `"node_max": 60`)
	r.Commit("hand edit on a branch")
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	r.render()
	r.Edit(file, `"node_max": 6`, `"node_max": 60`) // carried along
	r.Commit("sector change")
	a := &app{stdout: io.Discard, stderr: io.Discard, root: r.Dir, noCache: true}
	rep, out, _, err := a.review("HEAD~1", "HEAD", true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.BaseRendered, "is not on the first-parent history of main") || len(out.Unchanged) != 0 {
		t.Errorf("a base off the deploy branch was trusted: base re-rendered %q, %d clusters left out", rep.BaseRendered, len(out.Unchanged))
	}
	var files []string
	for _, f := range rep.Files {
		files = append(files, f.Path)
	}
	if !strings.Contains(strings.Join(files, " "), "production/us-east-1/terraform/mc01.tfvars.json") || rep.Stale == 0 {
		t.Errorf("the hand edit the change carries is not shown (files %v, %d stale)", files, rep.Stale)
	}
	// The same two commits on main: the base is vouched for.
	r2 := newReviewRepo(t)
	r2.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	r2.render()
	r2.Commit("sector change")
	a2 := &app{stdout: io.Discard, stderr: io.Discard, root: r2.Dir, noCache: true}
	if rep, out, _, err := a2.review("HEAD~1", "HEAD", true); err != nil || rep.BaseRendered != "" || len(out.Unchanged) == 0 {
		t.Errorf("a base on main was not trusted: %v, %q", err, rep.BaseRendered)
	}
}

// TestFirstRenderOfACheckoutOfTheDeployBranchOnlyLooks: with no record of
// a render yet (a fresh clone), a render of a clean checkout of the deploy
// branch whose committed index.json names this renderer writes nothing and
// renders nothing: that commit's CI held its deploy/ to render --check.
// Anything else renders: an uncommitted input, a file added to deploy/,
// another renderer, a commit off the branch.
func TestFirstRenderOfACheckoutOfTheDeployBranchOnlyLooks(t *testing.T) {
	r := newReviewRepo(t)
	// Cloned a while ago: nothing, refs included, was written just now.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	run := func() string {
		t.Helper()
		os.RemoveAll(filepath.Join(r.Dir, ".regionctl")) // no record: a fresh clone
		var out strings.Builder
		Run([]string{"--root", r.Dir, "render"}, &out, &out)
		return out.String()
	}
	const trusted = "rendered by this renderer and checked by its CI), nothing written"
	if out := run(); !strings.Contains(out, trusted) {
		t.Fatalf("a clean checkout of main rendered:\n%s", out)
	}
	// The record it leaves lets the next render only look by size and time.
	var out strings.Builder
	if Run([]string{"--root", r.Dir, "render"}, &out, &out); !strings.Contains(out.String(), "by size and time") {
		t.Errorf("no record after a render that trusted the commit:\n%s", out.String())
	}
	// That record is what a snapshot taken now holds (renderstate.Take of
	// every tree a render reads and writes): deploy/'s files and the
	// inputs' as the trusting check's walks found them.
	recorded := renderstate.Load((&app{root: r.Dir}).statePath())
	now, err := (&app{root: r.Dir}).snapshot()
	if err != nil || recorded == nil {
		t.Fatalf("no record (%v) or no snapshot (%v)", recorded == nil, err)
	}
	if !maps.Equal(recorded.Files, now) {
		t.Errorf("the record holds %d files, a snapshot %d, or other sizes and times", len(recorded.Files), len(now))
	}
	// An input touched since is seen: the render does not only look.
	prod2 := filepath.Join(r.Dir, "config/sectors/prod-2.yaml")
	if err := os.Chtimes(prod2, old.Add(time.Minute), old.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if Run([]string{"--root", r.Dir, "render"}, &out, &out); strings.Contains(out.String(), "by size and time") {
		t.Errorf("an input touched after the record went unseen:\n%s", out.String())
	}
	// That record is deploy/ as the trusting walk found it: a file edited
	// since is seen, and rendered back.
	r.Edit("deploy/production/us-east-1/terraform/mc01.tfvars.json", `"node_max": 6`, `"node_max": 7`)
	out.Reset()
	if Run([]string{"--root", r.Dir, "render"}, &out, &out); strings.Contains(out.String(), "by size and time") ||
		!strings.Contains(r.Read("deploy/production/us-east-1/terraform/mc01.tfvars.json"), `"node_max": 6`) {
		t.Errorf("a deploy/ file edited after the record went unseen:\n%s", out.String())
	}
	index := r.Read("deploy/index.json")
	for name, tc := range map[string]struct{ do, undo func() }{
		"an uncommitted input": {
			do:   func() { r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\n") },
			undo: func() { r.Edit("config/sectors/prod-2.yaml", "max_update: 50%\n", "max_update: 50%") },
		},
		"a file added to deploy/": {
			do:   func() { r.Write("deploy/notes.txt", "hand-written\n") },
			undo: func() { r.Remove("deploy/notes.txt") },
		},
		"another renderer": {
			do: func() { withRenderer(t, render.Renderer{ID: "sha256:0000"}) },
			// That render wrote its own index.json: put the commit's back.
			undo: func() { r.Write("deploy/index.json", index) },
		},
	} {
		id := renderer().ID
		tc.do()
		if out := run(); strings.Contains(out, trusted) {
			t.Errorf("%s: the render trusted the commit:\n%s", name, out)
		}
		tc.undo()
		withRenderer(t, render.Renderer{ID: id})
		if out := run(); !strings.Contains(out, trusted) {
			t.Fatalf("after undoing %s, a clean checkout rendered:\n%s", name, out)
		}
	}
	if err := r.WT.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true, Keep: true}); err != nil {
		t.Fatal(err)
	}
	r.Write("NOTES.md", "not an input\n")
	r.Commit("a commit off main")
	if out := run(); strings.Contains(out, trusted) {
		t.Errorf("a commit off the deploy branch was trusted:\n%s", out)
	}
}

// TestBaseWhoseIndexDoesNotDescribeItIsNotTrusted: a commit of the deploy
// branch whose deploy/ lacks a file its index.json lists was not all
// written by a render: the review renders that base and says why.
func TestBaseWhoseIndexDoesNotDescribeItIsNotTrusted(t *testing.T) {
	r := newReviewRepo(t)
	r.Remove("deploy/production/us-east-1/terraform/mc01.tfvars.json")
	r.Commit("a rendered file removed by hand")
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	a := &app{stdout: io.Discard, stderr: io.Discard, root: r.Dir, noCache: true}
	rep, out, _, err := a.review("HEAD", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "it lists production/us-east-1/terraform/mc01.tfvars.json, which is not committed"; !strings.Contains(rep.BaseRendered, want) || len(out.Unchanged) != 0 {
		t.Errorf("base re-rendered %q (want %q), %d clusters left out", rep.BaseRendered, want, len(out.Unchanged))
	}
}
