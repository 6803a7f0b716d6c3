package iamjudge

import (
	"github.com/regionctl/regionctl/internal/iampolicy"
	"strings"
	"testing"
)

// The cases follow the IAM User Guide: "Policy evaluation logic" (within
// and across accounts), "Permissions boundaries for IAM entities", "Session
// policies", "How IAM roles differ from resource-based policies" and
// "Passing session tags in AWS STS".
func TestAuthorizeDocumentedLogic(t *testing.T) {
	doc := func(ss ...Statement) *Document { return &Document{Version: "2012-10-17", Statement: ss} }
	allow := func(action, resource string) Statement {
		return Statement{Effect: "Allow", Action: Strings{action}, Resource: Strings{resource}}
	}
	deny := func(action, resource string) Statement {
		return Statement{Effect: "Deny", Action: Strings{action}, Resource: Strings{resource}}
	}
	trust := func(principal Principal, actions ...string) Statement {
		return Statement{Effect: "Allow", Principal: &principal, Action: actions}
	}
	alice := Caller{ARN: "arn:aws:sts::111111111111:assumed-role/alice/s1", RoleARN: "arn:aws:iam::111111111111:role/alice", Account: "111111111111"}
	object := "arn:aws:s3:::bucket/key"
	role := "arn:aws:iam::222222222222:role/target"
	sameRole := "arn:aws:iam::111111111111:role/target"
	get := Request{Caller: alice, Action: "s3:GetObject", Resource: object}
	assume := func(r string) Request { return Request{Caller: alice, Action: "sts:AssumeRole", Resource: r} }

	tests := []struct {
		name string
		a    Authorization
		want Decision
		why  string // part of the reason
	}{
		{"same account: identity policy allows", Authorization{Request: get, Identity: []Document{*doc(allow("s3:GetObject", "*"))}}, Allow, "identity-based"},
		// "Blocking public access to your Amazon S3 storage": an unsigned
		// request is public access, allowed by a bucket policy that grants
		// it to "*" and by nothing else.
		{"anonymous: a policy granting * allows", Authorization{Request: Request{Caller: Anonymous, Action: "s3:GetObject", Resource: object},
			ResourceAccount: "111111111111", ResourcePolicy: doc(trust(Principal{Any: true}, "s3:GetObject"))}, Allow, "resource-based"},
		{"anonymous: a policy granting another action does not", Authorization{Request: Request{Caller: Anonymous, Action: "s3:PutObject", Resource: object},
			ResourceAccount: "111111111111", ResourcePolicy: doc(trust(Principal{Any: true}, "s3:GetObject"))}, ImplicitDeny, "anonymous"},
		{"anonymous: a policy naming an account does not", Authorization{Request: Request{Caller: Anonymous, Action: "s3:GetObject", Resource: object},
			ResourceAccount: "111111111111", ResourcePolicy: doc(trust(Principal{AWS: Strings{"111111111111"}}, "s3:GetObject"))}, ImplicitDeny, "anonymous"},
		{"anonymous: no policy, no access", Authorization{Request: Request{Caller: Anonymous, Action: "s3:GetObject", Resource: object}, ResourceAccount: "111111111111"}, ImplicitDeny, "anonymous"},
		{"same account: nothing allows", Authorization{Request: get}, ImplicitDeny, "no identity-based policy"},
		{"same account: a resource policy naming the role allows without identity policy",
			Authorization{Request: get, ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.RoleARN}}, "s3:GetObject"))}, Allow, "resource-based"},
		{"same account: a resource policy naming only the account needs the identity policy too",
			Authorization{Request: get, ResourcePolicy: doc(trust(Principal{AWS: Strings{"arn:aws:iam::111111111111:root"}}, "s3:GetObject"))}, ImplicitDeny, ""},
		{"explicit deny in a resource policy wins over identity allow",
			Authorization{Request: get, Identity: []Document{*doc(allow("s3:*", "*"))}, ResourcePolicy: &Document{Statement: []Statement{{Effect: "Deny", Principal: &Principal{Any: true}, Action: Strings{"s3:*"}, Resource: Strings{"*"}}}}},
			ExplicitDeny, "explicit deny in a resource-based policy"},
		{"boundary limits the identity policy", Authorization{Request: get, Identity: []Document{*doc(allow("s3:*", "*"))}, Boundary: doc(allow("ec2:*", "*"))}, ImplicitDeny, "permissions boundary"},
		{"boundary and identity both allow", Authorization{Request: get, Identity: []Document{*doc(allow("s3:*", "*"))}, Boundary: doc(allow("s3:Get*", "*"))}, Allow, ""},
		{"explicit deny in a boundary", Authorization{Request: get, Identity: []Document{*doc(allow("s3:*", "*"))}, Boundary: doc(allow("*", "*"), deny("s3:GetObject", "*"))}, ExplicitDeny, "permissions boundary"},
		{"session policy limits the role's policies", Authorization{Request: get, Identity: []Document{*doc(allow("s3:*", "*"))}, Session: []Document{*doc(allow("ec2:*", "*"))}}, ImplicitDeny, "session policy"},
		{"a resource policy naming the role is limited by the session policy",
			Authorization{Request: get, Session: []Document{*doc(allow("ec2:*", "*"))}, ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.RoleARN}}, "s3:GetObject"))}, ImplicitDeny, ""},
		{"a resource policy naming the session is not",
			Authorization{Request: get, Session: []Document{*doc(allow("ec2:*", "*"))}, ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.ARN}}, "s3:GetObject"))}, Allow, ""},
		{"cross account: identity allow alone is not enough",
			Authorization{Request: get, Identity: []Document{*doc(allow("s3:*", "*"))}, ResourceAccount: "222222222222"}, ImplicitDeny, "from another account"},
		{"cross account: resource policy alone is not enough",
			Authorization{Request: get, ResourceAccount: "222222222222", ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.RoleARN}}, "s3:GetObject"))}, ImplicitDeny, "identity-based"},
		{"cross account: both allow",
			Authorization{Request: get, Identity: []Document{*doc(allow("s3:*", "*"))}, ResourceAccount: "222222222222", ResourcePolicy: doc(trust(Principal{AWS: Strings{"111111111111"}}, "s3:GetObject"))}, Allow, ""},
		{"a root user may do anything in its account", Authorization{Request: Request{Caller: Caller{ARN: "arn:aws:iam::111111111111:root", Account: "111111111111"}, Action: "iam:CreateRole", Resource: "*"}, Root: true}, Allow, "root"},
		{"assume role: the trust must allow, even with an identity allow",
			Authorization{Request: assume(sameRole), Identity: []Document{*doc(allow("sts:AssumeRole", "*"))}, TrustRequired: true, ResourcePolicy: doc()}, ImplicitDeny, "trust policy"},
		{"assume role, same account: a trust naming the role suffices",
			Authorization{Request: assume(sameRole), TrustRequired: true, ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.RoleARN}}, "sts:AssumeRole"))}, Allow, ""},
		{"assume role, same account: a trust naming the account needs the identity policy",
			Authorization{Request: assume(sameRole), TrustRequired: true, ResourcePolicy: doc(trust(Principal{AWS: Strings{"arn:aws:iam::111111111111:root"}}, "sts:AssumeRole"))}, ImplicitDeny, "identity-based"},
		{"assume role across accounts: the trust naming the role is not enough",
			Authorization{Request: assume(role), ResourceAccount: "222222222222", TrustRequired: true, ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.RoleARN}}, "sts:AssumeRole"))}, ImplicitDeny, "identity-based"},
		{"assume role across accounts: trust and identity allow",
			Authorization{Request: assume(role), ResourceAccount: "222222222222", Identity: []Document{*doc(allow("sts:AssumeRole", role))}, TrustRequired: true,
				ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.RoleARN}}, "sts:AssumeRole"))}, Allow, ""},
		{"session tags: the trust must allow sts:TagSession",
			Authorization{Request: Request{Caller: alice, Action: "sts:TagSession", Resource: role}, ResourceAccount: "222222222222", Identity: []Document{*doc(allow("sts:*", role))}, TrustRequired: true,
				ResourcePolicy: doc(trust(Principal{AWS: Strings{alice.RoleARN}}, "sts:AssumeRole"))}, ImplicitDeny, "trust policy"},
		{"web identity: a trust naming the provider",
			Authorization{Request: Request{Caller: Caller{Federated: "arn:aws:iam::111111111111:oidc-provider/oidc.example/id/X"}, Action: "sts:AssumeRoleWithWebIdentity", Resource: sameRole}, TrustRequired: true,
				ResourcePolicy: doc(trust(Principal{Federated: Strings{"arn:aws:iam::111111111111:oidc-provider/oidc.example/id/X"}}, "sts:AssumeRoleWithWebIdentity"))}, Allow, ""},
		{"web identity: another provider",
			Authorization{Request: Request{Caller: Caller{Federated: "arn:aws:iam::111111111111:oidc-provider/oidc.example/id/Y"}, Action: "sts:AssumeRoleWithWebIdentity", Resource: sameRole}, TrustRequired: true,
				ResourcePolicy: doc(trust(Principal{Federated: Strings{"arn:aws:iam::111111111111:oidc-provider/oidc.example/id/X"}}, "sts:AssumeRoleWithWebIdentity"))}, ImplicitDeny, ""},
		{"a service principal", Authorization{Request: Request{Caller: Caller{Service: "eks.amazonaws.com"}, Action: "sts:AssumeRole", Resource: sameRole}, TrustRequired: true,
			ResourcePolicy: doc(trust(Principal{Service: Strings{"eks.amazonaws.com"}}, "sts:AssumeRole"))}, Allow, ""},
	}
	for _, tt := range tests {
		v := Authorize(tt.a)
		if v.Decision != tt.want || !strings.Contains(v.Reason, tt.why) {
			t.Errorf("%s: %v (%s), want %v (%q)", tt.name, v.Decision, v.Reason, tt.want, tt.why)
		}
	}
}

// TestPolicyVariablesInResources: "IAM policy elements: Variables and
// tags" — a variable in a resource takes the request's value; a request
// without the key matches no resource of the statement.
func TestPolicyVariablesInResources(t *testing.T) {
	d, err := iampolicy.Parse([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::backups/${aws:PrincipalAccount}/*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		resource string
		ctx      map[string][]string
		want     Decision
	}{
		{"arn:aws:s3:::backups/111111111111/etcd.db", map[string][]string{"aws:PrincipalAccount": {"111111111111"}}, Allow},
		{"arn:aws:s3:::backups/222222222222/etcd.db", map[string][]string{"aws:PrincipalAccount": {"111111111111"}}, ImplicitDeny},
		{"arn:aws:s3:::backups/111111111111/etcd.db", nil, ImplicitDeny},
		// A value is a literal, never a pattern.
		{"arn:aws:s3:::backups/1/etcd.db", map[string][]string{"aws:PrincipalAccount": {"*"}}, ImplicitDeny},
	} {
		if got := Evaluate(Request{Action: "s3:PutObject", Resource: tt.resource, Context: tt.ctx}, d); got != tt.want {
			t.Errorf("%s with %v: %v, want %v", tt.resource, tt.ctx, got, tt.want)
		}
	}
}

func TestConditionOperators(t *testing.T) {
	ctx := map[string][]string{"aws:RequestTag/team": {"a"}, "aws:SecureTransport": {"true"}, "s3:max-keys": {"10"}}
	for _, tt := range []struct {
		op, key string
		want    []string
		ok      bool
	}{
		{"Null", "aws:RequestTag/team", []string{"false"}, true},
		{"Null", "aws:RequestTag/other", []string{"true"}, true},
		{"Null", "aws:RequestTag/team", []string{"true"}, false},
		{"Bool", "aws:SecureTransport", []string{"TRUE"}, true},
		{"NumericLessThanEquals", "s3:max-keys", []string{"10"}, true},
		{"NumericLessThan", "s3:max-keys", []string{"10"}, false},
		{"StringEquals", "AWS:REQUESTTAG/TEAM", []string{"a"}, true}, // key names are case-insensitive
		{"StringNotEqualsIfExists", "aws:RequestTag/other", []string{"a"}, true},
	} {
		if got := condition(tt.op, lookup(ctx, tt.key), tt.want); got != tt.ok {
			t.Errorf("%s %s %v: %v, want %v", tt.op, tt.key, tt.want, got, tt.ok)
		}
	}
}
