package render_test

import (
	"os"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
)

// TestRenderRefusesRunsTheirPipelineRejects: a PipelineRun that Tekton
// would refuse, or that would run without a value its Pipeline needs, is a
// render error naming the cluster, never a file in deploy/. The Pipelines
// are the repository's, changed one way at a time.
func TestRenderRefusesRunsTheirPipelineRejects(t *testing.T) {
	root := "../../golden/minimal"
	f := load(t, root)
	charts, err := render.ReadCharts(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	clone := func() tekton.Pipelines {
		out := tekton.Pipelines{}
		for name, ps := range repoPipelines(t) {
			out[name] = append([]tekton.Param(nil), ps...)
		}
		return out
	}
	without := func(ps []tekton.Param, name string) []tekton.Param {
		var out []tekton.Param
		for _, p := range ps {
			if p.Name != name {
				out = append(out, p)
			}
		}
		if len(out) == len(ps) {
			t.Fatalf("no param %s", name)
		}
		return out
	}
	for _, tc := range []struct {
		what   string
		change func(p tekton.Pipelines)
		want   string
	}{
		{"the regional Pipeline requires a param regionctl does not pass", func(p tekton.Pipelines) {
			p[tekton.Regional] = append(p[tekton.Regional], tekton.Param{Name: "approval"})
		}, "Pipeline regionctl-regional requires param approval"},
		{"the regional Pipeline no longer declares external-id", func(p tekton.Pipelines) {
			p[tekton.Regional] = without(p[tekton.Regional], "external-id")
		}, "param external-id is not declared by Pipeline regionctl-regional"},
		{"the central Pipeline takes the region as an array", func(p tekton.Pipelines) {
			for i := range p[tekton.Central] {
				if p[tekton.Central][i].Name == "region" {
					p[tekton.Central][i].Type = "array"
				}
			}
		}, "param region of Pipeline regionctl-central is a array"},
		{"there is no central Pipeline", func(p tekton.Pipelines) {
			delete(p, tekton.Central)
		}, "no Pipeline regionctl-central in pipelines/tekton"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			p := clone()
			tc.change(p)
			_, diags := render.Render(f, render.Options{Renderer: testVersion, Charts: charts, Pipelines: p})
			if !diags.HasErrors() {
				t.Fatalf("rendered")
			}
			var said strings.Builder
			for _, d := range diags {
				said.WriteString(d.Pos.String() + ": " + d.Summary + "\n" + d.Detail + "\n")
			}
			if !strings.Contains(said.String(), tc.want) || !strings.Contains(said.String(), "config/clusters/") {
				t.Errorf("diagnostics do not say %q of a cluster:\n%s", tc.want, said.String())
			}
		})
	}
	// The repository's own Pipelines accept every run: the cases above fail
	// for the change alone.
	if _, diags := render.Render(f, render.Options{Renderer: testVersion, Charts: charts, Pipelines: clone()}); diags.HasErrors() {
		t.Fatal(diags)
	}
}
