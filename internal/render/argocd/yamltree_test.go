package argocd_test

import (
	"testing"

	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/render/encode/treetest"
)

// TestTreesMatchJSON: the documents that build their own YAML trees write
// exactly what their JSON encoding gives, on documents filled at random,
// every field reached (so a field added to a type and not to its tree
// fails here).
func TestTreesMatchJSON(t *testing.T) {
	treetest.MatchesJSON(t, &argocd.Application{}, &argocd.AppProject{})
}
