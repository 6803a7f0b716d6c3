package render_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// TestEveryVersionedKeyHasASink: each @rollout() key of the schema is one
// render knows the deploying artifact of; a new versioned key fails here
// until it reaches something.
func TestEveryVersionedKeyHasASink(t *testing.T) {
	keys, err := schema.RolloutKeys()
	if err != nil {
		t.Fatal(err)
	}
	var sinks []string
	for k := range render.RolloutSinks {
		sinks = append(sinks, k)
	}
	sort.Strings(keys)
	sort.Strings(sinks)
	if strings.Join(keys, " ") != strings.Join(sinks, " ") {
		t.Errorf("versioned keys %v, sinks %v", keys, sinks)
	}
}

// TestVersionedValueThatDeploysNothingIsRefused: a versioned value whose
// component does not run, or whose chart ignores it, is a render error at
// the line that set it; the same fleet with the component renders.
func TestVersionedValueThatDeploysNothingIsRefused(t *testing.T) {
	for _, tc := range []struct {
		what, file, from, to, want string
	}{
		{"the HyperShift operator image without the operator", "config/global/defaults.yaml",
			"  hypershift-operator:\n    runs_on: [management]\n", "  hypershift-operator:\n    runs_on: [management]\n    enabled: false\n",
			`hypershift.operator_image "quay.io/hypershift/operator@sha256:`},
	} {
		t.Run(tc.what, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("../../golden/minimal")); err != nil {
				t.Fatal(err)
			}
			g := dir + "/" + tc.file
			b, _ := os.ReadFile(g)
			b = append(b, []byte("hypershift:\n  operator_image: quay.io/hypershift/operator@sha256:"+strings.Repeat("c", 64)+"\n")...)
			if err := os.WriteFile(g, b, 0o644); err != nil {
				t.Fatal(err)
			}
			renderDir(t, dir) // renders with the component
			off := strings.Replace(string(b), tc.from, tc.to, 1)
			if off == string(b) {
				t.Fatal("edit did not apply")
			}
			if err := os.WriteFile(g, []byte(off), 0o644); err != nil {
				t.Fatal(err)
			}
			charts, _ := render.ReadCharts(os.DirFS(dir))
			_, diags := render.Render(load(t, dir), render.Options{Renderer: testVersion, Charts: charts, Pipelines: repoPipelines(t)})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) || !strings.Contains(diags.Error(), "reaches nothing") || !strings.Contains(diags.Error(), "defaults.yaml:") {
				t.Errorf("diagnostics: %v", diags)
			}
		})
	}
}

// TestTemplateSyntaxInValuesStaysData: a value holding Go-template or
// Tekton syntax reaches the component's values as the text it is, and
// never the ApplicationSet template that Argo CD evaluates.
func TestTemplateSyntaxInValuesStaysData(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../golden/uneven-sectors")); err != nil {
		t.Fatal(err)
	}
	g := dir + "/config/global/defaults.yaml"
	b, _ := os.ReadFile(g)
	hostile := `{{ .server }} $(params.x) {{fail "x"}}`
	s := strings.Replace(string(b), "    values:\n      replicas: 2\n", "    values:\n      replicas: 2\n      note: '"+hostile+"'\n", 1)
	if s == string(b) {
		t.Fatal("edit did not apply")
	}
	if err := os.WriteFile(g, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := renderDir(t, dir)
	n := 0
	for p, data := range out.ByPath() {
		if strings.Contains(string(data), hostile) {
			n++
			if !strings.Contains(p, "/values/hypershift-operator.yaml") && !strings.Contains(p, "/effective/") {
				t.Errorf("%s holds the value", p)
			}
		}
		if strings.Contains(p, "applicationset-") && strings.Contains(string(data), ".server") {
			t.Errorf("%s holds template text from config", p)
		}
	}
	if n == 0 {
		t.Error("the value reached no values file")
	}
}
