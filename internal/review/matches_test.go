package review

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// reviewRepo is a git repository holding the golden uneven-sectors fleet
// with its deploy/ rendered and committed, as a fleet repository's main is.
type reviewRepo struct{ *testrepo.Repo }

func newReviewRepo(t *testing.T) *reviewRepo {
	t.Helper()
	r, _ := fleetRepo(t)
	return &reviewRepo{r}
}

func (r *reviewRepo) render() {
	r.T.Helper()
	renderInto(r.T.(*testing.T), r.Repo)
}

// TestIncrementalReviewMatchesFull: a review that leaves out the clusters
// whose inputs did not change reports exactly what rendering every cluster
// on both sides reports, for changes of every kind, drift the change adds
// included.
func TestIncrementalReviewMatchesFull(t *testing.T) {
	for _, tc := range matchCases() {
		t.Run(tc.name, tc.check)
	}
}

// unchangedMC is prod-1's mc01, untouched by the cases' sector edits.
const unchangedMC = "deploy/production/us-east-1/terraform/mc01.tfvars.json"

// matchCase is a change TestIncrementalReviewMatchesFull reviews.
type matchCase struct {
	name   string
	before func(r *reviewRepo) // rendered and committed before the change
	// handWritten is committed before the change as it leaves the
	// tree, not rendered.
	handWritten func(r *reviewRepo)
	change      func(r *reviewRepo)
	head        string // "" is the working tree
	whole       bool   // every cluster's inputs change: nothing can be left out
	// noDeploy: the base committed no deploy/, so the review renders
	// it, and a whole review holds every file of both sides.
	noDeploy bool
	// drift is a file (under deploy/) the review must find drifted.
	drift string
	// renderer, when set, is the renderer the reviews are made by:
	// not the one that rendered the base's deploy/ (testRenderer).
	// The incremental review renders the base again then, but only
	// the clusters whose inputs changed; the head whole.
	renderer string
}

func matchCases() []matchCase {
	const mc = unchangedMC
	return []matchCase{
		{name: "sector change, rendered", head: "HEAD", change: func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
			r.render()
		}},
		{name: "sector change, not rendered yet", head: "HEAD", change: func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
		}},
		{name: "sector change in the working tree", head: "", change: func(r *reviewRepo) {
			r.Edit("config/sectors/stage-a.yaml", "max_update: 100%", "max_update: 100%\neks:\n  node_max: 12")
		}},
		{name: "hand edit of an unchanged cluster's file", head: "HEAD", drift: mc[len("deploy/"):], change: func(r *reviewRepo) {
			r.Edit(mc, `"node_max": 6`, `"node_max": 60`)
		}},
		{name: "hand edit of an unchanged regional cluster's file", head: "HEAD", change: func(r *reviewRepo) {
			const f = "deploy/production/us-east-1/terraform/regional.tfvars.json"
			r.Edit(f, `"node_max": `, `"node_max": 1`)
		}},
		{name: "hand removal of an unchanged cluster's file", head: "HEAD", change: func(r *reviewRepo) {
			if err := os.Remove(filepath.Join(r.Dir, mc)); err != nil {
				r.T.Fatal(err)
			}
		}},
		{name: "hand edit of an unchanged region's Tekton installation", head: "HEAD", change: func(r *reviewRepo) {
			const f = "deploy/production/us-east-1/tekton/install/cronjob.yaml"
			r.Write(f, r.Read(f)+"# by hand\n")
		}},
		{name: "file added by hand", head: "HEAD", drift: "production/us-east-1/effective/mc09.yaml", change: func(r *reviewRepo) {
			r.Write("deploy/production/us-east-1/effective/mc09.yaml", "eks: {}\n")
		}},
		{name: "hand edit beside a rendered change", head: "HEAD", drift: mc[len("deploy/"):], change: func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
			r.render()
			r.Edit(mc, `"node_max": 6`, `"node_max": 60`)
		}},
		{name: "hand edit of a region's IAM document beside a sector change", head: "HEAD", drift: "production/eu-west-1/iam/minting-role-policy.json", change: func(r *reviewRepo) {
			// prod-2's change leaves eu-west-1's chain as it was: its
			// files are left out of the review, and still held to the
			// base's.
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
			r.render()
			const f = "deploy/production/eu-west-1/iam/minting-role-policy.json"
			r.Write(f, strings.Replace(r.Read(f), "{", "{ ", 1))
		}},
		{name: "region's chain change", head: "HEAD", change: func(r *reviewRepo) {
			r.Write("config/regions/eu-west-1.yaml", r.Read("config/regions/eu-west-1.yaml")+"etcd_backup:\n  retention_days: 40\n")
			r.render()
		}},
		{name: "cluster added", head: "HEAD", change: func(r *reviewRepo) {
			r.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
			r.render()
		}},
		{name: "cluster added whose file the base committed by hand", head: "HEAD", handWritten: func(r *reviewRepo) {
			// The base holds, by hand, the very file the head renders for
			// a cluster it adds: no cluster of the base owns it, so the
			// review shows it added.
			const f = "deploy/production/us-east-1/effective/mc02.yaml"
			other := &reviewRepo{testrepo.Golden(r.T, "uneven-sectors")}
			other.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
			other.render()
			r.Write(f, other.Read(f))
		}, change: func(r *reviewRepo) {
			r.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
			r.render()
		}},
		{name: "component back whose files the base still committed", head: "HEAD", handWritten: func(r *reviewRepo) {
			// The base turned the component off without rendering: its
			// files are still committed and listed, though the base no
			// longer renders them; the head renders them as they were.
			r.Write("config/sectors/prod-2.yaml", r.Read("config/sectors/prod-2.yaml")+"components:\n  maestro-agent:\n    enabled: false\n")
		}, change: func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "components:\n  maestro-agent:\n    enabled: false\n", "")
			r.render()
		}},
		{name: "base without deploy/", head: "HEAD", whole: true, noDeploy: true, handWritten: func(r *reviewRepo) {
			if err := os.RemoveAll(filepath.Join(r.Dir, "deploy")); err != nil {
				r.T.Fatal(err)
			}
		}, change: func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
			r.render()
		}},
		{name: "cluster being deleted", head: "HEAD", change: func(r *reviewRepo) {
			r.Write("config/clusters/eu-west-1/mc02.yaml", r.Read("config/clusters/eu-west-1/mc02.yaml")+"delete: true\n")
			r.render()
		}},
		{name: "global change", head: "HEAD", whole: true, change: func(r *reviewRepo) {
			r.Edit("config/global/defaults.yaml", "node_instance_family: m6i", "node_instance_family: m7i")
			r.render()
		}},
		{name: "gitops repository change", head: "HEAD", whole: true, change: func(r *reviewRepo) {
			// In every cluster's and region's files, in no effective config.
			r.Edit("config/global/defaults.yaml", "repo_url: https://git.example.com/fleet.git", "repo_url: https://git.example.com/other/fleet.git")
			r.render()
		}},
		{name: "approvers change", head: "HEAD", whole: true, change: func(r *reviewRepo) {
			r.Edit("config/global/defaults.yaml", "approvers: [arn:aws:iam::123456789012:role/approvers]", "approvers: [arn:aws:iam::123456789012:role/other-approvers]")
			r.render()
		}},
		{name: "sector change beside a cluster whose pipeline is removed", head: "HEAD",
			// The ApplicationSet leaves out prod-1, where this is the only
			// management cluster.
			before: destroyedThen("delete: true\ndelete_pipeline: true\n"), change: prod3Change},
		{name: "sector change beside a cluster whose pipeline is removed by delete_pipeline alone", head: "HEAD",
			// Its region is unchanged, so its config is checked on neither
			// side: the review still knows delete_pipeline implies delete.
			before: destroyedThen("delete_pipeline: true\n"), change: prod3Change},
		{name: "another renderer: sector change", head: "HEAD", renderer: "sha256:another", change: func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
			r.render()
		}},
		{name: "another renderer: sector change in the working tree", head: "", renderer: "sha256:another", change: func(r *reviewRepo) {
			r.Edit("config/sectors/stage-a.yaml", "max_update: 100%", "max_update: 100%\neks:\n  node_max: 12")
		}},
		{name: "another renderer: hand edit beside a rendered change", head: "HEAD", renderer: "sha256:another", drift: mc[len("deploy/"):], change: func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
			r.render()
			r.Edit(mc, `"node_max": 6`, `"node_max": 60`)
		}},
		{name: "another renderer: cluster added and one being deleted", head: "HEAD", renderer: "sha256:another", change: func(r *reviewRepo) {
			r.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
			r.Write("config/clusters/eu-west-1/mc02.yaml", r.Read("config/clusters/eu-west-1/mc02.yaml")+"delete: true\n")
			r.render()
		}},
		{name: "another renderer: global change", head: "HEAD", whole: true, renderer: "sha256:another", change: func(r *reviewRepo) {
			r.Edit("config/global/defaults.yaml", "node_instance_family: m6i", "node_instance_family: m7i")
			r.render()
		}},
		{name: "chart added", head: "HEAD", whole: true, change: func(r *reviewRepo) {
			r.Write("charts/logging/Chart.yaml", "apiVersion: v2\nname: logging\nversion: 0.1.0\n")
			r.Write("config/global/90-logging.yaml", "components:\n  logging:\n    runs_on: [management]\n    chart_revision: logging/v1.0.0\n")
			r.render()
		}},
	}
}

// matchRun is one review of a matchCase: its report, the clusters and
// regions it left out of the head's render (by ID or name), the head's
// files it holds, and how many clusters its base's render left to the
// head's.
type matchRun struct {
	report  *diff.Report
	leftOut map[string]bool
	files   map[string][]byte
	alike   int
}

// review reviews base to head in r's repository by renderer.
func (tc matchCase) review(t *testing.T, r *reviewRepo, base, renderer string, full, hold, listOnly bool) matchRun {
	t.Helper()
	res, err := Run(Options{Root: r.Dir, Base: base, Head: tc.head, Drift: true, Full: full, hold: hold, ListOnly: listOnly,
		Checker: testChecker(t), Render: render.Options{Renderer: renderer}, Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing checks a cluster once the pair is loaded: the results the
	// checker kept for the head to take the base's are let go.
	if n := testChecker(t).Kept(); n != 0 {
		t.Errorf("the checker keeps %d cluster results after the review (full %v)", n, full)
	}
	return matchRun{report: res.Report, leftOut: res.HeadOut.Unchanged, files: res.HeadOut.ByPath(), alike: res.baseAlike}
}

// prepare makes the case's repository and returns it with the review's
// base.
func (tc matchCase) prepare(t *testing.T) (*reviewRepo, string) {
	r := newReviewRepo(t)
	if tc.before != nil {
		tc.before(r)
		r.render()
		r.Commit("before")
	}
	if tc.handWritten != nil {
		tc.handWritten(r)
		r.Commit("by hand")
	}
	tc.change(r)
	if tc.head == "" {
		return r, "HEAD"
	}
	r.Commit(tc.name)
	return r, "HEAD~1"
}

func (tc matchCase) check(t *testing.T) {
	r, base := tc.prepare(t)
	renderer := testRenderer
	if tc.renderer != "" {
		renderer = tc.renderer
	}
	held := tc.review(t, r, base, renderer, true, true, false)
	full := tc.review(t, r, base, renderer, true, false, false)
	inc := tc.review(t, r, base, renderer, false, false, false)
	listed := tc.review(t, r, base, renderer, false, false, true)
	if held.alike != 0 || full.alike != 0 {
		t.Errorf("a whole review left %d clusters of the base to the head's render", max(held.alike, full.alike))
	}
	if d := cmp.Diff(held.report, full.report); d != "" {
		t.Errorf("the full review differs from one that holds every file (-held +full):\n%s", d)
	}
	// The incremental review says why it rendered the base (a base
	// without deploy/, another renderer's); the rest is the same.
	if tc.noDeploy != (inc.report.BaseRendered != "") && tc.renderer == "" {
		t.Errorf("base re-rendered: %q", inc.report.BaseRendered)
	}
	if d := cmp.Diff(held.report, inc.report, cmpopts.IgnoreFields(diff.Report{}, "BaseRendered")); d != "" {
		t.Errorf("the incremental review differs from the full one (-full +incremental):\n%s", d)
	}
	// Listing the changed files without their diffs (affected) changes
	// nothing else.
	unlisted := *held.report
	unlisted.Files = nil
	for _, f := range held.report.Files {
		f.Unified = ""
		unlisted.Files = append(unlisted.Files, f)
	}
	if d := cmp.Diff(&unlisted, listed.report, cmpopts.IgnoreFields(diff.Report{}, "BaseRendered"), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the review listing the changed files differs from the full one without its diffs (-full +listed):\n%s", d)
	}
	if !tc.noDeploy && len(full.files) >= len(held.files) {
		t.Errorf("the full review held all %d files of the head, not only those that differ", len(held.files))
	}
	// The commands that start runs read them from the review's head.
	for _, c := range diff.Runs(held.report.Affected) {
		p := tekton.Path(c.Environment, c.Region, c.Cluster)
		if full.files[p] == nil || string(full.files[p]) != string(held.files[p]) {
			t.Errorf("the full review's head lacks the PipelineRun of %s, which runs", c.ID)
		}
	}
	if len(full.leftOut) != 0 {
		t.Errorf("--full left out %d clusters", len(full.leftOut))
	}
	if tc.drift != "" && !slices.Contains(inc.report.Drift, tc.drift) {
		t.Errorf("the review finds %v drifted, not %s", inc.report.Drift, tc.drift)
	}
	if n := clustersIn(inc.leftOut); tc.whole && n != 0 {
		t.Errorf("left out %d clusters though every cluster's inputs changed", n)
	}
	if tc.renderer != "" {
		tc.checkAnotherRenderer(t, r, base, full, inc)
		return
	}
	if inc.alike != 0 {
		t.Errorf("a review that rendered no base, or all of it, left %d clusters of the base to the head's render", inc.alike)
	}
	if !tc.whole && len(inc.leftOut) == 0 {
		t.Error("the incremental review rendered every cluster")
	}
}

// clustersIn counts the clusters among owners (a cluster's ID holds a
// slash, a region's name none).
func clustersIn(owners map[string]bool) int {
	n := 0
	for owner := range owners {
		if strings.Contains(owner, "/") {
			n++
		}
	}
	return n
}

// TestSameChainsLeftOut: a review whose base's side is what it committed
// leaves out, on both sides, the files of the regions whose identity chain
// the change leaves as it was (render.Pair.SameChains), though their
// clusters changed: a sector's EKS settings. A change to what a chain is
// made of (the DR account's retention, in the region's own file) or to
// the fleet's inputs (the gitops repository) leaves none out. What such a
// review reports is the full review's (TestIncrementalReviewMatchesFull,
// whose cases hold these changes and a hand edit of a left-out region's
// file).
func TestSameChainsLeftOut(t *testing.T) {
	const region = "eu-west-1" // prod-2's one region
	cases := []struct {
		name     string
		change   func(r *reviewRepo)
		leftOut  bool
		regionIn string // a file of the region the head must hold when not left out
	}{
		{"sector's EKS settings", func(r *reviewRepo) {
			r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
		}, true, ""},
		{"region's DR retention", func(r *reviewRepo) {
			r.Write("config/regions/eu-west-1.yaml", r.Read("config/regions/eu-west-1.yaml")+"etcd_backup:\n  retention_days: 40\n")
		}, false, "production/eu-west-1/terraform/central-bootstrap.tfvars.json"},
		{"gitops repository", func(r *reviewRepo) {
			r.Edit("config/global/defaults.yaml", "repo_url: https://git.example.com/fleet.git", "repo_url: https://git.example.com/other/fleet.git")
		}, false, "production/eu-west-1/tekton/install/triggers.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := matchCase{name: c.name, head: "HEAD", change: func(r *reviewRepo) { c.change(r); r.render() }}
			r, base := tc.prepare(t)
			inc := tc.review(t, r, base, testRenderer, false, false, false)
			if inc.leftOut[region] != c.leftOut {
				t.Errorf("%s left out: %v, want %v", region, inc.leftOut[region], c.leftOut)
			}
			for p := range inc.files {
				if c.leftOut && strings.HasPrefix(p, "production/"+region+"/") && !strings.Contains(p, "/effective/") && !strings.Contains(p, "/argocd/") &&
					(strings.Contains(p, "/iam/") || strings.Contains(p, "/tekton/install/") || strings.HasSuffix(p, "central-bootstrap.tfvars.json")) {
					t.Errorf("the head holds %s of a region left out", p)
				}
			}
			if c.regionIn != "" && len(inc.report.Files) > 0 && !slices.ContainsFunc(inc.report.Files, func(f diff.FileDiff) bool { return f.Path == c.regionIn }) {
				t.Errorf("the review does not show %s changed: %v", c.regionIn, inc.report.Files)
			}
		})
	}
}

// checkAnotherRenderer holds the review of a base another renderer wrote:
// the base is rendered again, all but the clusters whose inputs the head
// has, which are those a review by the base's own renderer leaves out on
// both sides; the head is rendered whole, and holds no more files than the
// whole review's (the files the base's render left to the head's settle
// like the others).
func (tc matchCase) checkAnotherRenderer(t *testing.T, r *reviewRepo, base string, full, inc matchRun) {
	if !strings.Contains(inc.report.BaseRendered, "another renderer") {
		t.Errorf("base re-rendered: %q", inc.report.BaseRendered)
	}
	if tc.whole != (inc.alike == 0) {
		t.Errorf("the base's render left %d clusters to the head's", inc.alike)
	}
	own := clustersIn(tc.review(t, r, base, testRenderer, false, false, false).leftOut)
	if inc.alike != own {
		t.Errorf("the base's render left %d clusters to the head's; the base's renderer leaves out %d", inc.alike, own)
	}
	if len(inc.files) != len(full.files) {
		t.Errorf("the incremental review held %d files of the head, the full one %d", len(inc.files), len(full.files))
	}
	if len(inc.leftOut) != 0 {
		t.Errorf("left out %d clusters of the head, whose every file another renderer's base committed", len(inc.leftOut))
	}
}

// destroyedThen merges delete: true for us-east-1/mc01 (rendered and
// committed), then leaves its file with then added, for the case's change.
func destroyedThen(then string) func(r *reviewRepo) {
	return func(r *reviewRepo) {
		mc01 := r.Read("config/clusters/us-east-1/mc01.yaml")
		r.Write("config/clusters/us-east-1/mc01.yaml", mc01+"delete: true\n")
		r.render()
		r.Commit("destroy us-east-1/mc01")
		r.Write("config/clusters/us-east-1/mc01.yaml", mc01+then)
	}
}

// prod3Change is a sector change away from us-east-1.
func prod3Change(r *reviewRepo) {
	r.Edit("config/sectors/prod-3.yaml", "order: 7", "order: 7\neks:\n  node_max: 16")
	r.render()
}
