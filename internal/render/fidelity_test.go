package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	yamlv2 "go.yaml.in/yaml/v2"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/schema"
)

// The scalars a config may hold that readers are known to bend: each must
// reach every output as the same value, read by a YAML 1.1 reader (Helm,
// sigs.k8s.io/yaml), a YAML 1.2 reader and a JSON reader alike.
var fidelityValues = map[string]any{
	"account":   "012345678901",
	"version":   "1.10",
	"yes_word":  "yes",
	"off_word":  "off",
	"null_word": "null",
	"tilde":     "~",
	"hex_text":  "0x1F",
	"octal":     "0755",
	"under":     "1_000",
	"sexagesim": "1:20",
	"exact":     int64(9007199254740992),
	"negative":  int64(-9007199254740992),
	"fraction":  1.25,
	"empty":     "",
	"spaces":    " padded ",
	"template":  "{{ .Values.x }}",
}

const fidelityConfig = `tags:
  cost_center: "012345678901"
  release: "1.10"
  enabled: "true"
components:
  fidelity:
    runs_on: [regional, management]
    chart:
      repo_url: https://charts.example.com
      name: fidelity
    chart_revision: "1.10"
    values:
      account: "012345678901"
      version: "1.10"
      yes_word: "yes"
      off_word: "off"
      null_word: "null"
      tilde: "~"
      hex_text: "0x1F"
      octal: "0755"
      under: "1_000"
      sexagesim: "1:20"
      exact: 9007199254740992
      negative: -9007199254740992
      fraction: 1.25
      empty: ""
      spaces: " padded "
      template: "{{ .Values.x }}"
`

func fidelityRender(t *testing.T, topology string) *render.Output {
	t.Helper()
	fsys := fleetgen.Generate(fleetgen.Options{Sectors: 2, RegionsPerSector: 1, ClustersPerRegion: 2}).FS()
	fsys["config/global/zz-fidelity.yaml"] = &fstest.MapFile{Data: []byte(fidelityConfig + "gitops:\n  argocd_topology: " + topology + "\n  revision: \"1.10\"\n")}
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(fsys, "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pipelines, err := tekton.ReadPipelines(os.DirFS("../.."))
	if err != nil {
		t.Fatal(err)
	}
	out, diags := render.Render(f, render.Options{Renderer: "test", Pipelines: pipelines,
		Charts: []string{"cluster-lifecycle-manager", "hypershift-operator", "observability", "platform-api"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return out
}

// readers decode one output as each kind of reader would.
func readers(t *testing.T, path string, data []byte) map[string]any {
	t.Helper()
	out := map[string]any{}
	if strings.HasSuffix(path, ".json") {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out["json"] = v
		return out
	}
	var v1, v2 any
	if err := yamlv2.Unmarshal(data, &v1); err != nil {
		t.Fatalf("%s (YAML 1.1): %v", path, err)
	}
	if err := yamlv3.Unmarshal(data, &v2); err != nil {
		t.Fatalf("%s (YAML 1.2): %v", path, err)
	}
	out["yaml1.1"], out["yaml1.2"] = v1, v2
	return out
}

// find returns the first map under v holding key with a map value.
func find(v any, key string) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if m, ok := normal(x[key]).(map[string]any); ok {
			return m
		}
		for _, e := range x {
			if m := find(e, key); m != nil {
				return m
			}
		}
	case map[any]any:
		return find(normal(x), key)
	case []any:
		for _, e := range x {
			if m := find(e, key); m != nil {
				return m
			}
		}
	}
	return nil
}

// normal turns YAML 1.1 maps into string-keyed ones.
func normal(v any) any {
	if m, ok := v.(map[any]any); ok {
		out := map[string]any{}
		for k, e := range m {
			if s, ok := k.(string); ok {
				out[s] = normal(e)
			}
		}
		return out
	}
	return v
}

// same compares a decoded scalar with the value written in config.
func same(got, want any) bool {
	switch w := want.(type) {
	case string:
		s, ok := got.(string)
		return ok && s == w
	case int64:
		switch g := got.(type) {
		case int:
			return int64(g) == w
		case int64:
			return g == w
		case uint64:
			return w >= 0 && g == uint64(w)
		case json.Number:
			return g.String() == json.Number(strings.TrimSpace(string(mustJSON(w)))).String()
		}
	case float64:
		switch g := got.(type) {
		case float64:
			return g == w
		case json.Number:
			f, err := g.Float64()
			return err == nil && f == w
		}
	}
	return false
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestScalarsReachEveryOutputUnchanged(t *testing.T) {
	for _, topology := range []string{"per-cluster", "central"} {
		t.Run(topology, func(t *testing.T) {
			out := fidelityRender(t, topology)
			checked := map[string]int{}
			for _, a := range out.Artifacts {
				if !strings.HasSuffix(a.Path, ".json") && !strings.HasSuffix(a.Path, ".yaml") {
					continue
				}
				for reader, v := range readers(t, a.Path, a.Bytes) {
					// Helm values of fidelity: an Application's valuesObject or a
					// values file.
					if strings.Contains(a.Path, "fidelity") {
						vals := find(v, "valuesObject")
						if vals == nil && strings.Contains(a.Path, "/values/") {
							vals, _ = normal(v).(map[string]any)
						}
						if vals != nil {
							checked["helm values"]++
							for k, want := range fidelityValues {
								if !same(normal(vals[k]), want) {
									t.Errorf("%s (%s): %s = %#v, config says %#v", a.Path, reader, k, vals[k], want)
								}
							}
						}
					}
					// The effective config the review shows.
					if strings.Contains(a.Path, "/effective/") {
						if vals, _ := normal(find(v, "fidelity")["values"]).(map[string]any); vals != nil {
							checked["effective"]++
							for k, want := range fidelityValues {
								if !same(normal(vals[k]), want) {
									t.Errorf("%s (%s): %s = %#v, config says %#v", a.Path, reader, k, vals[k], want)
								}
							}
						}
					}
					// Terraform variables: the tags.
					if strings.HasSuffix(a.Path, ".tfvars.json") && !strings.HasSuffix(a.Path, "central-bootstrap.tfvars.json") {
						if tags := find(v, "tags"); tags != nil {
							checked["tfvars"]++
							for k, want := range map[string]any{"cost_center": "012345678901", "release": "1.10", "enabled": "true"} {
								if !same(tags[k], want) {
									t.Errorf("%s: tag %s = %#v, config says %#v", a.Path, k, tags[k], want)
								}
							}
						}
					}
					// The Application's targetRevision (per cluster) or the cluster
					// Secret's annotation the ApplicationSet reads (central).
					if strings.HasSuffix(a.Path, "/apps/fidelity.yaml") {
						checked["revision"]++
						if src := find(v, "source"); src == nil || !same(src["targetRevision"], "1.10") {
							t.Errorf("%s (%s): targetRevision %#v", a.Path, reader, src)
						}
					}
					if strings.Contains(a.Path, "/argocd/clusters/") {
						checked["revision"]++
						if ann := find(v, "annotations"); ann == nil || !same(ann["regionctl.io/fidelity-revision"], "1.10") {
							t.Errorf("%s (%s): annotations %#v", a.Path, reader, ann)
						}
					}
					// PipelineRun params: gitops.revision.
					if strings.HasSuffix(a.Path, ".pipelinerun.yaml") {
						spec, _ := normal(find(v, "spec")["params"]).([]any)
						for _, p := range spec {
							if m, _ := normal(p).(map[string]any); m["name"] == "git-revision" {
								checked["pipelinerun"]++
								if !same(m["value"], "1.10") {
									t.Errorf("%s (%s): git-revision = %#v", a.Path, reader, m["value"])
								}
							}
						}
					}
				}
			}
			for _, kind := range []string{"helm values", "tfvars", "pipelinerun", "revision", "effective"} {
				if checked[kind] == 0 {
					t.Errorf("no %s checked", kind)
				}
			}
			t.Logf("%s: %v", topology, checked)
		})
	}
}
