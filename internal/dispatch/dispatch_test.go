package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/dispatch"
	"github.com/regionctl/regionctl/internal/kube"
	"github.com/regionctl/regionctl/internal/kube/kubetest"
)

const run = `apiVersion: tekton.dev/v1
kind: PipelineRun
metadata:
  generateName: regional-eu-west-1-mc01-
  labels:
    regionctl.io/cluster: mc01
    regionctl.io/region: eu-west-1
    regionctl.io/pipeline: regional
spec:
  pipelineRef:
    name: regionctl-regional
`

func setup(t *testing.T) (*kubetest.Server, *kube.Client) { return kubetest.Start(t) }

func state(t *testing.T, c *kube.Client, name string) string {
	t.Helper()
	runs, err := c.List(context.Background(), "pipelines", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Metadata.Name == name {
			return r.State()
		}
	}
	return "missing"
}

func did(as []dispatch.Action) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Did+" "+a.Run)
	}
	return strings.Join(out, ", ")
}

// TestOneRunAtATimePerCluster walks a cluster through three pushes while
// its first run is still running, then the reconcile that follows.
func TestOneRunAtATimePerCluster(t *testing.T) {
	s, c := setup(t)
	ctx := context.Background()
	push := func(commit string) []dispatch.Action {
		as, err := dispatch.Dispatch(ctx, c, "pipelines", []dispatch.Run{{Cluster: "eu-west-1/mc01", Commit: commit, Manifest: []byte(run)}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	if got := did(push("aaaa")); got != "started regional-eu-west-1-mc01-1" {
		t.Fatalf("first push: %s", got)
	}
	if got := did(push("aaaa")); got != "skipped regional-eu-west-1-mc01-1" {
		t.Errorf("the same push delivered twice: %s", got)
	}
	if got := did(push("bbbb")); got != "queued regional-eu-west-1-mc01-2" {
		t.Errorf("a push while a run runs: %s", got)
	}
	// A third push supersedes the second, which never ran.
	if got := did(push("cccc")); got != "superseded regional-eu-west-1-mc01-2, queued regional-eu-west-1-mc01-3" {
		t.Errorf("a push while one runs and one waits: %s", got)
	}
	if st := state(t, c, "regional-eu-west-1-mc01-2"); st != "cancelled" {
		t.Errorf("the superseded run is %s", st)
	}
	// While the first runs, reconcile leaves everything as it is.
	if as, err := dispatch.Reconcile(ctx, c, "pipelines", "regionctl.io/pipeline=regional", "cccc", nil, 3, time.Now()); err != nil || len(as) != 0 {
		t.Errorf("reconcile while running: %s %v", did(as), err)
	}
	s.Finish("regional-eu-west-1-mc01-1", "True", "Succeeded")
	as, err := dispatch.Reconcile(ctx, c, "pipelines", "regionctl.io/pipeline=regional", "cccc", nil, 3, time.Now())
	if err != nil || did(as) != "started regional-eu-west-1-mc01-3" {
		t.Errorf("reconcile once the run ended: %s %v", did(as), err)
	}
	if st := state(t, c, "regional-eu-west-1-mc01-3"); st != "running" {
		t.Errorf("the newest waiting run is %s", st)
	}
}

// TestFailedRunsAreRetriedAtHead: a cluster whose newest run failed runs
// again at the head commit, up to the bound.
func TestFailedRunsAreRetriedAtHead(t *testing.T) {
	s, c := setup(t)
	ctx := context.Background()
	if _, err := dispatch.Dispatch(ctx, c, "pipelines", []dispatch.Run{{Cluster: "eu-west-1/mc01", Commit: "aaaa", Manifest: []byte(run)}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	heads := map[string][]byte{"eu-west-1/mc01": []byte(run)}
	s.Finish("regional-eu-west-1-mc01-1", "False", "Failed")
	// Not at head any more: a newer push will run it.
	if as, _ := dispatch.Reconcile(ctx, c, "pipelines", "", "bbbb", heads, 2, time.Now()); len(as) != 0 {
		t.Errorf("a failed run of an old commit was retried: %s", did(as))
	}
	as, err := dispatch.Reconcile(ctx, c, "pipelines", "", "aaaa", heads, 2, time.Now())
	if err != nil || did(as) != "retried regional-eu-west-1-mc01-2" {
		t.Fatalf("retry: %s %v", did(as), err)
	}
	s.Finish("regional-eu-west-1-mc01-2", "False", "Failed")
	if as, _ := dispatch.Reconcile(ctx, c, "pipelines", "", "aaaa", heads, 2, time.Now()); did(as) != "gave-up regional-eu-west-1-mc01-2" {
		t.Errorf("past the bound: %s", did(as))
	}
	// A cancelled run is not a failure to retry.
	s.Finish("regional-eu-west-1-mc01-2", "False", "Cancelled")
	if as, _ := dispatch.Reconcile(ctx, c, "pipelines", "", "aaaa", heads, 5, time.Now()); len(as) != 0 {
		t.Errorf("a cancelled run was retried: %s", did(as))
	}
}

func TestKubeClientSaysWhatFailed(t *testing.T) {
	_, c := setup(t)
	c.Token = "wrong"
	if _, err := c.List(context.Background(), "pipelines", ""); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("%v", err)
	}
}

// TestPlanRunsStandApart: a plan-only run of a cluster (regionctl.io/mode:
// plan) at the pushed commit neither counts as that commit's deploy nor is
// superseded by it.
func TestPlanRunsStandApart(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	plan := strings.Replace(run, "  labels:\n", "  labels:\n    regionctl.io/mode: plan\n    regionctl.io/commit: aaaa\n", 1)
	body, err := yaml.YAMLToJSON([]byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	name, err := c.Create(ctx, "pipelines", body)
	if err != nil {
		t.Fatal(err)
	}
	as, err := dispatch.Dispatch(ctx, c, "pipelines", []dispatch.Run{{Cluster: "eu-west-1/mc01", Commit: "aaaa", Manifest: []byte(run)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := did(as); !strings.HasPrefix(got, "started ") {
		t.Errorf("a deploy beside a plan-only run of its commit: %s", got)
	}
	if s := state(t, c, name); s == "cancelled" {
		t.Errorf("the plan-only run was superseded")
	}
}

// TestSectorWavesWait: a run whose sector's wave has not come waits
// (pending, annotated with when), and the reconcile starts it only once
// the wave came.
func TestSectorWavesWait(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	wave := now.Add(24 * time.Hour)
	as, err := dispatch.Dispatch(ctx, c, "pipelines", []dispatch.Run{{Cluster: "eu-west-1/mc01", Commit: "aaaa", Manifest: []byte(run), NotBefore: wave, Wave: "after stage's 24h soak"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || as[0].Did != "scheduled" || !strings.Contains(as[0].Detail, "until 2026-11-26T10:00:00Z (after stage's 24h soak)") {
		t.Fatalf("a run of a later wave: %+v", as)
	}
	name := as[0].Run
	if s := state(t, c, name); s != "pending" {
		t.Fatalf("a run of a later wave is %s", s)
	}
	if as, _ := dispatch.Reconcile(ctx, c, "pipelines", "", "aaaa", nil, 3, wave.Add(-time.Minute)); len(as) != 0 || state(t, c, name) != "pending" {
		t.Errorf("reconcile before the wave: %+v, run %s", as, state(t, c, name))
	}
	as, err = dispatch.Reconcile(ctx, c, "pipelines", "", "aaaa", nil, 3, wave)
	if err != nil || did(as) != "started "+name || state(t, c, name) != "running" {
		t.Errorf("reconcile when the wave came: %v %+v, run %s", err, as, state(t, c, name))
	}
}
