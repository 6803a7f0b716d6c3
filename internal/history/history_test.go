package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
	"github.com/regionctl/regionctl/internal/testrepo"
)

var checker = sync.OnceValues(func() (*schema.Checker, error) { return schema.New(schema.Options{Version: "test"}) })

func TestDeployBranchIsGitopsRevisionWhenItIsABranch(t *testing.T) {
	for _, tc := range []struct {
		files map[string]string
		want  string
	}{
		{nil, "main"},
		{map[string]string{"00.yaml": "gitops:\n  revision: release\n"}, "release"},
		{map[string]string{"00.yaml": "gitops:\n  revision: release\n", "10.yaml": "gitops:\n  revision: deploy/prod\n"}, "deploy/prod"},
		{map[string]string{"00.yaml": "gitops:\n  revision: \"-x\"\n"}, "main"},
		{map[string]string{"00.yaml": "gitops:\n  revision: a..b\n"}, "main"},
		{map[string]string{"00.yaml": "gitops: [\n"}, "main"},
	} {
		root := t.TempDir()
		dir := filepath.Join(root, "config", "global")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := DeployBranch(root); got != tc.want {
			t.Errorf("%v: DeployBranch = %q, want %q", tc.files, got, tc.want)
		}
	}
}

func TestValidBranch(t *testing.T) {
	for name, want := range map[string]bool{
		"main": true, "release/2026-11": true, "feature_x.y": true,
		"": false, "-rf": false, ".hidden": false, "a..b": false, "a b": false, "a;b": false, "$(id)": false,
		strings.Repeat("a", 200): true, strings.Repeat("a", 201): false,
	} {
		if got := ValidBranch(name); got != want {
			t.Errorf("ValidBranch(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLifecycleAtRisk(t *testing.T) {
	r := testrepo.Golden(t, "uneven-sectors")
	c, err := checker()
	if err != nil {
		t.Fatal(err)
	}
	f, ds := fleet.Load(os.DirFS(r.Dir), "config", c)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	all := &render.Index{}
	for _, cl := range f.Clusters {
		all.Clusters = append(all.Clusters, render.IndexCluster{ID: cl.ID()})
	}
	if LifecycleAtRisk(f, all) {
		t.Error("a render of the clusters the last render had, none being deleted, is at risk")
	}
	if !LifecycleAtRisk(f, nil) {
		t.Error("a render without the last render's index is not at risk")
	}
	gone := &render.Index{Clusters: append(append([]render.IndexCluster(nil), all.Clusters...), render.IndexCluster{ID: "us-east-1/mc99"})}
	if !LifecycleAtRisk(f, gone) {
		t.Error("a render that drops a cluster the last render had is not at risk")
	}
}

// TestARuleThatCannotRunFailsOnCIAndWarnsElsewhere: outside a repository
// there is no base; on CI that is an error naming the rule, elsewhere a
// warning, once per rule. The last render's index stands in for the base
// of the deletion phases.
func TestARuleThatCannotRunFailsOnCIAndWarnsElsewhere(t *testing.T) {
	root := t.TempDir()
	head := &config.Fleet{Docs: &config.Documents{}}
	var warned []string
	b := New(Options{Root: root, Branch: "main", Checker: checker, Warn: func(rule, why string) { warned = append(warned, rule) }})
	for range 2 {
		if _, err := b.Waves(head, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Lifecycle(head, nil, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(warned, ",") != "rollout-wave check,deletion-phase check" {
		t.Errorf("warned of %v; want each rule once", warned)
	}
	if _, err := b.Lifecycle(head, nil, &render.Index{}); err != nil || len(warned) != 2 {
		t.Errorf("with the last render's index the deletion phases were not held to it: %v, warned %v", err, warned)
	}

	ci := New(Options{Root: root, Branch: "main", Checker: checker, CI: true, Warn: func(rule, _ string) { t.Errorf("on CI %s only warned", rule) }})
	var notRun *NotRunError
	if _, err := ci.Waves(head, nil); !errors.As(err, &notRun) || notRun.Rule != "rollout-wave check" {
		t.Errorf("on CI a wave check without a base gave %v", err)
	}
	if _, err := ci.All(head, nil); !errors.As(err, &notRun) {
		t.Errorf("on CI All without a base gave %v", err)
	}
}

// TestWavesHoldsTheChangeToTheMergeBase: a value that reaches a later
// sector before an earlier one has it is an error naming the base.
func TestWavesHoldsTheChangeToTheMergeBase(t *testing.T) {
	r := testrepo.Golden(t, "uneven-sectors")
	base := r.Commit("fleet")
	r.Edit("config/sectors/prod-3.yaml", "order: 7", "order: 7\neks:\n  version: \"1.35\"")
	c, err := checker()
	if err != nil {
		t.Fatal(err)
	}
	head, ds := fleet.Load(os.DirFS(r.Dir), "config", c)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	got, err := New(Options{Root: r.Dir, Branch: "main", Checker: checker}).Waves(head, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !strings.Contains(got[0].Summary, "skipped wave") || !strings.Contains(got[0].Detail, base.String()[:8]) {
		t.Fatalf("a version given to prod-3 first: %v", got)
	}
}
