package render_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/schema"
)

var update = flag.Bool("update", false, "rewrite golden/*/deploy from the render")

const testVersion = "golden"

func load(t testing.TB, root string) *config.Fleet {
	t.Helper()
	return loadFS(t, os.DirFS(root), root)
}

// loadFS loads the fleet of fsys (named name in failures), which must have
// no errors.
func loadFS(t testing.TB, fsys fs.FS, name string) *config.Fleet {
	t.Helper()
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(fsys, "config", c)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", name, diags)
	}
	return f
}

func renderDir(t testing.TB, root string) *render.Output {
	t.Helper()
	charts, err := render.ReadCharts(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	values, err := render.ReadChartValues(os.DirFS(root), charts)
	if err != nil {
		t.Fatal(err)
	}
	out, diags := render.Render(load(t, root), render.Options{Renderer: testVersion, Charts: charts, ChartValues: values, Pipelines: repoPipelines(t)})
	if diags.HasErrors() {
		t.Fatalf("%s: %v", root, diags)
	}
	return out
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := deploytree.OS{}.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

// repoPipelines are the Pipelines of the repository's pipelines/tekton,
// which every fleet's PipelineRuns are checked against.
func repoPipelines(t testing.TB) tekton.Pipelines {
	p, err := tekton.ReadPipelines(os.DirFS("../.."))
	if err != nil || len(p) == 0 {
		t.Fatalf("reading pipelines/tekton: %v (%d pipelines)", err, len(p))
	}
	return p
}

// TestGolden renders every fleet under golden/ and compares the result with
// the committed golden/<name>/deploy, file by file. go test ./internal/render
// -update rewrites them; review the diff before committing.
func TestGolden(t *testing.T) {
	dirs, _ := filepath.Glob("../../golden/*/config")
	if len(dirs) < 3 {
		t.Fatalf("only %d golden fleets", len(dirs))
	}
	for _, cfg := range dirs {
		root := filepath.Dir(cfg)
		t.Run(filepath.Base(root), func(t *testing.T) {
			out := renderDir(t, root)
			dir := filepath.Join(root, "deploy")
			if *update {
				if _, err := deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{PruneForeign: true}); err != nil {
					t.Fatal(err)
				}
			}
			got := map[string]string{}
			for p, b := range out.ByPath() {
				got[p] = string(b)
			}
			want := map[string]string{}
			for p, b := range readTree(t, dir) {
				want[p] = string(b)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("render of %s differs from %s (-want +got):\n%s\nrun: go test ./internal/render -update", cfg, dir, d)
			}
		})
	}
}

// TestRepositoryDeployIsFresh is what `render --check` does in CI, as a test.
func TestRepositoryDeployIsFresh(t *testing.T) {
	out := renderDir(t, "../..")
	ch, _, err := deploytree.Plan(deploytree.OS{}, "../../deploy", withVersion(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Clean() {
		t.Errorf("deploy/ is stale: changed %v, added %v, removed %v, foreign %v; run make render", ch.Changed, ch.Added, ch.Removed, ch.Foreign)
	}
}

// withVersion re-renders the index with the renderer the committed tree
// was written by, so the test does not depend on the Go release the test
// runs with (make test's last step holds the built binary to deploy/ whole).
func withVersion(t *testing.T, out *render.Output) *render.Output {
	t.Helper()
	old, err := deploytree.ReadIndex(deploytree.OS{}, "../../deploy")
	if err != nil || old == nil {
		t.Fatalf("reading deploy/index.json: %v", err)
	}
	idx := *out.Index
	idx.Renderer = old.Renderer
	b, err := render.MarshalIndex(&idx)
	if err != nil {
		t.Fatal(err)
	}
	cp := &render.Output{Index: &idx}
	for _, a := range out.Artifacts {
		if a.Path == render.IndexPath {
			a.Bytes = b
		}
		cp.Artifacts = append(cp.Artifacts, a)
	}
	return cp
}

// reversedFS lists directories in reverse order, as no real file system is
// obliged not to.
type reversedFS struct{ fstest.MapFS }

func (r reversedFS) ReadDir(name string) ([]os.DirEntry, error) {
	es, err := r.MapFS.ReadDir(name)
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	return es, err
}

// TestByteStable renders the example fleet under different GOMAXPROCS,
// directory order, time zone and locale; every render must be identical.
func TestByteStable(t *testing.T) {
	ref := renderDir(t, "../..").ByPath()
	mem := fstest.MapFS{}
	files, _ := deploytree.OS{}.Files("../../config")
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join("../../config", f))
		mem["config/"+f] = &fstest.MapFile{Data: b}
	}
	c, _ := schema.New(schema.Options{Version: "test", Workers: 1})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	t.Setenv("TZ", "Pacific/Chatham")
	t.Setenv("LC_ALL", "tr_TR.UTF-8")
	f, diags := fleet.Load(reversedFS{mem}, "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	charts, _ := render.ReadCharts(os.DirFS("../.."))
	values, err := render.ReadChartValues(os.DirFS("../.."), charts)
	if err != nil {
		t.Fatal(err)
	}
	out, diags := render.Render(f, render.Options{Renderer: testVersion, Charts: charts, ChartValues: values, Pipelines: repoPipelines(t)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if d := cmp.Diff(ref, out.ByPath()); d != "" {
		t.Errorf("render depends on environment:\n%s", d)
	}
	for p, b := range ref {
		if len(b) == 0 || b[len(b)-1] != '\n' {
			t.Errorf("%s does not end in a newline", p)
		}
	}
}

// BenchmarkRender renders the generated 2,200-cluster fleet (already loaded
// and validated) with its charts and the repository's pipelines: only renders
// in memory, cold writes a new tree to a temp dir, unchanged re-renders
// over an unchanged one (nothing is written).
func BenchmarkRender(b *testing.B) {
	f := generatedFleet(b, benchFleet)
	base := render.Options{Renderer: "bench", Charts: fleetgen.Charts, Pipelines: repoPipelines(b)}
	b.Run("only", func(b *testing.B) {
		for b.Loop() {
			if _, diags := render.Render(f, base); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			dir := filepath.Join(b.TempDir(), "deploy")
			out, diags := render.Render(f, base)
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			if _, err := deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "deploy")
		opts := base
		opts.Cache = cache.NewMemory()
		out, _ := render.Render(f, opts)
		if _, err := deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			out, diags := render.Render(f, opts)
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			ch, err := deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{})
			if err != nil || !ch.Clean() {
				b.Fatal(err, ch)
			}
		}
	})
}
