package tekton

import "testing"

// TestIsRunPath holds IsRunPath to the paths Path makes, and to nothing
// else a deploy/ tree holds.
func TestIsRunPath(t *testing.T) {
	for _, p := range []string{
		Path("production", "us-east-1", "mc01"),
		Path("staging", "eu-west-1", "regional"),
	} {
		if !IsRunPath(p) {
			t.Errorf("IsRunPath(%q) = false for a PipelineRun's path", p)
		}
	}
	for _, p := range []string{
		"production/us-east-1/terraform/mc01.tfvars.json",
		"production/us-east-1/effective/mc01.yaml",
		"production/us-east-1/tekton/mc01.pipelinerun.yaml.orig",
		"production/us-east-1/tekton/.pipelinerun.yaml",
		"production/tekton/mc01.pipelinerun.yaml",
		"production/us-east-1/x/tekton/mc01.pipelinerun.yaml",
		"production/us-east-1/iam/mc01.pipelinerun.yaml",
		"index.json",
	} {
		if IsRunPath(p) {
			t.Errorf("IsRunPath(%q) = true", p)
		}
	}
}
