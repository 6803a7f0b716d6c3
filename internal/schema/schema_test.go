package schema

import (
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
