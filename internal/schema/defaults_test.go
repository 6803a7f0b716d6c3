package schema

import (
	"encoding/json"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleetgen"
)

// TestDefaultsAsFieldsListsThem holds the #Cluster step's defaults, found by
// looking up the fields the schema declares, to the defaults found by
// listing every field of the unified value: the same paths, values and
// positions, for every cluster of the repository's example fleet and of a
// generated fleet of both cluster types.
func TestDefaultsAsFieldsListsThem(t *testing.T) {
	w := compiledForTest(t)
	total := 0
	for name, f := range testFleets(t) {
		for _, cl := range f.Clusters {
			in := w.clusterInput(cl.Effective)
			u := w.rules.Unify(w.ctx.BuildExpr(toCUE(in, false)))
			if err := u.Validate(cue.Concrete(true)); err != nil {
				t.Fatalf("%s: cluster %s: %v", name, cl.ID(), err)
			}
			var listed, looked []defaultValue
			collectDefaults(u, in, nil, &listed)
			w.defaults(u, in, nil, &looked)
			sort.Slice(listed, func(i, j int) bool {
				return strings.Join(listed[i].Path, "\x00") < strings.Join(listed[j].Path, "\x00")
			})
			a, _ := json.Marshal(listed)
			b, _ := json.Marshal(looked)
			if string(a) != string(b) {
				t.Errorf("%s: cluster %s:\nlisted %s\nlooked %s", name, cl.ID(), a, b)
			}
			total += len(looked)
		}
	}
	if total < 20 {
		t.Errorf("only %d defaults in all: the fleets exercise too little", total)
	}
	t.Logf("%d defaults compared", total)
}

// collectDefaults is the reference: every field of u (CUE lists them all)
// that t does not set, with the position of its default.
func collectDefaults(u cue.Value, t *config.Value, p []string, out *[]defaultValue) {
	it, err := u.Fields()
	if err != nil {
		return
	}
	for it.Next() {
		key := it.Selector().Unquoted()
		fv, child := it.Value(), t.Get(key)
		cp := append(append([]string(nil), p...), key)
		if child != nil {
			if child.Kind == config.Map && fv.IncompleteKind() == cue.StructKind {
				collectDefaults(fv, child, cp, out)
			}
			continue
		}
		b, err := fv.MarshalJSON()
		if err != nil {
			continue
		}
		pos := fv.Pos()
		if d, ok := fv.Default(); ok && d.Pos().IsValid() {
			pos = d.Pos()
		}
		*out = append(*out, defaultValue{Path: cp, JSON: b, Pos: diag.Pos{File: pos.Filename(), Line: pos.Line(), Col: pos.Column()}})
	}
}

// TestDefaultsReachEachCluster holds CheckClusters to the defaults #Cluster
// gives: every default of every cluster is in its effective config with its
// own value and its own position in the schema, though clusters share the
// values they are given alike (false is the default of delete,
// delete_pipeline and eks.endpoint_public_access, at three places).
func TestDefaultsReachEachCluster(t *testing.T) {
	w := compiledForTest(t)
	c, err := New(Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	fsys := fleetgen.Generate(fleetgen.Options{Sectors: 2, RegionsPerSector: 3, ClustersPerRegion: 3}).FS()
	build := func() *config.Fleet { return buildFleet(t, fsys) }
	as, checked := build(), build()
	if diags := c.CheckClusters(checked); diags.HasErrors() {
		t.Fatal(diags)
	}
	positions := map[string]map[string]bool{} // a default's JSON → its positions
	leaves := map[leafKey]*config.Value{}     // a short default → the value clusters share
	for i, cl := range as.Clusters {
		in := w.clusterInput(cl.Effective)
		u := w.rules.Unify(w.ctx.BuildExpr(toCUE(in, false)))
		var ds []defaultValue
		w.defaults(u, in, nil, &ds)
		for _, d := range ds {
			v := checked.Clusters[i].Effective
			for _, k := range d.Path {
				v = v.Get(k)
			}
			if v == nil {
				t.Errorf("cluster %s: default %s missing", cl.ID(), strings.Join(d.Path, "."))
				continue
			}
			got, _ := json.Marshal(v.Interface())
			want := config.Origin{Layer: config.LayerSchema, Pos: d.Pos}
			if string(got) != string(d.JSON) || v.Origin != want {
				t.Errorf("cluster %s: %s = %s at %v, want %s at %v", cl.ID(), strings.Join(d.Path, "."), got, v.Origin, d.JSON, want)
			}
			if len(d.JSON) <= sharedLeafJSON {
				k := leafKey{json: string(d.JSON), pos: d.Pos}
				if prev := leaves[k]; prev != nil && prev != v {
					t.Errorf("cluster %s: %s = %s is a copy of the value other clusters share", cl.ID(), strings.Join(d.Path, "."), d.JSON)
				}
				leaves[k] = v
			}
			if positions[string(d.JSON)] == nil {
				positions[string(d.JSON)] = map[string]bool{}
			}
			positions[string(d.JSON)][d.Pos.String()] = true
		}
	}
	if len(positions["false"]) < 2 {
		t.Errorf("the fleet gives false by default at %v: it exercises too little", positions["false"])
	}
}

// testFleets are the repository's example fleet and a generated fleet of
// both cluster types, merged (not checked), by name.
func testFleets(t *testing.T) map[string]*config.Fleet {
	t.Helper()
	out := map[string]*config.Fleet{}
	for name, fsys := range map[string]fs.FS{
		"example":   os.DirFS("../.."),
		"generated": fleetgen.Generate(fleetgen.Options{Sectors: 2, RegionsPerSector: 3, ClustersPerRegion: 3}).FS(),
	} {
		docs, diags := config.Parse(fsys, "config")
		if diags.HasErrors() {
			t.Fatalf("%s: %v", name, diags)
		}
		f, diags := config.Build(docs)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", name, diags)
		}
		out[name] = f
	}
	return out
}

// TestForgetDropsKeptResults holds Forget to its word: the results a check
// kept are gone, and a check after it finds what the first did.
func TestForgetDropsKeptResults(t *testing.T) {
	c, err := New(Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	fsys := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 2, ClustersPerRegion: 2}).FS()
	build := func() *config.Fleet { return buildFleet(t, fsys) }
	kept := c.Kept
	first := build()
	if diags := c.CheckClusters(first); diags.HasErrors() {
		t.Fatal(diags)
	}
	if kept() == 0 {
		t.Fatal("CheckClusters kept no result")
	}
	c.Forget()
	if n := kept(); n != 0 {
		t.Fatalf("%d results kept after Forget", n)
	}
	again := build()
	if diags := c.CheckClusters(again); diags.HasErrors() {
		t.Fatal(diags)
	}
	for i, cl := range first.Clusters {
		if a, b := config.Hash(cl.Effective), config.Hash(again.Clusters[i].Effective); a != b {
			t.Errorf("cluster %s: checked again after Forget, its effective config differs", cl.ID())
		}
	}
}

// buildFleet parses and builds the fleet in fsys's config/, failing t on
// any error.
func buildFleet(t *testing.T, fsys fs.FS) *config.Fleet {
	t.Helper()
	docs, diags := config.Parse(fsys, "config")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f, diags := config.Build(docs)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return f
}
