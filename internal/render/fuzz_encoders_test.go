package render_test

import (
	"encoding/json"
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

// FuzzTFVarsAndRunsRoundTrip: a tag value (any string the schema admits)
// reaches every cluster's Terraform variables as that same string, read
// back by a JSON reader; a deploy branch (gitops.revision) reaches every
// PipelineRun's git-revision as that same string, read back by YAML 1.1 and
// 1.2 readers; or the loader refuses the input with a message.
func FuzzTFVarsAndRunsRoundTrip(f *testing.F) {
	for _, s := range [][2]string{{"yes", "main"}, {"0755", "release/1.10"}, {"1.10", "0755"}, {"", "yes"}, {"a\nb", "off"},
		{"\"}", "1e3"}, {"${x}", "v1.2.3"}, {"\\u0000", "feature/x_y"}, {"<script>", "null"}, {"\u2028", "~"}} {
		f.Add(s[0], s[1])
	}
	c, err := schema.New(schema.Options{Version: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	pipelines := repoPipelines(f)
	base := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 1, ClustersPerRegion: 2}).FS()
	f.Fuzz(func(t *testing.T, tag, revision string) {
		if !utf8.ValidString(tag) || !utf8.ValidString(revision) || strings.ContainsRune(tag+revision, 0) {
			t.Skip()
		}
		layer, err := yamlv3.Marshal(map[string]any{"tags": map[string]any{"fuzz": tag}, "gitops": map[string]any{"revision": revision}})
		if err != nil {
			t.Skip()
		}
		fsys := fstest.MapFS{}
		for p, file := range base {
			fsys[p] = file
		}
		fsys["config/global/zz-fuzz.yaml"] = &fstest.MapFile{Data: layer}
		fl, diags := fleet.Load(fsys, "config", c)
		if diags.HasErrors() {
			return // refused with a message: allowed
		}
		out, diags := render.Render(fl, render.Options{Renderer: "fuzz", Pipelines: pipelines, Charts: []string{"cluster-lifecycle-manager", "hypershift-operator", "observability", "platform-api"}})
		if diags.HasErrors() {
			return
		}
		tfvars, runs := 0, 0
		for _, a := range out.Artifacts {
			switch {
			case strings.Contains(a.Path, "/terraform/") && strings.HasSuffix(a.Path, ".tfvars.json") && !strings.HasSuffix(a.Path, "central-bootstrap.tfvars.json"):
				tfvars++
				var v struct {
					Tags map[string]any `json:"tags"`
				}
				if err := json.Unmarshal(a.Bytes, &v); err != nil {
					t.Fatalf("%s is not JSON: %v", a.Path, err)
				}
				if got, ok := v.Tags["fuzz"].(string); !ok || got != tag {
					t.Fatalf("%s: tag %q became %#v", a.Path, tag, v.Tags["fuzz"])
				}
			case strings.HasSuffix(a.Path, ".pipelinerun.yaml"):
				runs++
				var v1, v2 struct {
					Spec struct {
						Params []struct {
							Name  string
							Value any
						}
					}
				}
				if err := yamlv2.Unmarshal(a.Bytes, &v1); err != nil {
					t.Fatalf("%s does not parse as YAML 1.1: %v", a.Path, err)
				}
				if err := yamlv3.Unmarshal(a.Bytes, &v2); err != nil {
					t.Fatalf("%s does not parse as YAML 1.2: %v", a.Path, err)
				}
				for reader, params := range map[string][]struct {
					Name  string
					Value any
				}{"yaml1.1": v1.Spec.Params, "yaml1.2": v2.Spec.Params} {
					found := false
					for _, p := range params {
						if p.Name == "git-revision" {
							found = true
							if got, ok := p.Value.(string); !ok || got != revision {
								t.Fatalf("%s (%s): git-revision %q became %#v", a.Path, reader, revision, p.Value)
							}
						}
					}
					if !found {
						t.Fatalf("%s has no git-revision", a.Path)
					}
				}
			}
		}
		if tfvars == 0 || runs == 0 {
			t.Fatalf("rendered %d tfvars and %d PipelineRuns", tfvars, runs)
		}
	})
}
