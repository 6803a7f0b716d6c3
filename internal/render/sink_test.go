package render_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
)

// TestSinkTakesEveryRegionAndClusterFile: a render with a Sink hands it
// every region's and cluster's file once, keeps their paths and owners
// without their bytes, and is otherwise the render without one, index.json
// (its per-region and per-cluster hashes) included.
func TestSinkTakesEveryRegionAndClusterFile(t *testing.T) {
	f := loadFS(t, fleetgen.Generate(fleetgen.Options{Sectors: 2, RegionsPerSector: 2, ClustersPerRegion: 11}).FS(), "generated")
	opts := render.Options{Renderer: testVersion, Charts: []string{"cluster-lifecycle-manager", "hypershift-operator", "observability", "platform-api"},
		Pipelines: repoPipelines(t), Cache: cache.NewMemory(), Memo: &render.Memo{}}
	whole, diags := render.Render(f, opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var mu sync.Mutex
	sunk := map[string][]byte{}
	opts.Memo = &render.Memo{}
	opts.Sink = func(arts []render.Artifact) error {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range arts {
			if _, twice := sunk[a.Path]; twice {
				t.Errorf("%s handed twice", a.Path)
			}
			sunk[a.Path] = a.Bytes
		}
		return nil
	}
	streamed, diags := render.Render(f, opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := map[string][]byte{}
	owners := map[string]string{}
	for _, a := range streamed.Artifacts {
		owners[a.Path] = a.Owner
		if b, ok := sunk[a.Path]; ok {
			if a.Bytes != nil {
				t.Errorf("%s went to the sink and stayed in the output", a.Path)
			}
			if a.Owner == "" {
				t.Errorf("%s, a fleet-wide file, went to the sink", a.Path)
			}
			got[a.Path] = b
		} else {
			got[a.Path] = a.Bytes
		}
	}
	want, wantOwners := map[string][]byte{}, map[string]string{}
	for _, a := range whole.Artifacts {
		want[a.Path], wantOwners[a.Path] = a.Bytes, a.Owner
	}
	if len(sunk) < len(whole.Artifacts)/2 {
		t.Errorf("only %d of %d files went to the sink", len(sunk), len(whole.Artifacts))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-whole +streamed):\n%s", diff)
	}
	if diff := cmp.Diff(wantOwners, owners); diff != "" {
		t.Errorf("owners (-whole +streamed):\n%s", diff)
	}
	if diff := cmp.Diff(whole.Index, streamed.Index); diff != "" {
		t.Errorf("index (-whole +streamed):\n%s", diff)
	}

	// A sink that fails ends the render with its error.
	opts.Sink = func([]render.Artifact) error { return errors.New("disk full") }
	if out, diags := render.Render(f, opts); out != nil || !diags.HasErrors() {
		t.Errorf("a failing sink: output %v, diagnostics %v", out != nil, diags)
	}
}

// TestHeldFilesTakeTheirSize: without a Sink the output holds every file
// (a review holds thousands), each in a buffer of about its size rather
// than its encoder's, with and without the result cache.
func TestHeldFilesTakeTheirSize(t *testing.T) {
	f := loadFS(t, fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 2, ClustersPerRegion: 3}).FS(), "generated")
	charts := []string{"cluster-lifecycle-manager", "hypershift-operator", "observability", "platform-api"}
	for _, opts := range []render.Options{
		{Renderer: testVersion, Pipelines: repoPipelines(t), Charts: charts},
		{Renderer: testVersion, Pipelines: repoPipelines(t), Charts: charts, Cache: cache.NewMemory(), Memo: &render.Memo{}},
	} {
		out, diags := render.Render(f, opts)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		var held, spare int
		for _, a := range out.Artifacts {
			held += len(a.Bytes)
			spare += cap(a.Bytes) - len(a.Bytes)
			if s := cap(a.Bytes) - len(a.Bytes); s > len(a.Bytes)/4+16 {
				t.Errorf("%s: %d bytes held in a buffer of %d", a.Path, len(a.Bytes), cap(a.Bytes))
			}
		}
		t.Logf("%d files, %d bytes, %d spare", len(out.Artifacts), held, spare)
	}
}
