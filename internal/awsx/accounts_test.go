package awsx

import (
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// TestAccountOfAnotherIsNotAdopted: an account found by name is adopted
// only when its tags name the spec's region, environment and cluster, each
// of them: one tagged for another region (or environment, or cluster), or
// untagged, is refused, naming the tag.
func TestAccountOfAnotherIsNotAdopted(t *testing.T) {
	spec := pipeline.AccountSpec{Name: "staging-eu-west-1-mc01", Tags: map[string]string{
		"regionctl:region": "eu-west-1", "regionctl:environment": "staging", "regionctl:cluster": "mc01", "regionctl:request-id": "r1"}}
	own := map[string]string{"regionctl:region": "eu-west-1", "regionctl:environment": "staging", "regionctl:cluster": "mc01", "regionctl:request-id": "r0"}
	if err := adoptable(spec, "111111111111", own); err != nil {
		t.Fatalf("its own account (another run's request id): %v", err)
	}
	for key, value := range map[string]string{"regionctl:region": "us-east-1", "regionctl:environment": "production", "regionctl:cluster": "mc02"} {
		other := map[string]string{}
		for k, v := range own {
			other[k] = v
		}
		other[key] = value
		if err := adoptable(spec, "111111111111", other); err == nil || !strings.Contains(err.Error(), "its tag "+key+" is "+value) {
			t.Errorf("an account tagged %s=%s: %v", key, value, err)
		}
		delete(other, key)
		if err := adoptable(spec, "111111111111", other); err == nil || !strings.Contains(err.Error(), key+" is (no tag)") {
			t.Errorf("an account without %s: %v", key, err)
		}
	}
}
