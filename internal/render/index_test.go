package render_test

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tfvars"
)

// TestMarshalIndexIsMarshalJSON holds MarshalIndex, which joins the
// library's encoding of each element itself, to the library encoding the
// whole index (tfvars.MarshalJSON, as every JSON file of deploy/ is
// written), byte for byte: the committed index of the example fleet; an
// index with every field of every type set (a field added to Index and
// not to MarshalIndex fails here), its strings holding what JSON escapes
// (quotes, backslashes, control characters, <>&, U+2028, bytes that are
// not UTF-8); and its lists nil, empty and omitted by omitempty.
func TestMarshalIndexIsMarshalJSON(t *testing.T) {
	committed, err := os.ReadFile("../../deploy/index.json")
	if err != nil {
		t.Fatal(err)
	}
	example, err := render.ParseIndex(committed)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := render.MarshalIndex(example); err != nil || !bytes.Equal(got, committed) {
		t.Errorf("the example fleet's index, re-encoded, differs from deploy/index.json (%v)", err)
	}
	odd := []string{`a"b`, `a\b`, "a\tb\nc\x01", "<a & b>", "line\u2028sep", "é", "bad\xffutf8", ""}
	full := render.Index{
		Marker: odd[0], Generator: odd[3], Renderer: odd[4],
		Sectors: []render.IndexSector{
			{Name: odd[1], Order: 2, Environment: "production", Soak: "72h", Regions: odd},
			{Name: "empty", Regions: []string{}},
			{Name: "nil"},
		},
		Regions: []render.IndexRegion{
			{Name: odd[2], Sector: odd[5], Environment: odd[6], Hash: "sha256:0", Files: odd},
			{Name: "nil"},
		},
		Clusters: []render.IndexCluster{
			{ID: odd[0], Region: odd[1], Name: odd[2], Type: odd[3], Sector: odd[4], Environment: odd[5], Delete: true, DeletePipeline: true, Input: odd[6], Hash: "sha256:1", Files: odd},
			{ID: "empty", Files: []string{}},
		},
		Files: odd,
	}
	for _, v := range []any{full, full.Sectors[0], full.Regions[0], full.Clusters[0]} {
		rv := reflect.ValueOf(v)
		for i := 0; i < rv.NumField(); i++ {
			if rv.Field(i).IsZero() {
				t.Fatalf("%s.%s is not set: the case does not hold it", rv.Type().Name(), rv.Type().Field(i).Name)
			}
		}
	}
	bare := render.Index{Sectors: []render.IndexSector{}, Clusters: []render.IndexCluster{}}
	for name, idx := range map[string]*render.Index{"every field": &full, "nil and empty lists, no renderer": &bare, "zero": {}} {
		want, err := tfvars.MarshalJSON(idx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := render.MarshalIndex(idx)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: MarshalIndex (%v):\n%s\nthe library:\n%s", name, err, got, want)
		}
	}
}
