package schema

import (
	"errors"
	"maps"
	"slices"
	"testing"
)

func TestRolloutOrderOf(t *testing.T) {
	if o, err := RolloutOrderOf("eks.version"); err != nil || o != Semver {
		t.Errorf("eks.version: %q, %v; want %q", o, err, Semver)
	}
	var nv *NotVersionedError
	_, err := RolloutOrderOf("eks.node_max")
	if !errors.As(err, &nv) || !slices.Contains(nv.Keys, "eks.version") || !slices.IsSorted(nv.Keys) {
		t.Errorf("eks.node_max: %v; want an error listing the versioned values", err)
	}
}

// TestRolloutOrdersAreEachCallersOwn: the orders are read once a process,
// and a caller that changes its map changes no other caller's.
func TestRolloutOrdersAreEachCallersOwn(t *testing.T) {
	a, err := RolloutOrders()
	if err != nil || a["eks.version"] != Semver {
		t.Fatalf("RolloutOrders: %v, %v; want eks.version ordered by semver", a, err)
	}
	fresh, err := readRolloutOrders()
	if err != nil || !maps.Equal(a, fresh) {
		t.Fatalf("RolloutOrders gave %v, the schema %v (%v)", a, fresh, err)
	}
	a["eks.version"] = Unordered
	delete(a, "components.*.image")
	b, err := RolloutOrders()
	if err != nil || !maps.Equal(b, fresh) {
		t.Errorf("after a caller changed its map RolloutOrders gave %v, want %v", b, fresh)
	}
}
