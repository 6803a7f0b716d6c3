package render_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render"
)

// TestDRAccountNameOfAnotherRegionsCluster: the central pipeline finds
// accounts by name, so a region's DR account named as a cluster account of
// another region is refused, at the DR name's line, naming that cluster.
func TestDRAccountNameOfAnotherRegionsCluster(t *testing.T) {
	load := func(fsys fstest.MapFS) *config.Fleet { return loadFS(t, fsys, "the generated fleet") }
	fsys := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 2, ClustersPerRegion: 2}).FS()
	opts := render.Options{Version: "test", Charts: fleetgen.Charts, Pipelines: repoPipelines(t)}
	if _, diags := render.Render(load(fsys), opts); diags.HasErrors() {
		t.Fatalf("the generated fleet does not render: %v", diags)
	}
	var other string
	for _, cl := range load(fsys).Clusters {
		if cl.ID() == "us-east-2/mc01" {
			other = cl.Effective.Lookup("account", "name").Str
		}
	}
	if other == "" {
		t.Fatal("no account name for us-east-2/mc01")
	}
	file := "config/clusters/us-east-1/regional.yaml"
	fsys[file] = &fstest.MapFile{Data: append(fsys[file].Data, []byte("etcd_backup:\n  account:\n    name: "+other+"\n")...)}
	_, diags := render.Render(load(fsys), opts)
	var found bool
	for _, d := range diags {
		if strings.Contains(d.Summary, "DR account name "+other+" is also the account of us-east-2/mc01") && d.Pos.File == file {
			found = true
		}
	}
	if !found {
		t.Errorf("a DR account named as us-east-2/mc01's account (%s) was not refused at %s: %v", other, file, diags)
	}
}
