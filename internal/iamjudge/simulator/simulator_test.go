package simulator

import (
	"testing"

	"github.com/regionctl/regionctl/internal/iamjudge"
)

type S = iamjudge.Statement
type Ss = iamjudge.Strings

func doc(id string, ss ...S) iamjudge.Document {
	return iamjudge.Document{Version: "2012-10-17", ID: id, Statement: ss}
}

// TestJudgesAgreeOnDocumentedCases: cases of the IAM User Guide's "Policy
// evaluation logic" (within and across accounts, boundaries, session
// policies, SCPs and RCPs), each decided as the guide says by both judges.
func TestJudgesAgreeOnDocumentedCases(t *testing.T) {
	j := Require(t)
	alice := iamjudge.Caller{ARN: "arn:aws:sts::111111111111:assumed-role/alice/s1", RoleARN: "arn:aws:iam::111111111111:role/alice", Account: "111111111111"}
	object := "arn:aws:s3:::bucket/key"
	allow := func(a, r string) S { return S{Effect: "Allow", Action: Ss{a}, Resource: Ss{r}} }
	deny := func(a, r string) S { return S{Effect: "Deny", Action: Ss{a}, Resource: Ss{r}} }
	get := iamjudge.Request{Caller: alice, Action: "s3:GetObject", Resource: object}
	other := "222222222222"
	bucketFor := func(p iamjudge.Principal) *iamjudge.Document {
		d := doc("bucket", S{Effect: "Allow", Principal: &p, Action: Ss{"s3:GetObject"}, Resource: Ss{object}})
		return &d
	}
	full := doc("FullAWSAccess", allow("*", "*"))
	scps := func(extra ...iamjudge.Document) []iamjudge.OrgLevel {
		return []iamjudge.OrgLevel{{ID: "r-root", Policies: []iamjudge.Document{full}}, {ID: "ou-abcd-12345678", Policies: append([]iamjudge.Document{full}, extra...)}, {ID: "111111111111", Policies: []iamjudge.Document{full}}}
	}
	tests := []struct {
		name string
		a    iamjudge.Authorization
		want iamjudge.Decision
	}{
		{"identity policy allows", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:GetObject", "*"))}}, iamjudge.Allow},
		{"nothing allows", iamjudge.Authorization{Request: get}, iamjudge.ImplicitDeny},
		{"an explicit deny wins", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"), deny("s3:GetObject", "*"))}}, iamjudge.ExplicitDeny},
		{"the boundary limits", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"))}, Boundary: ptr(doc("b", allow("ec2:*", "*")))}, iamjudge.ImplicitDeny},
		{"a session policy limits", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"))}, Session: []iamjudge.Document{doc("s", allow("ec2:*", "*"))}}, iamjudge.ImplicitDeny},
		{"across accounts both must allow: only identity", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"))}, ResourceAccount: other}, iamjudge.ImplicitDeny},
		{"across accounts both allow", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"))}, ResourceAccount: other,
			ResourcePolicy: bucketFor(iamjudge.Principal{AWS: Ss{alice.RoleARN}})}, iamjudge.Allow},
		{"same account: a resource policy naming the role allows", iamjudge.Authorization{Request: get, ResourcePolicy: bucketFor(iamjudge.Principal{AWS: Ss{alice.RoleARN}})}, iamjudge.Allow},
		{"an SCP level without an allow denies", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"))},
			SCPs: []iamjudge.OrgLevel{{ID: "r-root", Policies: []iamjudge.Document{full}}, {ID: "ou-abcd-12345678", Policies: []iamjudge.Document{doc("ec2only", allow("ec2:*", "*"))}}, {ID: "111111111111", Policies: []iamjudge.Document{full}}}}, iamjudge.ImplicitDeny},
		{"an SCP deny denies", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"))}, SCPs: scps(doc("d", deny("s3:*", "*")))}, iamjudge.ExplicitDeny},
		{"SCPs that allow do not grant", iamjudge.Authorization{Request: get, SCPs: scps()}, iamjudge.ImplicitDeny},
		{"an RCP deny denies the owner too", iamjudge.Authorization{Request: get, Identity: []iamjudge.Document{doc("p", allow("s3:*", "*"))},
			RCPs: []iamjudge.OrgLevel{{ID: "r-root", Policies: []iamjudge.Document{doc("rcp", S{Effect: "Deny", Principal: &iamjudge.Principal{Any: true}, Action: Ss{"s3:*"}, Resource: Ss{"*"}})}}}}, iamjudge.ExplicitDeny},
	}
	for _, tt := range tests {
		v, err := j.Compare(tt.a)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if v.Ours.Decision != tt.want || v.Theirs.Result != Theirs(tt.want) {
			t.Errorf("%s: want %s; %s", tt.name, tt.want, v)
		}
	}
}

func ptr[T any](v T) *T { return &v }
