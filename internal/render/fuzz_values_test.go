package render_test

import (
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// FuzzValuesRoundTrip: any string a config holds reaches a cluster's Helm
// values and its effective config as that same string, to a YAML 1.1 and a YAML 1.2 reader alike
// (or the loader refuses it with a message).
func FuzzValuesRoundTrip(f *testing.F) {
	for _, s := range []string{"yes", "off", "0755", "1.10", "~", "null", "", " ", "{{ .x }}", "a: b", "- x", "#c",
		"'", "\"", "\\", "\n", "a\nb", "\t", "0x1F", ".inf", "1e3", "2001-01-01", "=", "<<", "!tag", "&a", "*a", "%"} {
		f.Add(s)
	}
	c, err := schema.New(schema.Options{Version: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	base := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 1, ClustersPerRegion: 1}).FS()
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			t.Skip()
		}
		quoted, err := yamlv3.Marshal(map[string]any{"components": map[string]any{"argo-cd": map[string]any{"values": map[string]any{"v": s}}}})
		if err != nil {
			t.Skip()
		}
		fsys := fstest.MapFS{}
		for p, file := range base {
			fsys[p] = file
		}
		fsys["config/global/zz-fuzz.yaml"] = &fstest.MapFile{Data: quoted}
		fl, diags := fleet.Load(fsys, "config", c)
		if diags.HasErrors() {
			return // refused with a message: allowed
		}
		out, diags := render.Render(fl, render.Options{Renderer: "fuzz", Charts: []string{"cluster-lifecycle-manager", "hypershift-operator", "observability", "platform-api"}})
		if diags.HasErrors() {
			return
		}
		seen := 0
		for _, a := range out.Artifacts {
			app := strings.HasSuffix(a.Path, "/apps/argo-cd.yaml")
			if !app && !strings.Contains(a.Path, "/effective/") {
				continue
			}
			seen++
			var v1, v2 any
			if err := yamlv2.Unmarshal(a.Bytes, &v1); err != nil {
				t.Fatalf("%s does not parse as YAML 1.1: %v", a.Path, err)
			}
			if err := yamlv3.Unmarshal(a.Bytes, &v2); err != nil {
				t.Fatalf("%s does not parse as YAML 1.2: %v", a.Path, err)
			}
			for reader, v := range map[string]any{"yaml1.1": v1, "yaml1.2": v2} {
				vals := find(v, "valuesObject")
				if !app { // the effective config the review shows
					vals, _ = normal(find(v, "argo-cd")["values"]).(map[string]any)
				}
				if got, ok := normal(vals["v"]).(string); !ok || got != s {
					t.Fatalf("%s (%s): %q became %#v", a.Path, reader, s, vals["v"])
				}
			}
		}
		if seen == 0 {
			t.Fatal("no argo-cd Application rendered")
		}
	})
}
