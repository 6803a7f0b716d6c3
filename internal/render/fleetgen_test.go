package render_test

import (
	"testing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// The benchmarks and `regionctl dev gen-fleet` stand on the generated
// fleet, so it must stay a fleet regionctl renders: one region of eleven
// clusters holds both deletion phases (a destroy waits for an approver).
func TestGeneratedFleetRenders(t *testing.T) {
	f := generatedFleet(t, fleetgen.Options{Sectors: 2, RegionsPerSector: 1, ClustersPerRegion: 11})
	if _, diags := render.Render(f, render.Options{Renderer: "test",
		Charts: []string{"cluster-lifecycle-manager", "hypershift-operator", "observability", "platform-api"}}); diags.HasErrors() {
		t.Fatal(diags)
	}
}

// generatedFleet loads and validates the fleet fleetgen generates with o.
func generatedFleet(tb testing.TB, o fleetgen.Options) *config.Fleet {
	tb.Helper()
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	f, diags := fleet.Load(fleetgen.Generate(o).FS(), "config", c)
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	return f
}
