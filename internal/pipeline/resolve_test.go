package pipeline

import (
	"strings"
	"testing"
)

// TestAnEmptyOutputIsKnown: an output Terraform gave is known even when
// it is empty (the regional root's platform_api_endpoint before the API's
// zone is delegated), and the step after it runs with it; an output
// Terraform never gave, or a value no step learned, is refused by name.
func TestAnEmptyOutputIsKnown(t *testing.T) {
	st := &clusterState{Account: "111122223333", Outputs: map[string]string{"platform_api_endpoint": "", "platform_api_id": "abc123"}}
	got, err := st.resolve("${output.platform_api_endpoint}|${output.platform_api_id}|${account_id}")
	if err != nil || got != "|abc123|111122223333" {
		t.Fatalf("resolve: %q, %v", got, err)
	}
	for _, v := range []string{"${output.oidc_issuer}", "${management_ou_id}"} {
		if _, err := st.resolve(v); err == nil || !strings.Contains(err.Error(), "is not known yet") {
			t.Errorf("%s: %v", v, err)
		}
	}
	st.set("management_ou_id", "")
	if _, err := st.resolve("${management_ou_id}"); err == nil {
		t.Error("an empty value a step set is taken as learned")
	}
}
