package render_test

import (
	"testing"

	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/render/encode"
)

// BenchmarkArgoDocs encodes the per-cluster Argo CD documents of the
// generated 2,200-cluster fleet (13,200 of them), built once: the part of
// a cold render that grows with the fleet the most.
func BenchmarkArgoDocs(b *testing.B) {
	f := generatedFleet(b, benchFleet)
	g := render.GitOpsOf(f)
	owned := map[string]bool{}
	for _, name := range fleetgen.Charts {
		owned[name] = true
	}
	var docs []any
	for _, cl := range f.Clusters {
		comps, problems := argocd.Components(cl, g, owned)
		if len(problems) > 0 {
			b.Fatal(problems)
		}
		for _, d := range argocd.PerClusterDocs(cl, comps, g) {
			docs = append(docs, d)
		}
	}
	b.ResetTimer()
	var n int
	for b.Loop() {
		n = 0
		for _, d := range docs {
			out, err := encode.YAML(d)
			if err != nil {
				b.Fatal(err)
			}
			n += len(out)
		}
	}
	b.ReportMetric(float64(len(docs)), "docs")
	b.SetBytes(int64(n))
}

// benchFleet is the benchmarks' fleet: 2,200 clusters in 200 regions.
var benchFleet = fleetgen.Options{Sectors: 5, RegionsPerSector: 40, ClustersPerRegion: 11}
