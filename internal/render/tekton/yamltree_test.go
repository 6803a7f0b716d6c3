package tekton_test

import (
	"testing"

	"github.com/regionctl/regionctl/internal/render/encode/treetest"
	"github.com/regionctl/regionctl/internal/render/tekton"
)

// TestTreesMatchJSON: a PipelineRun's own YAML tree writes exactly what
// its JSON encoding gives, on runs filled at random, every field reached.
func TestTreesMatchJSON(t *testing.T) {
	treetest.MatchesJSON(t, &tekton.PipelineRun{})
}
