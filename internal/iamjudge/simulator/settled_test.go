package simulator

import (
	"testing"

	"github.com/regionctl/regionctl/internal/iamjudge"
)

// TestSettlementsAreStillNeeded: each settled disagreement, asked of both
// judges, still disagrees (else the settlement should go) and is settled
// by exactly its settlement; and a request a settlement does not describe
// is not settled by it.
func TestSettlementsAreStillNeeded(t *testing.T) {
	j := Require(t)
	root := iamjudge.Caller{ARN: "arn:aws:iam::111111111111:root", Account: "111111111111"}
	provider := "arn:aws:iam::111111111111:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"
	trust := doc("trust", S{Effect: "Allow", Principal: &iamjudge.Principal{Federated: Ss{provider}}, Action: Ss{"sts:AssumeRoleWithWebIdentity"},
		Condition: map[string]map[string]Ss{"StringEquals": {"oidc.eks.us-east-1.amazonaws.com/id/ABC:sub": {"system:serviceaccount:ns:sa"}}}})
	cases := []struct {
		settlement int
		a          iamjudge.Authorization
	}{
		{0, iamjudge.Authorization{Request: iamjudge.Request{Caller: root, Action: "iam:CreateRole", Resource: "arn:aws:iam::111111111111:role/x"}, Root: true}},
		{1, iamjudge.Authorization{Request: iamjudge.Request{Caller: iamjudge.Caller{Federated: provider, Account: "111111111111"}, Action: "sts:AssumeRoleWithWebIdentity",
			Resource: "arn:aws:iam::111111111111:role/x", Context: map[string][]string{"oidc.eks.us-east-1.amazonaws.com/id/ABC:sub": {"system:serviceaccount:ns:sa"}}},
			ResourcePolicy: &trust, ResourceAccount: "111111111111", TrustRequired: true}},
		{2, iamjudge.Authorization{Request: iamjudge.Request{Caller: iamjudge.Caller{ARN: "arn:aws:sts::111111111111:assumed-role/admin/s", RoleARN: "arn:aws:iam::111111111111:role/admin", Account: "111111111111"},
			Action: "apigateway:GET", Resource: "arn:aws:apigateway:eu-west-1::/apis/a1b2c3/routes/r1"},
			Identity: []iamjudge.Document{doc("admin", S{Effect: "Allow", Action: Ss{"*"}, Resource: Ss{"*"}})}}},
	}
	for _, c := range cases {
		v, err := j.Compare(c.a)
		if err != nil {
			t.Fatal(err)
		}
		if v.Agree() {
			t.Errorf("settlement %q: the judges now agree (%s); drop it", Settlements[c.settlement].Name, v)
			continue
		}
		if !Settlements[c.settlement].Applies(c.a, v) {
			t.Errorf("settlement %q does not apply to its own case: %s", Settlements[c.settlement].Name, v)
		}
	}
	// The root user of another account is not the account's root.
	other := iamjudge.Authorization{Request: iamjudge.Request{Caller: root, Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}, Root: true, ResourceAccount: "222222222222"}
	if v, err := j.Compare(other); err != nil || Settled(other, v) != "" && !v.Agree() {
		t.Errorf("a root user across accounts is settled: %v %v", v, err)
	}
}
