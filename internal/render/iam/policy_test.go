package iam

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/regionctl/regionctl/internal/iampolicy"
)

// TestBuiltDocumentsReadBack: a document built in memory passes Validate
// exactly when its JSON passes Parse, and reads back as it was built.
func TestBuiltDocumentsReadBack(t *testing.T) {
	built := DeployRolePolicy(Region{Name: "eu-west-1", Environment: "production", OIDCBuckets: "oidc-*"})
	if err := iampolicy.Validate(built); err != nil {
		t.Fatalf("a deploy role policy fails Validate: %v", err)
	}
	b, err := json.Marshal(built)
	if err != nil {
		t.Fatal(err)
	}
	read, err := iampolicy.Parse(b)
	if err != nil {
		t.Fatalf("a deploy role policy fails Parse: %v", err)
	}
	if !reflect.DeepEqual(read, built) {
		t.Errorf("a deploy role policy reads back otherwise than it was built:\nbuilt %+v\nread  %+v", built, read)
	}
	bad := DeployRolePolicy(Region{Name: "eu-west-1", Environment: "production", OIDCBuckets: "oidc-${aws:username, 'x'}"})
	if _, perr := iampolicy.Parse(mustJSON(t, bad)); (iampolicy.Validate(bad) == nil) != (perr == nil) {
		t.Errorf("a bucket name with a policy variable: Validate says %v, Parse says %v", iampolicy.Validate(bad), perr)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
