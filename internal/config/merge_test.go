package config

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decode(t *testing.T, layer Layer, file, src string) *Value {
	t.Helper()
	v, diags := Decode(file, layer, []byte(src))
	if len(diags) > 0 {
		t.Fatalf("%s: %v", file, diags)
	}
	return v
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name         string
		lower, upper string
		want         string // JSON-ish rendering via Interface
		wantOrigin   map[string]string
	}{
		{
			name:  "maps merge key by key",
			lower: "eks:\n  version: '1.30'\n  node_min: 3\n",
			upper: "eks:\n  version: '1.31'\n",
			want:  "map[eks:map[node_min:3 version:1.31]]",
			wantOrigin: map[string]string{
				"eks.version":  "upper.yaml:2:12",
				"eks.node_min": "lower.yaml:3:13",
			},
		},
		{
			name:  "lists replace",
			lower: "subnets: [a, b, c]\n",
			upper: "subnets: [d]\n",
			want:  "map[subnets:[d]]",
		},
		{
			name:  "null removes the inherited key",
			lower: "tags:\n  a: x\n  b: y\n",
			upper: "tags:\n  a: null\n",
			want:  "map[tags:map[b:y]]",
		},
		{
			name:  "null with nothing inherited is dropped",
			lower: "x: 1\n",
			upper: "y: null\n",
			want:  "map[x:1]",
		},
		{
			name:  "a null deep under a key nothing inherits is dropped",
			lower: "x: 1\n",
			upper: "eks:\n  network:\n    a: null\n    b: 2\n  c: 3\nd:\n  e: null\n",
			want:  "map[d:map[] eks:map[c:3 network:map[b:2]] x:1]",
		},
		{
			name:  "scalar replaces map",
			lower: "values:\n  a: 1\n",
			upper: "values: off\n",
			want:  "map[values:off]",
		},
		{
			name:  "map replaces scalar",
			lower: "values: off\n",
			upper: "values:\n  a: 1\n",
			want:  "map[values:map[a:1]]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lower := decode(t, LayerGlobal, "lower.yaml", tt.lower)
			upper := decode(t, LayerSector, "upper.yaml", tt.upper)
			got := Merge(lower, upper)
			if s := fmtValue(got); s != tt.want {
				t.Errorf("merged = %s, want %s", s, tt.want)
			}
			for path, want := range tt.wantOrigin {
				var v *Value
				got.Walk("", func(p string, leaf *Value) {
					if p == path {
						v = leaf
					}
				})
				if v == nil || v.Origin.Pos.String() != want {
					t.Errorf("origin of %s = %v, want %s", path, v, want)
				}
			}
			// A map merged from two is made to its size (mergedLen):
			// merged configs outlive the merge.
			checkMadeToSize(t, "", got, lower, upper)
			// Merge never modifies its inputs.
			if d := cmp.Diff(fmtValue(decode(t, LayerGlobal, "lower.yaml", tt.lower)), fmtValue(lower)); d != "" {
				t.Errorf("lower modified: %s", d)
			}
		})
	}
}

// checkMadeToSize fails t where a map Merge made of lower's and upper's
// maps at path has room for more fields than it holds.
func checkMadeToSize(t *testing.T, path string, got, lower, upper *Value) {
	t.Helper()
	if got == nil || lower == nil || upper == nil || got.Kind != Map || lower.Kind != Map || upper.Kind != Map {
		return
	}
	if len(got.Fields) != cap(got.Fields) {
		t.Errorf("the map merged at %q holds %d fields in room for %d", path, len(got.Fields), cap(got.Fields))
	}
	for _, f := range got.Fields {
		checkMadeToSize(t, path+"."+f.Key, f.Value, lower.Get(f.Key), upper.Get(f.Key))
	}
}

// TestMergeSharesWhatHasNoNull: a map the upper layer adds whole, with no
// null beneath it, is taken as it is (values are never modified); one
// holding a null is a new map without it, the original untouched.
func TestMergeSharesWhatHasNoNull(t *testing.T) {
	lower := decode(t, LayerGlobal, "lower.yaml", "x: 1\n")
	upper := decode(t, LayerSector, "upper.yaml", "clean:\n  a:\n    b: 1\nnulled:\n  a:\n    b: null\n  c:\n    d: 1\n")
	got := Merge(lower, upper)
	if got.Get("clean") != upper.Get("clean") {
		t.Error("a map with no null was copied")
	}
	if got.Get("nulled") == upper.Get("nulled") || got.Lookup("nulled", "a", "b") != nil {
		t.Errorf("the null under nulled.a was kept: %s", fmtValue(got))
	}
	if got.Lookup("nulled", "c") != upper.Lookup("nulled", "c") {
		t.Error("nulled.c, with no null beneath it, was copied")
	}
	if upper.Lookup("nulled", "a", "b") == nil {
		t.Error("the upper layer's value was modified")
	}
}

func TestMergeRecordsOverridesNearestFirst(t *testing.T) {
	g := decode(t, LayerGlobal, "g.yaml", "eks:\n  node_max: 12\n")
	s := decode(t, LayerSector, "s.yaml", "eks:\n  node_max: 24\n")
	c := decode(t, LayerCluster, "c.yaml", "eks:\n  node_max: 30\n")
	v := Merge(Merge(g, s), c).Lookup("eks", "node_max")
	var got []string
	for _, o := range v.Overrode() {
		got = append(got, o.Scalar()+"@"+o.Origin.String())
	}
	want := []string{"24@s.yaml:2:13 (sector)", "12@g.yaml:2:13 (global)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("overrode (-want +got):\n%s", d)
	}
	if v.Origin.Layer != LayerCluster {
		t.Errorf("origin layer = %v", v.Origin.Layer)
	}
}

func TestMergeRemembersRemovals(t *testing.T) {
	g := decode(t, LayerGlobal, "g.yaml", "maestro:\n  consumer_name: x\n")
	r := decode(t, LayerRegion, "r.yaml", "sector: s\nmaestro: null\n")
	v := Merge(g, r)
	if v.Get("maestro") != nil {
		t.Fatal("maestro not removed")
	}
	if len(v.Removed()) != 1 || v.Removed()[0].KeyPos.String() != "r.yaml:2:1" {
		t.Errorf("removed = %+v", v.Removed())
	}
}

func TestInterpolate(t *testing.T) {
	vars := map[string]string{"region": "us-east-1", "cluster": "mc01"}
	tests := []struct{ in, want, err string }{
		{in: "b-${region}-${cluster}", want: "b-us-east-1-mc01"},
		{in: "literal $${region}", want: "literal ${region}"},
		{in: "no refs", want: "no refs"},
		{in: "${regoin}", err: "undefined variable ${regoin}"},
		{in: "x-${region", err: "unclosed ${ reference"},
	}
	for _, tt := range tests {
		v := decode(t, LayerGlobal, "g.yaml", "k: '"+tt.in+"'\n")
		out, diags := Interpolate(v, vars)
		if tt.err != "" {
			if len(diags) != 1 || diags[0].Summary != tt.err || diags[0].Pos.String() != "g.yaml:1:4" {
				t.Errorf("%q: diags = %v, want %q at g.yaml:1:4", tt.in, diags, tt.err)
			}
			continue
		}
		if len(diags) > 0 {
			t.Errorf("%q: %v", tt.in, diags)
		}
		if got := out.Get("k").Str; got != tt.want {
			t.Errorf("%q → %q, want %q", tt.in, got, tt.want)
		}
		if tt.in != tt.want && out.Get("k").Template != tt.in {
			t.Errorf("template = %q", out.Get("k").Template)
		}
		if tt.in == tt.want && out != v {
			t.Errorf("unchanged value was copied")
		}
	}
}

func TestHashIgnoresOrigins(t *testing.T) {
	a := decode(t, LayerGlobal, "a.yaml", "x: 1\ny: [a, b]\n")
	b := decode(t, LayerSector, "b.yaml", "\n\ny:   [a,   b]\nx: 1\n")
	c := decode(t, LayerSector, "c.yaml", "x: 2\ny: [a, b]\n")
	if Hash(a) != Hash(b) {
		t.Error("same content, different hash")
	}
	if Hash(a) == Hash(c) {
		t.Error("different content, same hash")
	}
}

func fmtValue(v *Value) string { return fmt.Sprint(v.Interface()) }
