package render

import (
	"os"
	"sync"
	"testing"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/schema"
)

// TestOneClusterIdentity: the input identity a render records in
// index.json is the one a review computes for the same side before any
// check (from the layers alone), and the one the cache keys the cluster's
// files by: a render whose cache another render filled with the same
// identities renders nothing, and one with another identity misses.
func TestOneClusterIdentity(t *testing.T) {
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS("../../golden/uneven-sectors")
	pipelines, err := tekton.ReadPipelines(os.DirFS("../.."))
	if err != nil {
		t.Fatal(err)
	}
	charts, err := ReadCharts(fsys)
	if err != nil {
		t.Fatal(err)
	}
	chartValues, err := ReadChartValues(fsys, charts)
	if err != nil {
		t.Fatal(err)
	}
	checked, ds := fleet.Load(fsys, "config", c)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	mem := &counting{Memory: cache.NewMemory()}
	opts := Options{Renderer: "test", Charts: charts, ChartValues: chartValues, Pipelines: pipelines, Cache: mem}
	out, ds := Render(checked, opts)
	if ds.HasErrors() {
		t.Fatal(ds)
	}

	// The review's identity, of the fleet as built, before the schema's
	// defaults.
	p := fleet.Parse(fsys, "config", c)
	built, ds := config.Build(p.Docs)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	ids, err := identities(opts, [2][]string{charts, charts}, [2]map[string]*argocd.ChartValues{chartValues, chartValues}, [2]tekton.Pipelines{pipelines, pipelines})
	if err != nil {
		t.Fatal(err)
	}
	id := ids(1, built)
	recorded := map[string]string{}
	for _, ic := range out.Index.Clusters {
		recorded[ic.ID] = ic.Input
	}
	if len(recorded) == 0 {
		t.Fatal("the index lists no cluster")
	}
	for _, cl := range built.Clusters {
		if got := id(cl); got == "" || got != recorded[cl.ID()] {
			t.Errorf("%s: the review's identity %q, the index's %q", cl.ID(), got, recorded[cl.ID()])
		}
	}

	// The cache: the same identities hit, another misses.
	hits := func(o Options) int {
		mem.mu.Lock()
		before := mem.puts
		mem.mu.Unlock()
		if _, ds := Render(checked, o); ds.HasErrors() {
			t.Fatal(ds)
		}
		return mem.puts - before
	}
	if added := hits(opts); added != 0 {
		t.Errorf("a render of the same inputs stored %d new entries", added)
	}
	other := opts
	other.Charts = append(append([]string(nil), charts...), "logging")
	if added := hits(other); added == 0 {
		t.Error("a render with other charts hit the cache")
	}
	if id2, _ := identities(other, [2][]string{other.Charts, other.Charts}, [2]map[string]*argocd.ChartValues{chartValues, chartValues}, [2]tekton.Pipelines{pipelines, pipelines}); id2(1, built)(built.Clusters[0]) == id(built.Clusters[0]) {
		t.Error("other charts gave the same identity")
	}
}

// counting counts what a render stores (renders run one at a time here,
// but each stores from several goroutines).
type counting struct {
	*cache.Memory
	mu   sync.Mutex
	puts int
}

func (c *counting) Put(key string, value []byte) {
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
	c.Memory.Put(key, value)
}
