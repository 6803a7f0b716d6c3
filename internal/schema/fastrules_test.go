package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue"

	"github.com/regionctl/regionctl/internal/config"
)

// TestFastRulesAreOn: fastRules is on for the embedded schema. It turns
// itself off when schema/cluster.cue is not the file it was written from,
// or when CUE gives the sample configs other defaults than it does; either
// way every cluster then goes to CUE (right, and slower).
func TestFastRulesAreOn(t *testing.T) {
	src, err := loadSource()
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(src.files["cluster.cue"]); hex.EncodeToString(sum[:]) != clusterCueDigest {
		t.Fatalf("schema/cluster.cue changed (SHA-256 %x, fastRules was written from %s): every cluster now goes to CUE; "+
			"bring fastRules.check (internal/schema/fastrules.go) to the new #ClusterRules, set clusterCueDigest, and run TestFastRulesAreClusterRules",
			sum, clusterCueDigest)
	}
	w, err := compileEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	if w.fast == nil {
		t.Fatal("fastRules is off: CUE gives the sample configs (fastSamples) other defaults than fastRules.check does")
	}
}

// TestFastRulesAreClusterRules holds fastRules to CUE: wherever it answers
// "valid", unifying with #ClusterRules must find no error and give the same
// defaults at the same paths, in the same order, with the same positions.
// The configs are every cluster of the example and a generated fleet, each
// altered at every path #Cluster declares or a cluster holds by every value
// of a pool (absent, each kind, the edges of the rules), and random pairs of
// such alterations.
func TestFastRulesAreClusterRules(t *testing.T) {
	w, err := compileEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	if w.fast == nil {
		t.Skip("fastRules is off (TestFastRulesAreOn says why)")
	}
	var clusters []*config.Value
	for _, f := range testFleets(t) {
		for _, cl := range f.Clusters {
			clusters = append(clusters, w.clusterInput(cl.Effective))
		}
	}
	cueSays := func(in *config.Value) (bool, string) {
		u := w.rules.Unify(w.build(in))
		if u.Validate(cue.Concrete(true)) != nil {
			return false, ""
		}
		var ds []defaultValue
		w.defaults(u, in, nil, &ds)
		b, _ := json.Marshal(ds)
		return true, string(b)
	}
	var fastValid, cueValid, checked int
	judge := func(name string, in *config.Value) {
		checked++
		ds, ok := w.fast.check(in)
		valid, want := cueSays(in)
		if valid {
			cueValid++
		}
		if !ok {
			return
		}
		fastValid++
		if !valid {
			t.Errorf("%s: fastRules says valid, CUE finds an error", name)
			return
		}
		if got, _ := json.Marshal(ds); string(got) != want {
			t.Errorf("%s: defaults\n got %s\nwant %s", name, got, want)
		}
	}
	for _, in := range clusters {
		judge(in.Get("region").Str+"/"+in.Get("cluster").Str, in)
	}
	if fastValid != len(clusters) {
		t.Fatalf("fastRules decided %d of the fleets' %d clusters (CUE found %d valid): it should decide every valid one of them", fastValid, len(clusters), cueValid)
	}

	altered(t, w, clusters, judge)
	t.Logf("%d configs: CUE found %d valid, fastRules decided %d of them", checked, cueValid, fastValid)
	if fastValid < cueValid/2 || cueValid == checked {
		t.Errorf("%d configs: CUE found %d valid, fastRules decided %d: the alterations break too little, or fastRules decides too few", checked, cueValid, fastValid)
	}
}

// altered calls judge with each cluster's config altered: a regional and
// a management one (and each with CUE's defaults written in, so that a
// required key goes missing beside the keys whose defaults would be made of
// it) at every alterable path by every value of the pool, and random
// clusters at two random paths.
func altered(t *testing.T, w *compiled, clusters []*config.Value, judge func(name string, in *config.Value)) {
	paths := alterablePaths(w, clusters)
	pool := alterations()
	var regional, management *config.Value
	for _, in := range clusters {
		if in.Get("type").Str == "regional" {
			regional = in
		} else {
			management = in
		}
	}
	bases := []*config.Value{regional, management, withCUEDefaults(t, w, regional), withCUEDefaults(t, w, management)}
	for i, base := range bases {
		for _, p := range paths {
			for _, a := range pool {
				judge(fmt.Sprintf("%s (base %d): %s = %s", base.Get("type").Str, i, strings.Join(p, "."), a.name), base.WithPath(p, a.v))
			}
		}
	}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 1500; i++ {
		in := clusters[rnd.Intn(len(clusters))]
		name := in.Get("cluster").Str
		for j := 0; j < 2; j++ {
			p, a := paths[rnd.Intn(len(paths))], pool[rnd.Intn(len(pool))]
			in = in.WithPath(p, a.v)
			name += ", " + strings.Join(p, ".") + " = " + a.name
		}
		judge(name, in)
	}
}

// withCUEDefaults is in with the defaults #ClusterRules gives it written in.
func withCUEDefaults(t *testing.T, w *compiled, in *config.Value) *config.Value {
	t.Helper()
	var ds []defaultValue
	w.defaults(w.rules.Unify(w.build(in)), in, nil, &ds)
	for _, d := range ds {
		var x any
		if err := json.Unmarshal(d.JSON, &x); err != nil {
			t.Fatal(err)
		}
		in = in.WithPath(d.Path, config.FromInterface(x, config.Origin{}))
	}
	return in
}

// alterablePaths are the paths #Cluster declares, three deep, and those the
// clusters hold, sorted.
func alterablePaths(w *compiled, clusters []*config.Value) [][]string {
	seen := map[string][]string{}
	var declared func(p []string)
	declared = func(p []string) {
		if len(p) == 3 {
			return
		}
		_, paths := w.declared(p)
		for _, q := range paths {
			seen[strings.Join(q, ".")] = q
			declared(q)
		}
	}
	declared(nil)
	var held func(v *config.Value, p []string)
	held = func(v *config.Value, p []string) {
		if v.Kind != config.Map {
			return
		}
		for _, f := range v.Fields {
			q := append(p[:len(p):len(p)], f.Key)
			seen[strings.Join(q, ".")] = q
			held(f.Value, q)
		}
	}
	for _, in := range clusters {
		held(in, nil)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]string, len(keys))
	for i, k := range keys {
		out[i] = seen[k]
	}
	return out
}

// alterations are the values a path is set to: absent, each kind, and the
// edges of #ClusterRules' rules (names, the numbers about node_min and
// node_max's defaults, lists of one and two).
func alterations() []struct {
	name string
	v    *config.Value
} {
	str := func(s string) *config.Value { return &config.Value{Kind: config.String, Str: s} }
	num := func(n int64) *config.Value { return &config.Value{Kind: config.Int, Int: n} }
	list := func(n int) *config.Value {
		l := &config.Value{Kind: config.List}
		for i := 0; i < n; i++ {
			l.Items = append(l.Items, str("10.0.0.0/24"))
		}
		return l
	}
	out := []struct {
		name string
		v    *config.Value
	}{
		{"absent", nil},
		{"null", &config.Value{Kind: config.Null}},
		{"true", &config.Value{Kind: config.Bool, Bool: true}},
		{"false", &config.Value{Kind: config.Bool}},
		{"2.5", config.NewFloat(2.5, config.Origin{})},
		{"3.0", config.NewFloat(3, config.Origin{})},
		{"[]", list(0)},
		{"[a]", list(1)},
		{"[a, b]", list(2)},
		{"{}", &config.Value{Kind: config.Map}},
		{"{x: 1}", config.NewMap(config.Origin{}, []config.Field{{Key: "x", Value: num(1)}})},
	}
	for _, n := range []int64{-1, 0, 1, 2, 3, 5, 6, 7, 16, 200} {
		out = append(out, struct {
			name string
			v    *config.Value
		}{"int " + strconv.FormatInt(n, 10), num(n)})
	}
	for _, s := range []string{"", "x", "central-bootstrap", "regional", "management", "production", "staging", "prod",
		"us-east-1", "aa-bbb-1", "Upper", "a_b", "<b>&", `a\b`, "api.EXAMPLE.com", strings.Repeat("c", 33), "api.example.com", "1.33", "ssm:///x"} {
		out = append(out, struct {
			name string
			v    *config.Value
		}{"string " + strconv.Quote(s), str(s)})
	}
	return out
}
