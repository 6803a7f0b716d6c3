package schema

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"cuelang.org/go/cue"
)

func compiledForTest(t *testing.T) *compiled {
	t.Helper()
	src, err := loadSource()
	if err != nil {
		t.Fatal(err)
	}
	w, err := src.compile()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestLayerDecidedKeysAddNothing holds #LayerDecided to its word: for each
// listed key, #Cluster's constraint is exactly #Settings' one, so skipping
// the key in the #Cluster step loses no check and no default.
func TestLayerDecidedKeysAddNothing(t *testing.T) {
	w := compiledForTest(t)
	settings := w.root.LookupPath(cue.ParsePath("#Settings"))
	if len(w.layerDecided) == 0 {
		t.Fatal("#LayerDecided is empty")
	}
	for key := range w.layerDecided {
		inCluster := w.cluster.LookupPath(cue.MakePath(cue.Str(key).Optional()))
		inSettings := settings.LookupPath(cue.MakePath(cue.Str(key).Optional()))
		if !inCluster.Exists() || !inSettings.Exists() {
			t.Fatalf("%s: not an optional field of both #Cluster and #Settings", key)
		}
		if err := inCluster.Subsume(inSettings); err != nil {
			t.Errorf("%s: #Cluster is stricter than #Settings: %v", key, err)
		}
		if err := inSettings.Subsume(inCluster); err != nil {
			t.Errorf("%s: #Settings is stricter than #Cluster: %v", key, err)
		}
	}
}

// TestLayerDecidedCatchesAStricterCluster shows the check above can fail.
func TestLayerDecidedCatchesAStricterCluster(t *testing.T) {
	w := compiledForTest(t)
	stricter := w.ctx.CompileString(`tags?: [string]: "x"`).LookupPath(cue.MakePath(cue.Str("tags").Optional()))
	settings := w.root.LookupPath(cue.ParsePath("#Settings")).LookupPath(cue.MakePath(cue.Str("tags").Optional()))
	if stricter.Subsume(settings) == nil {
		t.Fatal("a stricter tags constraint was not told apart")
	}
}

func TestRolloutKeys(t *testing.T) {
	keys, err := RolloutKeys()
	if err != nil {
		t.Fatal(err)
	}
	want := "components.*.chart_revision,components.*.image,eks.version,hypershift.operator_image"
	if got := strings.Join(keys, ","); got != want {
		t.Errorf("rollout keys %s, want %s", got, want)
	}
}

// TestRolloutKeysHaveNoDefault: a review leaves unchecked the clusters whose
// inputs did not change (fleet.LoadPair), so their effective configs lack
// the schema's defaults; the skipped-wave check compares rollout values
// across all clusters, which holds only while the schema gives none of them
// a default.
func TestRolloutKeysHaveNoDefault(t *testing.T) {
	w := compiledForTest(t)
	keys, err := RolloutKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		v := w.cluster
		for _, part := range strings.Split(k, ".") {
			if part == "*" {
				v = v.FillPath(cue.MakePath(cue.Str("probe")), struct{}{})
				part = "probe"
			}
			v = v.LookupPath(cue.MakePath(cue.Str(part).Optional()))
		}
		if !v.Exists() {
			t.Errorf("rollout key %s: not found in #Cluster", k)
			continue
		}
		if d, ok := v.Default(); ok {
			t.Errorf("rollout key %s has a default (%v); fleet.LoadPair's unchecked clusters would lack it", k, d)
		}
	}
}

func TestRolloutOrders(t *testing.T) {
	orders, err := RolloutOrders()
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"eks.version": Semver, "components.*.chart_revision": Semver,
		"hypershift.operator_image": Unordered, "components.*.image": Unordered,
	} {
		if got, ok := orders[key]; !ok || got != want {
			t.Errorf("%s: order %q (%v), want %q", key, got, ok, want)
		}
	}
	for _, c := range []struct {
		order, a, b string
		older       bool
	}{
		{Semver, "1.31", "1.32", true},
		{Semver, "1.32", "1.31", false},
		{Semver, "1.9", "1.10", true},
		{Semver, "hypershift-operator/v0.1.58", "hypershift-operator/v0.2.0", true},
		{Semver, "9.1.0", "9.1.0", false},
		{Semver, "main", "v1.0.0", false},
		{Unordered, "1.31", "1.32", false},
	} {
		if got := Older(c.order, c.a, c.b); got != c.older {
			t.Errorf("Older(%q, %q, %q) = %v", c.order, c.a, c.b, got)
		}
	}
}

// TestTagValueIsOnePattern holds #TagValue, written as two patterns (a
// class repeated without bound and a length), to the one pattern it stands
// for, ^[\p{L}\p{N} _.:/=+@-]{0,256}$, as Go's regexp (which is CUE's =~)
// reads it: CUE's verdict and the checker's own (stringPasses) on every
// value, at and around 256 characters of one to four bytes, with
// characters of every kind the class takes and refuses, and invalid UTF-8.
func TestTagValueIsOnePattern(t *testing.T) {
	w := compiledForTest(t)
	one := regexp.MustCompile(`^[\p{L}\p{N} _.:/=+@-]{0,256}$`)
	tagValue := w.root.LookupPath(cue.ParsePath("#TagValue"))
	path := []string{"tags", "any"}
	runes := []string{"a", "Z", "0", " ", "_", ".", ":", "/", "=", "+", "@", "-", "ä", "日", "٣", "𝔸", "\U00010400",
		"\n", "\t", "\u2028", "\u00a0", "\u0301", "😀", "\ufffd", "\xff", "#", "*", ",", "\x00", "~"}
	values := []string{"", "a\n", "\na", "a b", "x" + "\xc3"}
	for _, r := range runes {
		for _, n := range []int{1, 2, 255, 256, 257} {
			values = append(values, strings.Repeat(r, n), strings.Repeat("a", n-1)+r, r+strings.Repeat("ä", n-1))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		n := 250 + rng.IntN(10)
		if rng.IntN(4) == 0 {
			n = rng.IntN(8)
		}
		for range n {
			if rng.IntN(40) == 0 {
				b.WriteString(runes[rng.IntN(len(runes))])
			} else {
				b.WriteString(runes[rng.IntN(16)])
			}
		}
		values = append(values, b.String())
	}
	passed := 0
	for _, v := range values {
		want := one.MatchString(v)
		if want {
			passed++
		}
		if got := tagValue.Unify(w.ctx.Encode(v)).Validate(cue.Concrete(true)) == nil; got != want {
			t.Errorf("%q (%d bytes): #TagValue says %v, the one pattern %v", v, len(v), got, want)
		}
		if got, known := w.stringPasses(path, v); !known || got != want {
			t.Errorf("%q (%d bytes): the checker says %v (known %v), the one pattern %v", v, len(v), got, known, want)
		}
	}
	if passed < len(values)/4 || passed > len(values)*3/4 {
		t.Errorf("%d of %d values pass: the corpus does not test both verdicts", passed, len(values))
	}
}
