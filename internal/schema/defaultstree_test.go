package schema

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// TestDefaultsTreeIsTheMerges: the defaults' tree built at once is what
// merging each default over the ones before it gives, value, origin and
// key position alike, over 20,000 random sets of defaults: paths sharing
// prefixes, a path twice, a path inside another default's value, null in
// a value, values that do not parse, and values of every kind.
func TestDefaultsTreeIsTheMerges(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	keys := []string{"a", "b", "eks", "node_min", "z"}
	values := []string{`3`, `"x"`, `true`, `{"k":1}`, `{}`, `[1,"a"]`, `null`, `{"k":null}`, `not json`, `"a longer value, derived from the cluster's name"`}
	c := &Checker{}
	built := 0
	for i := 0; i < 20000; i++ {
		var ds []defaultValue
		for j := range rnd.IntN(8) {
			p := make([]string, 1+rnd.IntN(3))
			for k := range p {
				p[k] = keys[rnd.IntN(len(keys))]
			}
			ds = append(ds, defaultValue{Path: p, JSON: []byte(values[rnd.IntN(len(values))]), Pos: diag.Pos{File: "schema/settings.cue", Line: j + 1}})
		}
		var leaves []placedDefault
		for i, d := range ds {
			if v := c.defaultLeaf(d); v != nil {
				leaves = append(leaves, placedDefault{d, v, i})
			}
		}
		want := mergedDefaults(leaves)
		if _, ok := treeOf(leaves); ok {
			built++
		}
		if got := c.defaultsTree(ds); !reflect.DeepEqual(got, want) {
			t.Fatalf("defaults %v:\nbuilt  %s\nmerged %s", ds, show(got), show(want))
		}
	}
	if built < 5000 {
		t.Errorf("only %d of 20,000 sets were built at once", built)
	}
}

// show writes a tree with its origins and key positions.
func show(v *config.Value) string {
	if v == nil {
		return "nil"
	}
	s := v.Scalar() + "@" + v.Origin.Pos.String()
	if v.Kind == config.Map {
		s = "{@" + v.Origin.Pos.String()
		for _, f := range v.Fields {
			s += " " + f.Key + "@" + f.KeyPos.String() + ":" + show(f.Value)
		}
		s += "}"
	}
	return s
}
