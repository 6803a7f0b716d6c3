package diff_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// repo is a real git repository in a temp dir holding a small fleet.
type repo struct{ *testrepo.Repo }

// newRepo starts a repository with the golden uneven-sectors fleet (five
// sectors, two environments), the repository's Tekton Pipelines and
// charts, committed on main.
func newRepo(t *testing.T) *repo {
	r := &repo{testrepo.Golden(t, "uneven-sectors")}
	r.Commit("base fleet")
	return r
}

// renderDeploy renders the working tree into deploy/, as `regionctl render`.
func (r *repo) renderDeploy(c *schema.Checker) {
	_, out, diags, err := render.FromFS(os.DirFS(r.Dir), c, render.Options{Renderer: "test"})
	if err != nil || diags.HasErrors() {
		r.T.Fatal(err, diags)
	}
	if _, err := deploytree.Write(deploytree.OS{}, filepath.Join(r.Dir, "deploy"), out, deploytree.Options{}); err != nil {
		r.T.Fatal(err)
	}
}

var keys = []string{"components.*.chart_revision", "components.*.image", "eks.version", "hypershift.operator_image"}

// compare renders two commits from git objects and compares them.
func (r *repo) compare(c *schema.Checker, base, head string) *diff.Report {
	r.T.Helper()
	return diff.Compare(r.side(c, base), r.side(c, head), keys, false)
}

// side renders commit rev from git objects, with its committed deploy/.
func (r *repo) side(c *schema.Checker, rev string) diff.Side {
	r.T.Helper()
	gb, err := gitbase.Open(r.Dir)
	if err != nil {
		r.T.Fatal(err)
	}
	defer gb.Close()
	commit, err := gb.Commit(rev)
	if err != nil {
		r.T.Fatal(err)
	}
	fsys, err := gb.FS(commit)
	if err != nil {
		r.T.Fatal(err)
	}
	f, out, diags, err := render.FromFS(fsys, c, render.Options{Renderer: "test"})
	if err != nil || diags.HasErrors() {
		r.T.Fatalf("%s: %v %v", rev, err, diags)
	}
	deploy := map[string]plumbing.Hash{}
	_ = fs.WalkDir(fsys, "deploy", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(fsys, p)
			deploy[strings.TrimPrefix(p, "deploy/")] = plumbing.ComputeHash(plumbing.BlobObject, b)
		}
		return nil
	})
	if len(deploy) == 0 {
		deploy = nil
	}
	return diff.Side{Label: rev, Fleet: f, Output: out, Deploy: deploy}
}

func checker(t *testing.T) *schema.Checker {
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ids(as []diff.AffectedCluster) string {
	var out []string
	for _, a := range as {
		out = append(out, a.ID+":"+a.Change+":"+a.Pipeline)
	}
	return strings.Join(out, " ")
}

func TestGlobalChangeReachesEveryCluster(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/global/defaults.yaml", strings.Replace(r.Read("config/global/defaults.yaml"), `version: "1.33"`, `version: "1.34"`, 1))
	r.Commit("eks 1.34 everywhere")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if len(rep.Affected) != 11 || len(diff.Runs(rep.Affected)) != 11 {
		t.Errorf("affected %d clusters, %d runs: %s", len(rep.Affected), len(diff.Runs(rep.Affected)), ids(rep.Affected))
	}
	if len(rep.Changes) != 1 || len(rep.Changes[0].Clusters) != 11 || rep.Changes[0].Path != "eks.version" ||
		rep.Changes[0].Origin != "config/global/defaults.yaml:10:12" || !rep.Changes[0].OriginChanged || !rep.Changes[0].Rollout {
		t.Errorf("changes %+v", rep.Changes)
	}
	// The blast radius lists sectors in rollout order.
	var order []string
	for _, s := range rep.Sectors {
		order = append(order, s.Name)
	}
	if got := strings.Join(order, ","); got != "stage-a,prod-1,prod-2,prod-3" {
		t.Errorf("sector order %s", got)
	}
}

func TestSectorChangeStaysInTheSector(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/sectors/prod-2.yaml", r.Read("config/sectors/prod-2.yaml")+"eks:\n  node_max: 9\n")
	r.Commit("bigger nodes groups in prod-2")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if got := ids(rep.Affected); got != "eu-west-1/mc01:changed:regional eu-west-1/mc02:changed:regional eu-west-1/regional:changed:central" {
		t.Errorf("affected %s", got)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].Origin != "config/sectors/prod-2.yaml:5:13" || len(rep.Changes[0].Clusters) != 3 {
		t.Errorf("changes %+v", rep.Changes)
	}
}

func TestHelmValuesOnlyNeedNoPipeline(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/clusters/us-east-1/mc01.yaml", "type: management\ncomponents:\n  hypershift-operator:\n    values:\n      replicas: 5\n")
	r.Commit("more operator replicas")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if got := ids(rep.Affected); got != "us-east-1/mc01:changed:none" {
		t.Errorf("affected %s", got)
	}
	if len(diff.Runs(rep.Affected)) != 0 {
		t.Error("a Helm values change starts a pipeline")
	}
}

func TestClusterAdded(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
	r.Commit("add us-east-1/mc02")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if got := ids(rep.Affected); got != "us-east-1/mc02:added:regional" {
		t.Errorf("affected %s", got)
	}
	if rep.Sectors[0].Name != "prod-1" || len(rep.Sectors[0].Added) != 1 {
		t.Errorf("sectors %+v", rep.Sectors)
	}
}

func TestClusterDeletedInTwoPhases(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/clusters/eu-west-1/mc02.yaml", "type: management\ndelete: true\n")
	r.Commit("destroy eu-west-1/mc02")
	r.Write("config/clusters/eu-west-1/mc02.yaml", "type: management\ndelete: true\ndelete_pipeline: true\n")
	r.Commit("remove its pipeline")
	r.Remove("config/clusters/eu-west-1/mc02.yaml")
	r.Commit("remove its file")

	phase1 := r.compare(c, "HEAD~3", "HEAD~2")
	if got := ids(phase1.Affected); got != "eu-west-1/mc02:destroyed:regional" {
		t.Errorf("phase 1 affected %s", got)
	}
	if len(phase1.Destroyed) != 1 || phase1.Destroyed[0].ID != "eu-west-1/mc02" {
		t.Errorf("phase 1 destroyed %+v", phase1.Destroyed)
	}
	if !strings.Contains(strings.Join(phase1.Pruned, " "), "production/argocd/clusters/eu-west-1-mc02.yaml") || !strings.Contains(strings.Join(phase1.Pruned, " "), "eu-west-1/argocd/mc02/values/hypershift-operator.yaml") {
		t.Errorf("phase 1 pruned %v: the Applications of a destroyed cluster go", phase1.Pruned)
	}
	phase2 := r.compare(c, "HEAD~2", "HEAD~1")
	// Its run checks that the destroy completed; the PipelineRun stays
	// until the file goes, so that a run is there to destroy whatever a
	// push that took two steps at once left.
	if got := ids(phase2.Affected); got != "eu-west-1/mc02:removed:regional" {
		t.Errorf("phase 2 affected %s", got)
	}
	if strings.Contains(strings.Join(phase2.Pruned, " "), "eu-west-1/tekton/mc02.pipelinerun.yaml") {
		t.Errorf("phase 2 pruned %v: the PipelineRun goes with the file only", phase2.Pruned)
	}
	phase3 := r.compare(c, "HEAD~1", "HEAD")
	if got := ids(phase3.Affected); got != "eu-west-1/mc02:removed:none" || len(diff.Runs(phase3.Affected)) != 0 {
		t.Errorf("phase 3 affected %s", got)
	}
	if !strings.Contains(strings.Join(phase3.Pruned, " "), "eu-west-1/tekton/mc02.pipelinerun.yaml") {
		t.Errorf("phase 3 pruned %v", phase3.Pruned)
	}
}

func TestRenames(t *testing.T) {
	r, c := newRepo(t), checker(t)
	// Renaming a layer file without changing what it says changes no value
	// and starts no pipeline; only the origins in effective/ name the new file.
	r.Write("config/global/00-defaults.yaml", r.Read("config/global/defaults.yaml"))
	r.Remove("config/global/defaults.yaml")
	r.Commit("rename the global file")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if len(rep.Changes) != 0 || len(diff.Runs(rep.Affected)) != 0 || len(rep.Affected) != 11 {
		t.Errorf("a global file rename: %d changes, %s", len(rep.Changes), ids(rep.Affected))
	}
	for _, f := range rep.Files {
		if !strings.Contains(f.Path, "/effective/") || !strings.Contains(f.Unified, "+") || !strings.Contains(f.Unified, "config/global/00-defaults.yaml") {
			t.Errorf("rename changed %s:\n%s", f.Path, f.Unified)
		}
	}
	// Renaming a cluster is a new cluster and a removed one.
	r.Write("config/clusters/us-east-1/mc09.yaml", r.Read("config/clusters/us-east-1/mc01.yaml"))
	r.Remove("config/clusters/us-east-1/mc01.yaml")
	r.Commit("rename us-east-1/mc01 to mc09")
	rep = r.compare(c, "HEAD~1", "HEAD")
	if got := ids(rep.Affected); got != "us-east-1/mc01:removed:none us-east-1/mc09:added:regional" {
		t.Errorf("cluster rename: %s", got)
	}
	if len(rep.Destroyed) != 1 || rep.Destroyed[0].ID != "us-east-1/mc01" {
		t.Errorf("cluster rename destroyed %+v", rep.Destroyed)
	}
}

func TestReformatReportsNothing(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/sectors/prod-1.yaml", "# The first production wave.\n\nmax_update:   1\nenvironment: production   # prod\norder: 1\n")
	r.Write("config/global/defaults.yaml", "# Reformatted.\n"+strings.ReplaceAll(r.Read("config/global/defaults.yaml"), "  ", "    "))
	r.Commit("reformat")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if !rep.Empty() || len(rep.Changes) != 0 || len(rep.Sectors) != 0 {
		t.Errorf("a reformat reports %d affected, %d files, %d changes", len(rep.Affected), len(rep.Files), len(rep.Changes))
	}
}

func TestHandEditOfDeployIsDrift(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.renderDeploy(c)
	r.Commit("render")
	p := "deploy/production/us-east-1/terraform/mc01.tfvars.json"
	r.Write(p, strings.Replace(r.Read(p), `"node_max": 6`, `"node_max": 60`, 1))
	r.Commit("hot fix by hand")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if len(rep.Drift) != 1 || rep.Drift[0] != strings.TrimPrefix(p, "deploy/") {
		t.Errorf("drift %v", rep.Drift)
	}
	if len(rep.Affected) != 0 || rep.Stale != 0 {
		t.Errorf("a hand edit affected %s, stale %d", ids(rep.Affected), rep.Stale)
	}
}

// TestDefaultBaseIsTheMergeBase: main moved on after the branch was cut;
// the branch's report holds its own change only.
func TestDefaultBaseIsTheMergeBase(t *testing.T) {
	r, c := newRepo(t), checker(t)
	branchPoint, _ := r.Git.Head()
	if err := r.WT.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true}); err != nil {
		t.Fatal(err)
	}
	r.Write("config/sectors/prod-3.yaml", r.Read("config/sectors/prod-3.yaml")+"eks:\n  node_max: 8\n")
	r.Commit("feature: prod-3 node_max")
	if err := r.WT.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("main")}); err != nil {
		t.Fatal(err)
	}
	r.Write("config/sectors/prod-1.yaml", r.Read("config/sectors/prod-1.yaml")+"eks:\n  node_max: 7\n")
	r.Commit("main: prod-1 node_max")
	if err := r.WT.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature")}); err != nil {
		t.Fatal(err)
	}
	gb, _ := gitbase.Open(r.Dir)
	base, label, err := gb.DefaultBase("")
	if err != nil {
		t.Fatal(err)
	}
	if base.Hash != branchPoint.Hash() || label != "merge-base(HEAD, main)" {
		t.Fatalf("default base %s (%s), want the branch point %s", base.Hash, label, branchPoint.Hash())
	}
	rep := r.compare(c, base.Hash.String(), "HEAD")
	for _, a := range rep.Affected {
		if a.Sector != "prod-3" {
			t.Errorf("main's change leaks into the branch's report: %s", a.ID)
		}
	}
	if len(rep.Affected) != 4 { // prod-3: two regions, two clusters each
		t.Errorf("affected %s", ids(rep.Affected))
	}
	// Comparing with main itself would show main's change reverted.
	if rep := r.compare(c, "main", "HEAD"); len(rep.Affected) <= 4 {
		t.Errorf("against main: %s", ids(rep.Affected))
	}
}

func TestSkippedWaveAndException(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/sectors/prod-2.yaml", r.Read("config/sectors/prod-2.yaml")+"eks:\n  version: \"1.34\"\n")
	r.Commit("1.34 straight to prod-2")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if len(rep.Waves) != 1 || rep.Waves[0].Sector != "prod-2" || strings.Join(rep.Waves[0].Missing, ",") != "stage-a,prod-1" || rep.Waves[0].Exception != "" {
		t.Errorf("waves %+v", rep.Waves)
	}
	r.Write("config/sectors/prod-2.yaml", r.Read("config/sectors/prod-2.yaml")+"rollout_exceptions:\n  - key: eks.version\n    value: \"1.34\"\n    reason: CVE-2026-1234 is fixed only in 1.34\n")
	r.Commit("say why")
	rep = r.compare(c, "HEAD~2", "HEAD")
	if len(rep.Waves) != 1 || rep.Waves[0].Exception != "CVE-2026-1234 is fixed only in 1.34" {
		t.Errorf("waves with exception %+v", rep.Waves)
	}
}

// TestDeployRolePolicyChangeNeedsCentral: the deploy role of a region's
// management cluster accounts is its StackSet's, which the central
// pipeline applies, so a change of its rendered policy starts the central
// pipeline of the region too.
func TestDeployRolePolicyChangeNeedsCentral(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.Write("config/regions/us-east-1.yaml", r.Read("config/regions/us-east-1.yaml")+"hypershift:\n  oidc_bucket: hypershift-oidc-v2-${environment}-${region}-${cluster}\n")
	r.Commit("new OIDC bucket names in us-east-1")
	rep := r.compare(c, "HEAD~1", "HEAD")
	got := ids(rep.Affected)
	if !strings.Contains(got, "us-east-1/regional:changed:central") || !strings.Contains(got, "us-east-1/mc01:changed:regional") {
		t.Errorf("affected %s", got)
	}
	for _, a := range rep.Affected {
		if a.ID == "us-east-1/regional" && !slices.Contains(a.Files, "production/us-east-1/iam/management-cluster-deploy-role-policy.json") {
			t.Errorf("the regional cluster's central run does not name the deploy role's policy: %v", a.Files)
		}
	}
}

// TestRegionFilesReachTheRegionalCluster: a region's own files (its IAM and
// the central bootstrap's variables) are the central pipeline's to apply:
// a change to them alone affects the regional cluster, with its pipeline.
func TestRegionFilesReachTheRegionalCluster(t *testing.T) {
	idx := &render.Index{
		Sectors: []render.IndexSector{{Name: "prod", Order: 1}},
		Clusters: []render.IndexCluster{
			{ID: "us-east-1/regional", Region: "us-east-1", Name: "regional", Type: "regional", Sector: "prod", Environment: "production"},
			{ID: "us-east-1/mc01", Region: "us-east-1", Name: "mc01", Type: "management", Sector: "prod", Environment: "production"},
		},
	}
	for _, file := range []string{"production/us-east-1/iam/regional-pipeline-policy.json", "production/us-east-1/terraform/central-bootstrap.tfvars.json"} {
		out := func(content string) *render.Output {
			return &render.Output{Index: idx, Artifacts: []render.Artifact{
				{Path: file, Bytes: []byte(content), Owner: "us-east-1"},
				{Path: "production/us-east-1/terraform/regional.tfvars.json", Bytes: []byte("{}"), Owner: "us-east-1/regional"},
				{Path: "production/us-east-1/terraform/mc01.tfvars.json", Bytes: []byte("{}"), Owner: "us-east-1/mc01"},
			}}
		}
		if got := ids(diff.Affected(out("before"), out("after"))); got != "us-east-1/regional:changed:central" {
			t.Errorf("%s changed: affected %q, want the regional cluster's central pipeline", file, got)
		}
	}
}

// TestHandEditInsideATouchedClusterIsDrift: a change that alters a
// cluster's config and also edits one of its deploy/ files by hand is
// drift in that file (its committed bytes are neither the base's render
// nor the head's), not a file "not re-rendered yet"; a file the change
// left as the base rendered it is.
func TestHandEditInsideATouchedClusterIsDrift(t *testing.T) {
	r, c := newRepo(t), checker(t)
	r.renderDeploy(c)
	r.Commit("render")
	r.Edit("config/clusters/us-east-1/mc01.yaml", "type: management", "type: management\neks:\n  node_max: 9")
	r.Commit("bigger mc01, not rendered")
	rep := r.compare(c, "HEAD~1", "HEAD")
	if len(rep.Drift) != 0 || rep.Stale == 0 {
		t.Fatalf("a change not rendered yet: drift %v, stale %d", rep.Drift, rep.Stale)
	}
	p := "deploy/production/us-east-1/terraform/mc01.tfvars.json"
	r.Write(p, strings.Replace(r.Read(p), `"node_instance_type": "m6i.xlarge"`, `"node_instance_type": "m5.24xlarge"`, 1))
	r.Commit("and a hand edit of its variables")
	rep = r.compare(c, "HEAD~2", "HEAD")
	if len(rep.Drift) != 1 || rep.Drift[0] != strings.TrimPrefix(p, "deploy/") {
		t.Errorf("a hand edit inside the touched cluster: drift %v, stale %d", rep.Drift, rep.Stale)
	}
}
