package schema

import (
	"errors"
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
