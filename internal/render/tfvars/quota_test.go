package tfvars_test

import (
	"reflect"
	"testing"

	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/render/tfvars"
)

// TestSizeEncodedIsSize: a region's IAM documents are sized against their
// quotas from the JSON deploy/ holds (iam.SizeEncoded of MarshalJSON's
// text), and that is what iam.Size counts of the document itself, for
// every document a region renders and for statements holding what JSON
// escapes (quotes, backslashes, control characters, U+2028, which both
// encodings escape), placeholders and policy variables; text the two
// write differently (<, > and &, which only json.Marshal escapes) is left
// to Size.
func TestSizeEncodedIsSize(t *testing.T) {
	r := iam.Region{Name: "us-east-1", Environment: "production", TektonNamespace: "pipelines", ManagementStateBucket: "mc-state-us-east-1",
		CentralStateBucket: "central-us-east-1", EtcdBackupBucket: "etcd-us-east-1", HealthBucket: "health-us-east-1",
		Clusters:    []iam.ManagementCluster{{Name: "mc01", OIDCBucket: "oidc-us-east-1-mc01"}, {Name: "mc02", OIDCBucket: "oidc-us-east-1-mc02"}},
		OIDCBuckets: "oidc-us-east-1-*", Approvers: []string{"arn:aws:iam::123456789012:role/approver"}}
	docs := reflect.ValueOf(iam.RegionDocuments(r))
	var all []iam.Document
	for i := range docs.NumField() {
		if d, ok := docs.Field(i).Interface().(iam.Document); ok {
			all = append(all, d)
		}
	}
	for _, sid := range []string{`quote " and backslash \ in it`, "tab\tand\nline", "é and ü", "${aws:username} $${x} ${account_id}", "  spaced  out  ", "line\u2028sep"} {
		d := iam.DeployRolePolicy(r)
		d.Statement[0].Sid = sid
		all = append(all, d)
	}
	for _, d := range all {
		b, err := tfvars.MarshalJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		want, err := iam.Size(d)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := iam.SizeEncoded(b); !ok || got != want {
			t.Errorf("%s: SizeEncoded = %d (%v), Size %d", d.ID, got, ok, want)
		}
	}
	for _, sid := range []string{"<b>", "a & b"} {
		d := iam.DeployRolePolicy(r)
		d.Statement[0].Sid = sid
		b, err := tfvars.MarshalJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := iam.SizeEncoded(b); ok {
			t.Errorf("%q: sized from the text, which json.Marshal writes longer", sid)
		}
		want, _ := iam.Size(d)
		if got, problem := iam.CheckQuotaEncoded("x-policy.json", d, b); got != want || problem != "" {
			t.Errorf("%q: CheckQuotaEncoded = %d %q, Size %d", sid, got, problem, want)
		}
	}
}
