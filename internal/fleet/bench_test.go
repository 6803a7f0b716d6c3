package fleet_test

import (
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/schema"
)

func genFS(o fleetgen.Options) fstest.MapFS { return fleetgen.Generate(o).FS() }

var fleet2200 = fleetgen.Options{Sectors: 5, RegionsPerSector: 40, ClustersPerRegion: 11}

func TestGeneratedFleetIsValid(t *testing.T) {
	f, diags := fleet.Load(genFS(fleetgen.Options{Sectors: 3, RegionsPerSector: 12, ClustersPerRegion: 11}), "config", newChecker(t))
	if len(diags) > 0 {
		t.Fatalf("generated fleet: %v", diags)
	}
	if len(f.Clusters) != 3*12*11 {
		t.Errorf("%d clusters", len(f.Clusters))
	}
}

// BenchmarkLoadValidate loads and validates the 2,200-cluster fleet: cold
// (a new checker, no cache, as a first run) and warm (every result cached,
// as a run after nothing changed). Each run has a checker of its own, as
// each process has: a checker's own memory of the runs before would be
// measured too.
func BenchmarkLoadValidate(b *testing.B) {
	fsys := genFS(fleet2200)
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			c, err := schema.New(schema.Options{Version: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			if _, diags := fleet.Load(fsys, "config", c); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		mem := cache.NewMemory()
		checker := func() *schema.Checker {
			c, err := schema.New(schema.Options{Version: "bench", Cache: mem})
			if err != nil {
				b.Fatal(err)
			}
			return c
		}
		fleet.Load(fsys, "config", checker())
		b.ResetTimer()
		for b.Loop() {
			if _, diags := fleet.Load(fsys, "config", checker()); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
}
