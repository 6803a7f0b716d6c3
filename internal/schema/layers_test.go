package schema

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/config"
)

// TestLayerFilesAlikeReportEach: cluster files that hold the same values in
// different layouts are checked once, yet each reports at its own lines;
// a file whose values differ is checked on its own.
func TestLayerFilesAlikeReportEach(t *testing.T) {
	fsys := fstest.MapFS{
		"config/clusters/us-east-1/mc01.yaml": {Data: []byte("type: management\nnode_count: 3\n")},
		"config/clusters/us-east-1/mc02.yaml": {Data: []byte("# the second\n\ntype: management\n\n\nnode_count: 3\n")},
		"config/clusters/us-east-1/mc03.yaml": {Data: []byte("type: management\n")},
	}
	docs, diags := config.Parse(fsys, "config")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c, err := New(Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, d := range c.CheckLayers(docs) {
		found[d.Pos.File] = d.Pos.String()
		if !strings.Contains(d.Summary, "node_count") {
			t.Errorf("%s: %s", d.Pos, d.Summary)
		}
	}
	want := map[string]string{
		"config/clusters/us-east-1/mc01.yaml": "config/clusters/us-east-1/mc01.yaml:2:1",
		"config/clusters/us-east-1/mc02.yaml": "config/clusters/us-east-1/mc02.yaml:6:1",
	}
	for f, pos := range want {
		if found[f] != pos {
			t.Errorf("%s: reported at %q, want %q", f, found[f], pos)
		}
	}
	if len(found) != len(want) {
		t.Errorf("reports in %v, want only %v", found, want)
	}
	n := 0
	c.layerMemo.Range(func(any, any) bool { n++; return true })
	if n != 2 {
		t.Errorf("%d layer checks for two distinct files' values", n)
	}
}
