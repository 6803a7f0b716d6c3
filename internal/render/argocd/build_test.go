package argocd_test

import (
	"os"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/schema"
)

func inputs(t *testing.T, root string) []argocd.Input {
	t.Helper()
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(os.DirFS(root), "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	charts, err := render.ReadCharts(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	return render.AppSetInputs(f, charts)
}

func find(t *testing.T, ins []argocd.Input, env, typ string) argocd.Input {
	for _, in := range ins {
		if in.Environment == env && in.Type == typ {
			return in
		}
	}
	t.Fatalf("no ApplicationSet for %s %s", env, typ)
	return argocd.Input{}
}

// TestStepsFollowSectorOrder: every generated Application lands in exactly
// one step, the step of its sector, and steps follow the sectors' order,
// skipping a sector with no regions in that environment.
func TestStepsFollowSectorOrder(t *testing.T) {
	ins := inputs(t, "../../../golden/uneven-sectors")
	prod := find(t, ins, "production", "management")
	set := argocd.Build(prod)
	apps, err := argocd.Expand(set, prod)
	if err != nil {
		t.Fatal(err)
	}
	if p := argocd.Check(set, prod, apps); len(p) > 0 {
		t.Fatal(p)
	}
	var order []string
	for _, st := range set.Spec.Strategy.RollingSync.Steps {
		order = append(order, st.MatchExpressions[0].Values...)
	}
	if got := strings.Join(order, ","); got != "prod-1,prod-2,prod-3" {
		t.Errorf("production steps %s", got)
	}
	for _, a := range apps {
		if a.Sector != a.Labels["sector"] || a.Step == 0 {
			t.Errorf("%s of sector %s in step %d (%s)", a.Name, a.Labels["sector"], a.Step, a.Sector)
		}
	}
	if len(apps) != 5*2 { // 5 production management clusters × 2 charts
		t.Errorf("%d Applications", len(apps))
	}
	stage := find(t, ins, "staging", "management")
	if n := len(argocd.Build(stage).Spec.Strategy.RollingSync.Steps); n != 1 {
		t.Errorf("staging has %d steps; stage-b has no regions and must get none", n)
	}
}

// TestCheckRefusesBrokenSteps mutates a correct ApplicationSet in each way
// Check must refuse.
func TestCheckRefusesBrokenSteps(t *testing.T) {
	prod := find(t, inputs(t, "../../../golden/uneven-sectors"), "production", "management")
	tests := []struct {
		name   string
		mutate func(*argocd.ApplicationSet)
		want   string
	}{
		{"steps out of order", func(s *argocd.ApplicationSet) {
			st := s.Spec.Strategy.RollingSync.Steps
			st[0], st[1] = st[1], st[0]
		}, "RollingSync step 1 is [prod-2], want sector prod-1"},
		{"a step missing", func(s *argocd.ApplicationSet) {
			s.Spec.Strategy.RollingSync.Steps = s.Spec.Strategy.RollingSync.Steps[1:]
		}, "matches 0 RollingSync steps"},
		{"overlapping steps", func(s *argocd.ApplicationSet) {
			s.Spec.Strategy.RollingSync.Steps[1].MatchExpressions[0].Values = []string{"prod-2", "prod-1"}
		}, "matches 2 RollingSync steps"},
		{"a step matching nothing", func(s *argocd.ApplicationSet) {
			s.Spec.Strategy.RollingSync.Steps = append(s.Spec.Strategy.RollingSync.Steps, argocd.Step{
				MatchExpressions: []argocd.Requirement{{Key: "sector", Operator: "In", Values: []string{"prod-9"}}}})
		}, "matches no Application"},
		{"template without the sector label", func(s *argocd.ApplicationSet) {
			delete(s.Spec.Template.Metadata.Labels, "sector")
		}, "matches 0 RollingSync steps"},
	}
	for _, tt := range tests {
		set := argocd.Build(prod)
		tt.mutate(set)
		apps, err := argocd.Expand(set, prod)
		if err != nil {
			t.Fatal(err)
		}
		problems := strings.Join(argocd.Check(set, prod, apps), "\n")
		if !strings.Contains(problems, tt.want) {
			t.Errorf("%s: problems %q, want %q", tt.name, problems, tt.want)
		}
	}
}
