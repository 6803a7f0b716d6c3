package render_test

import (
	"bytes"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/schema"
	"github.com/regionctl/regionctl/terraform"
)

// TestCacheKeyCoversEveryInput: a render whose cache was filled by a render
// of other inputs gives exactly what a fresh, uncached render gives, for a
// change of each input renderCluster reads: the config, the charts the
// repository owns, the Tekton Pipelines, the Terraform roots, the GitOps
// settings and the renderer itself. An input left out of the key makes the
// cached render return what the old input made.
func TestCacheKeyCoversEveryInput(t *testing.T) {
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	load := func(extra map[string]string) *config.Fleet {
		fsys := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 1, ClustersPerRegion: 2}).FS()
		for p, data := range extra {
			fsys[p] = &fstest.MapFile{Data: []byte(data)}
		}
		f, diags := fleet.Load(fsys, "config", c)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return f
	}
	pipelines := repoPipelines(t)
	base := render.Options{Renderer: "test", CacheSalt: "build-1", Charts: fleetgen.Charts, Pipelines: pipelines}
	baseFleet := load(nil)

	// A Pipeline that no longer declares a param the PipelineRuns pass.
	fewerParams := tekton.Pipelines{}
	for name, params := range pipelines {
		fewerParams[name] = params[1:]
	}
	// A management-cluster root with a required variable nothing sets.
	roots := fstest.MapFS{}
	fs.WalkDir(terraform.Roots, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(terraform.Roots, p)
			roots[p] = &fstest.MapFile{Data: b}
		}
		return nil
	})
	roots["management-cluster/extra.tf"] = &fstest.MapFile{Data: []byte("variable \"regionctl_new_input\" {\n  type = string\n}\n")}

	for _, tc := range []struct {
		name string
		f    *config.Fleet
		opts func(render.Options) render.Options
	}{
		{"config", load(map[string]string{"config/global/zz.yaml": "eks:\n  node_max: 17\n"}), nil},
		{"gitops", load(map[string]string{"config/global/zz.yaml": "gitops:\n  repo_url: https://git.example.com/other/fleet.git\n"}), nil},
		{"charts", baseFleet, func(o render.Options) render.Options { o.Charts = o.Charts[1:]; return o }},
		{"pipelines", baseFleet, func(o render.Options) render.Options { o.Pipelines = fewerParams; return o }},
		{"terraform roots", baseFleet, func(o render.Options) render.Options { o.Roots = roots; return o }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := base
			if tc.opts != nil {
				opts = tc.opts(base)
			}
			mem := cache.NewMemory()
			warm := base
			warm.Cache = mem
			if _, diags := render.Render(baseFleet, warm); diags.HasErrors() {
				t.Fatal(diags)
			}
			cached := opts
			cached.Cache = mem
			got, gotDiags := render.Render(tc.f, cached)
			want, wantDiags := render.Render(tc.f, opts) // no cache at all
			if gotDiags.HasErrors() != wantDiags.HasErrors() {
				t.Fatalf("cached render errors: %v; fresh render errors: %v", gotDiags.HasErrors(), wantDiags.HasErrors())
			}
			if wantDiags.HasErrors() {
				return
			}
			files := func(o *render.Output) map[string][]byte {
				m := map[string][]byte{}
				for _, a := range o.Artifacts {
					m[a.Path] = a.Bytes
				}
				return m
			}
			g, w := files(got), files(want)
			changed := 0
			for p, b := range w {
				if !bytes.Equal(g[p], b) {
					t.Errorf("%s: the cached render differs from a fresh one", p)
				}
			}
			for p, b := range files(mustRender(t, baseFleet, base)) {
				if !bytes.Equal(w[p], b) {
					changed++
				}
			}
			if changed == 0 {
				t.Fatal("the input changes no file: the case tests nothing")
			}
		})
	}
}

func mustRender(t *testing.T, f *config.Fleet, o render.Options) *render.Output {
	t.Helper()
	out, diags := render.Render(f, o)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return out
}
