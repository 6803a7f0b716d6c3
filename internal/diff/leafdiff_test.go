package diff

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/regionctl/regionctl/internal/config"
)

// TestChangedLeavesAreByPath holds the side-by-side walk to the leaf-by-leaf
// comparison it replaces: the same changes (path, and the very old and new
// leaves) for every cluster of a fleet against the same cluster of that
// fleet with EKS 1.34 in a sector, against another cluster, and against
// itself altered at random paths by random values (kinds alike in text, as
// 1 and 1.0 are, maps for leaves and leaves for maps, removals); and no
// answer, for the comparison to give, when a key holds a dot.
func TestChangedLeavesAreByPath(t *testing.T) {
	base, head, _ := prod2Takes134(t)
	var pairs [][2]*config.Value
	for i, hc := range head.Clusters {
		bc := base.Clusters[i]
		other := base.Clusters[(i+1)%len(base.Clusters)]
		pairs = append(pairs, [2]*config.Value{bc.Effective, hc.Effective}, [2]*config.Value{other.Effective, hc.Effective})
	}
	rnd := rand.New(rand.NewSource(1))
	pool := []*config.Value{
		nil,
		{Kind: config.Null},
		{Kind: config.Int, Int: 1},
		config.NewFloat(1, config.Origin{}),
		{Kind: config.String, Str: "1"},
		{Kind: config.Bool, Bool: true},
		{Kind: config.List, Items: []*config.Value{{Kind: config.Int, Int: 1}}},
		{Kind: config.Map},
		config.NewMap(config.Origin{}, []config.Field{{Key: "x", Value: &config.Value{Kind: config.Int, Int: 1}}, {Key: "y", Value: &config.Value{Kind: config.Map}}}),
	}
	for _, c := range head.Clusters {
		paths := mapPaths(c.Effective)
		for k := 0; k < 20; k++ {
			v := c.Effective
			for n := rnd.Intn(3) + 1; n > 0; n-- {
				v = v.WithPath(paths[rnd.Intn(len(paths))], pool[rnd.Intn(len(pool))])
			}
			pairs = append(pairs, [2]*config.Value{c.Effective, v}, [2]*config.Value{v, c.Effective})
		}
	}
	changes := 0
	for i, pr := range pairs {
		got, ok := changedLeaves(pr[0], pr[1])
		if !ok {
			t.Fatalf("pair %d: no answer, and no key holds a dot", i)
		}
		want := changedLeavesByPath(pr[0], pr[1])
		if g, w := spell(got), spell(want); g != w {
			t.Errorf("pair %d:\n got %s\nwant %s", i, g, w)
		}
		changes += len(want)
	}
	if changes < len(pairs) {
		t.Errorf("%d changes in %d pairs: the alterations change too little", changes, len(pairs))
	}
	dotted := head.Clusters[0].Effective.WithPath([]string{"components", "a.b"}, pool[2])
	if _, ok := changedLeaves(head.Clusters[0].Effective, dotted); ok {
		t.Error("a key holding a dot was walked side by side")
	}
}

// spell lists changes sorted by path, each leaf by its address and text.
func spell(cs []leafChange) string {
	sort.Slice(cs, func(i, j int) bool { return cs[i].path < cs[j].path })
	s := ""
	for _, c := range cs {
		s += fmt.Sprintf("%s: %p %s -> %p %s; ", c.path, c.ov, c.ov.Scalar(), c.nv, c.nv.Scalar())
	}
	return s
}

// mapPaths lists the paths of every value under v, maps included.
func mapPaths(v *config.Value) [][]string {
	var out [][]string
	var walk func(v *config.Value, p []string)
	walk = func(v *config.Value, p []string) {
		if v.Kind != config.Map {
			return
		}
		for _, f := range v.Fields {
			q := append(p[:len(p):len(p)], f.Key)
			out = append(out, q)
			walk(f.Value, q)
		}
	}
	walk(v, nil)
	return out
}
