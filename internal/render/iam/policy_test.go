package iam

import (
	"bytes"
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

// TestEveryRegionDocumentReadsBack: each document a region renders
// (approvers too) passes Validate, and its JSON, with its policy variables
// escaped as the render writes them, passes Parse and reads back as it was
// built, escapes aside. The render checks each document with Validate
// alone on the strength of this.
func TestEveryRegionDocumentReadsBack(t *testing.T) {
	r := Region{Name: "us-east-1", Environment: "production", TektonNamespace: "pipelines", ManagementStateBucket: "mc-state-us-east-1",
		CentralStateBucket: "central-us-east-1", EtcdBackupBucket: "etcd-us-east-1", HealthBucket: "health-us-east-1",
		Clusters:    []ManagementCluster{{Name: "mc01", OIDCBucket: "oidc-us-east-1-mc01"}, {Name: "mc02", OIDCBucket: "oidc-us-east-1-mc02"}},
		OIDCBuckets: "oidc-us-east-1-*", Approvers: []string{"arn:aws:iam::123456789012:role/approver"}}
	docs := reflect.ValueOf(RegionDocuments(r))
	for i := range docs.NumField() {
		name := docs.Type().Field(i).Name
		built, ok := docs.Field(i).Interface().(Document)
		if !ok {
			continue
		}
		if len(built.Statement) == 0 {
			t.Errorf("%s: no statement (the region above should render every document)", name)
			continue
		}
		if err := iampolicy.Validate(built); err != nil {
			t.Errorf("%s fails Validate: %v", name, err)
		}
		read, err := iampolicy.Parse(iampolicy.EscapeVariables(mustJSON(t, built)))
		if err != nil {
			t.Errorf("%s, escaped, fails Parse: %v", name, err)
			continue
		}
		unescaped, err := iampolicy.Parse(mustJSON(t, built))
		if err != nil || !reflect.DeepEqual(unescaped, built) {
			t.Errorf("%s reads back otherwise than it was built (%v):\nbuilt %+v\nread  %+v", name, err, built, unescaped)
		}
		if len(read.Statement) != len(built.Statement) {
			t.Errorf("%s, escaped, reads back with %d statements, want %d", name, len(read.Statement), len(built.Statement))
		}
	}
}

// TestSizeIsTheCompactedDocument: Size counts every document a region
// renders, and documents with white space, non-ASCII text and HTML
// characters in their values, as json.Compact of the filled document
// counts it in runes.
func TestSizeIsTheCompactedDocument(t *testing.T) {
	r := Region{Name: "us-east-1", Environment: "production", TektonNamespace: "pipelines", ManagementStateBucket: "mc-state-us-east-1",
		CentralStateBucket: "central-us-east-1", EtcdBackupBucket: "etcd-us-east-1", HealthBucket: "health-us-east-1",
		Clusters:    []ManagementCluster{{Name: "mc01", OIDCBucket: "oidc-us-east-1-mc01"}},
		OIDCBuckets: "oidc-us-east-1-*", Approvers: []string{"arn:aws:iam::123456789012:role/approver"}}
	docs := reflect.ValueOf(RegionDocuments(r))
	var all []Document
	for i := range docs.NumField() {
		if d, ok := docs.Field(i).Interface().(Document); ok {
			all = append(all, d)
		}
	}
	odd := DeployRolePolicy(r)
	odd.Statement[0].Sid = "Spaces and tabs\t, é, ü, <b>&</b>, ${aws:username}, $${x}"
	all = append(all, odd)
	for _, d := range all {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := json.Compact(&out, iampolicy.Substitute(b, widestPlaceholders)); err != nil {
			t.Fatal(err)
		}
		want := len([]rune(out.String()))
		if got, err := Size(d); err != nil || got != want {
			t.Errorf("%s: Size = %d (%v), compacted %d runes", d.ID, got, err, want)
		}
	}
}
