package diff

import (
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChangesInOneOrder: value changes of one path and new value that
// differ only in their old value or origin come out in one order whatever
// order they were found in (map iteration), so a report is the same on
// every run.
func TestChangesInOneOrder(t *testing.T) {
	one := []string{"a/mc01"}
	want := []ValueChange{
		{Path: "eks.node_max", Old: "6", New: "8", Origin: "config/sectors/prod-1.yaml:3:3", Clusters: []string{"a/mc01", "a/mc02"}},
		{Path: "components.x.enabled", Old: "false", New: "(unset)", Origin: "config/clusters/a/mc01.yaml:1:1", Clusters: one},
		{Path: "components.x.enabled", Old: "false", New: "(unset)", Origin: "config/clusters/a/mc02.yaml:1:1", Clusters: one},
		{Path: "components.x.enabled", Old: "true", New: "(unset)", Origin: "config/clusters/a/mc01.yaml:1:1", Clusters: one},
		{Path: "components.x.enabled", Old: "false", New: "true", Origin: "config/clusters/a/mc01.yaml:1:1", Clusters: one},
		{Path: "eks.node_max", Old: "6", New: "7", Origin: "config/clusters/a/mc01.yaml:2:3", Clusters: one},
	}
	r := rand.New(rand.NewSource(1))
	for range 50 {
		got := append([]ValueChange(nil), want...)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sortChanges(got)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("order differs (-want +got):\n%s", d)
		}
	}
}
