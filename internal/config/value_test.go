package config

import (
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/regionctl/regionctl/internal/diag"
)

// TestFloatsKeepTheirValue: a float's number lives in Int's bits; it must
// come back as the number through every reader of values.
func TestFloatsKeepTheirValue(t *testing.T) {
	v, diags := Decode("f.yaml", LayerGlobal, []byte("ratio: 1.5\nhalf: -0.25\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for key, want := range map[string]float64{"ratio": 1.5, "half": -0.25} {
		f := v.Get(key)
		if f == nil || f.Kind != Float {
			t.Fatalf("%s = %+v, want a float", key, f)
		}
		if f.Float() != want || f.Interface() != want {
			t.Errorf("%s = %v (Interface %v), want %v", key, f.Float(), f.Interface(), want)
		}
	}
	if s := v.Get("ratio").Scalar(); s != "1.5" {
		t.Errorf("Scalar = %q", s)
	}
	if Hash(v.Get("ratio")) == Hash(NewFloat(2.5, Origin{Pos: diag.Pos{File: "f.yaml"}})) {
		t.Error("1.5 and 2.5 hash alike")
	}
	if (&Value{Kind: Int, Int: 3}).Float() != 0 {
		t.Error("Float of an int is not 0")
	}
}

// TestInterpolationShares: clusters whose references become the same
// strings share the interpolated subtrees, and each cluster's config is
// exactly what interpolating it alone makes, diagnostics included.
func TestInterpolationShares(t *testing.T) {
	v := decode(t, LayerGlobal, "g.yaml", `account:
  email: aws+${cluster}@example.com
  ou: /platform/${region}
etcd_backup:
  account: {ou: "/platform/${region}/dr", email: "dr-${region}@example.com"}
split: {a: "${a}", b: "${b}"}
list: ["${region}", fixed]
plain: {a: 1, b: [x, y]}
escaped: {a: [x, "$${region}"]}
own: {name: "${region}-${cluster}", ou: "/${region}"}
bad: ${nope}
`)
	vars := []map[string]string{
		{"region": "us-east-1", "cluster": "mc01", "a": "ab", "b": "c"},
		{"region": "us-east-1", "cluster": "mc02", "a": "a", "b": "bc"},
		{"region": "eu-west-1", "cluster": "mc01", "a": "ab", "b": "c"},
		// Joined with their places alone, these two would read alike.
		{"region": "eu-west-1", "cluster": "mc01", "a": "x\x01", "b": "y"},
		{"region": "eu-west-1", "cluster": "mc01", "a": "x", "b": "\x01y"},
	}
	for _, shared := range []*interpolated{newInterpolated(), newInterpolated(v)} {
		checkShares(t, v, vars, shared)
	}
	// Learnt from v: "plain" and its list have no ${; "escaped" has one
	// as written (interpolation makes it a literal ${), and v has both.
	p := newInterpolated(v).plain
	if !p[v.Get("plain")] || !p[v.Get("plain").Get("b")] || p[v.Get("escaped")] || p[v.Get("list")] || p[v] {
		t.Errorf("plain subtrees learnt: %v", p)
	}
}

// checkShares interpolates v with each of vars through shared, and checks
// the results as TestInterpolationShares says; and that a value naming
// both ${region} and ${cluster}, a cluster's own, is not kept in shared,
// nor the map that holds it, while its sibling naming the region alone is.
func checkShares(t *testing.T, v *Value, vars []map[string]string, shared *interpolated) {
	t.Helper()
	defer func() {
		t.Helper()
		kept := map[*Value]bool{}
		for i := range shared.shards {
			for k := range shared.shards[i].m {
				kept[k.from] = true
			}
		}
		own := v.Get("own")
		if kept[own] || kept[own.Get("name")] || !kept[own.Get("ou")] {
			t.Errorf("kept in shared: the own map %v, its own name %v, its ou %v (want false, false, true)", kept[own], kept[own.Get("name")], kept[own.Get("ou")])
		}
	}()
	var outs []*Value
	for _, vs := range vars {
		alone, aloneDiags := Interpolate(v, vs)
		out, diags := interpolateShared(v, vs, shared)
		if !reflect.DeepEqual(out, alone) {
			t.Errorf("%v: shared interpolation differs from interpolating alone", vs)
		}
		if !reflect.DeepEqual(diags, aloneDiags) || len(diags) != 1 {
			t.Errorf("%v: diagnostics %v, alone %v", vs, diags, aloneDiags)
		}
		outs = append(outs, out)
	}
	same := func(a, b *Value, path ...string) bool {
		for _, k := range path {
			a, b = a.Get(k), b.Get(k)
		}
		return a == b
	}
	if !same(outs[0], outs[1], "etcd_backup") || !same(outs[0], outs[1], "list") || !same(outs[0], outs[1], "account", "ou") {
		t.Error("two clusters of one region do not share their region's interpolated values")
	}
	if same(outs[0], outs[1], "account") || same(outs[0], outs[1], "split") || same(outs[0], outs[2], "etcd_backup") {
		t.Error("values that interpolate to different strings are shared")
	}
	if !same(outs[0], outs[2], "split") {
		t.Error("subtrees interpolated to the same strings in two regions are not shared")
	}
}

// TestValueSize: a large fleet holds millions of Values; a field added to
// every one of them costs tens of megabytes at 19,215 clusters. Rare parts
// go behind Value.merged.
func TestValueSize(t *testing.T) {
	if n := unsafe.Sizeof(Value{}); n > 144 {
		t.Errorf("a Value is %d bytes, more than 144", n)
	}
}

func TestWithPath(t *testing.T) {
	one := &Value{Kind: Int, Int: 1}
	shared := NewMap(Origin{}, []Field{{Key: "k", Value: one}})
	v := NewMap(Origin{}, []Field{{Key: "a", Value: NewMap(Origin{}, []Field{{Key: "b", Value: one}})}, {Key: "s", Value: shared}, {Key: "leaf", Value: one}})
	set := v.WithPath([]string{"a", "c"}, one)
	if set.Lookup("a", "c") != one || set.Lookup("a", "b") != one || set.Get("s") != shared {
		t.Errorf("setting a.c: %+v", set)
	}
	if v.Lookup("a", "c") != nil {
		t.Error("WithPath changed the value it was given")
	}
	if gone := v.WithPath([]string{"a", "b"}, nil); gone.Lookup("a", "b") != nil || gone.Get("s") != shared {
		t.Errorf("removing a.b: %+v", gone)
	}
	if same := v.WithPath([]string{"x", "y"}, nil); same.Get("x") != nil {
		t.Errorf("removing an absent path made %+v", same.Get("x"))
	}
	if under := v.WithPath([]string{"leaf", "z"}, one); under.Lookup("leaf", "z") != one {
		t.Errorf("setting under a leaf: %+v", under.Get("leaf"))
	}
}

// TestWithFieldsIsWithInTurn holds WithFields to With called once a field,
// on every subset of a few keys before, among and after a map's own (some
// replacing its keys), and checks that IdentityKeys, which effective sets
// through it, are sorted as it requires.
func TestWithFieldsIsWithInTurn(t *testing.T) {
	if !slices.IsSorted(IdentityKeys) {
		t.Fatalf("IdentityKeys are not sorted: %q", IdentityKeys)
	}
	at := func(line int) Origin { return Origin{Pos: diag.Pos{File: "f.yaml", Line: line}} }
	base := NewMap(at(1), []Field{
		{Key: "b", KeyPos: at(2).Pos, Value: NewString("old b", at(2))},
		{Key: "d", KeyPos: at(3).Pos, Value: NewString("old d", at(3))},
		{Key: "f", KeyPos: at(4).Pos, Value: NewString("old f", at(4))},
	})
	keys := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, m := range []*Value{base, NewMap(at(1), nil)} {
		for set := 0; set < 1<<len(keys); set++ {
			var fields []Field
			want := m
			for i, k := range keys {
				if set&(1<<i) != 0 {
					f := Field{Key: k, KeyPos: at(10 + i).Pos, Value: NewString("new "+k, at(10+i))}
					fields = append(fields, f)
					want = want.With(f.Key, f.KeyPos, f.Value)
				}
			}
			got := m.WithFields(fields)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("setting %v on %d fields:\nWithFields %+v\nWith       %+v", fields, len(m.Fields), got.Fields, want.Fields)
			}
			if len(m.Fields) > 0 && m.Fields[0].Value.Str != "old b" {
				t.Fatal("WithFields changed the map it was given")
			}
		}
	}
}
