package fleet_test

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/schema"
)

// FuzzLoadMerge feeds arbitrary bytes as a global, a region and a cluster
// file of the base fleet through load, merge and every schema check. It must
// never panic, and every error must point into a file of the fleet.
func FuzzLoadMerge(f *testing.F) {
	base := baseFleet(f)
	f.Add(base["config/global/defaults.yaml"].Data, base["config/regions/us-east-1.yaml"].Data, base["config/clusters/us-east-1/mc01.yaml"].Data)
	f.Add([]byte("tags: {a: ${region}}\n"), []byte("sector: prod\neks: null\n"), []byte("type: management\ndelete: true\ndelete_pipeline: true\n"))
	f.Add([]byte("a: &a [1,2]\nb: [*a, *a]\n"), []byte("sector: [prod]\n"), []byte("type: regional\nregion: us-west-2\n"))
	f.Add([]byte("\t- x"), []byte("---\n---\n"), []byte("\xff\x00"))
	f.Add([]byte("components: {x: {values: {<<: {a: 1}}}}"), []byte("sector: prod\ntags: {$${x}: y}"), []byte("type: management\neks: {node_min: 9, node_max: 1}"))
	f.Fuzz(func(t *testing.T, global, region, cluster []byte) {
		// A fresh checker per input, as every regionctl run has: a CUE
		// context only grows, and one shared across many thousand inputs
		// slows to a crawl.
		checker, err := schema.New(schema.Options{Version: "fuzz", Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		fsys := fstest.MapFS{}
		for k, v := range base {
			fsys[k] = v
		}
		fsys["config/global/zz-fuzz.yaml"] = &fstest.MapFile{Data: global}
		fsys["config/regions/us-east-1.yaml"] = &fstest.MapFile{Data: region}
		fsys["config/clusters/us-east-1/mc01.yaml"] = &fstest.MapFile{Data: cluster}
		f, diags := fleet.Load(fsys, "config", checker)
		if f == nil {
			t.Fatal("Load returned no fleet")
		}
		for _, d := range diags {
			if d.Summary == "" || d.Pos.File == "" {
				t.Fatalf("diagnostic without summary or file: %+v", d)
			}
			if strings.HasPrefix(d.Pos.File, "schema/") {
				t.Fatalf("diagnostic points at the schema, not the user's file: %v", d)
			}
			if file := fsys[d.Pos.File]; file != nil && d.Pos.Line > bytes.Count(file.Data, []byte("\n"))+1 {
				t.Fatalf("diagnostic past the end of %s: %v", d.Pos.File, d)
			}
		}
		if !diags.HasErrors() {
			for _, c := range f.Clusters {
				if c.Partial || c.Effective.Get("region") == nil || c.Effective.Get("state_bucket") == nil {
					t.Fatalf("valid fleet with incomplete cluster %s", c.ID())
				}
			}
		}
	})
}
