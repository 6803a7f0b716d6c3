package iamjudge

import "testing"

// The cases follow AWS's documented policy evaluation logic ("Policy
// evaluation logic" and "Condition operators" in the IAM User Guide).
func TestEvaluateDocumentedLogic(t *testing.T) {
	doc := func(ss ...Statement) Document { return Document{Version: "2012-10-17", Statement: ss} }
	allowS3 := Statement{Effect: "Allow", Action: Strings{"s3:Get*"}, Resource: Strings{"arn:aws:s3:::bucket/*"}}
	req := Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::bucket/a/b.txt"}
	cond := func(op, key string, vals ...string) map[string]map[string]Strings {
		return map[string]map[string]Strings{op: {key: vals}}
	}
	tests := []struct {
		name string
		req  Request
		docs []Document
		want Decision
	}{
		{"no statement applies: implicit deny", req, []Document{doc()}, ImplicitDeny},
		{"an allow applies", req, []Document{doc(allowS3)}, Allow},
		{"action wildcards match case-insensitively", Request{Action: "S3:getobject", Resource: req.Resource}, []Document{doc(allowS3)}, Allow},
		{"resource wildcard spans slashes", req, []Document{doc(allowS3)}, Allow},
		{"resources match case-sensitively", Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::BUCKET/a"}, []Document{doc(allowS3)}, ImplicitDeny},
		{"? matches one character", Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b1"},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"s3:*"}, Resource: Strings{"arn:aws:s3:::b?"}})}, Allow},
		{"explicit deny overrides an allow in another policy", req,
			[]Document{doc(allowS3), doc(Statement{Effect: "Deny", Action: Strings{"s3:*"}, Resource: Strings{"*"}})}, ExplicitDeny},
		{"NotAction deny spares the listed actions", Request{Action: "iam:CreateRole", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"iam:*"}, Resource: Strings{"*"}},
				Statement{Effect: "Deny", NotAction: Strings{"iam:*"}, Resource: Strings{"*"}, Condition: cond("StringNotEquals", "aws:RequestedRegion", "eu-west-1")})}, Allow},
		{"NotAction deny hits other actions outside the region", Request{Action: "ec2:RunInstances", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}},
				Statement{Effect: "Deny", NotAction: Strings{"iam:*"}, Resource: Strings{"*"}, Condition: cond("StringNotEquals", "aws:RequestedRegion", "eu-west-1")})}, ExplicitDeny},
		{"NotResource", Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::other/x"},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"s3:*"}, NotResource: Strings{"arn:aws:s3:::bucket/*"}})}, Allow},
		{"values of one key are ORed", Request{Action: "ec2:RunInstances", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"eu-west-1"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: cond("StringEquals", "aws:RequestedRegion", "us-east-1", "eu-west-1")})}, Allow},
		{"keys are ANDed", Request{Action: "ec2:RunInstances", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"eu-west-1"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: map[string]map[string]Strings{
				"StringEquals": {"aws:RequestedRegion": {"eu-west-1"}, "aws:PrincipalTag/team": {"a"}}}})}, ImplicitDeny},
		{"a missing key fails a positive operator", Request{Action: "ec2:RunInstances", Resource: "*"},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: cond("StringEquals", "aws:RequestedRegion", "eu-west-1")})}, ImplicitDeny},
		{"a missing key satisfies a negated operator", Request{Action: "ec2:RunInstances", Resource: "*"},
			[]Document{doc(Statement{Effect: "Deny", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: cond("StringNotEquals", "aws:RequestedRegion", "eu-west-1")})}, ExplicitDeny},
		{"IfExists holds when the key is missing", Request{Action: "ec2:RunInstances", Resource: "*"},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: cond("StringEqualsIfExists", "ec2:InstanceType", "t3.micro")})}, Allow},
		{"StringLike", Request{Action: "sts:AssumeRole", Resource: "*", Context: map[string][]string{"aws:PrincipalArn": {"arn:aws:iam::1:role/pipeline-eu"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"sts:AssumeRole"}, Resource: Strings{"*"}, Condition: cond("StringLike", "aws:PrincipalArn", "arn:aws:iam::*:role/pipeline-*")})}, Allow},
		// ArnEquals and ArnLike are one operator: wildcards per ARN part.
		{"ArnEquals takes wildcards", Request{Action: "ecs:RunTask", Resource: "*", Context: map[string][]string{"ecs:cluster": {"arn:aws:ecs:eu-west-1:1:cluster/boot"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ecs:RunTask"}, Resource: Strings{"*"}, Condition: cond("ArnEquals", "ecs:cluster", "arn:aws:ecs:eu-west-1:*:cluster/boot")})}, Allow},
		{"ArnLike matches part by part", Request{Action: "ecs:RunTask", Resource: "*", Context: map[string][]string{"ecs:cluster": {"arn:aws:ecs:eu-west-1:1:cluster/boot"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ecs:RunTask"}, Resource: Strings{"*"}, Condition: cond("ArnLike", "ecs:cluster", "arn:aws:ecs:*:cluster/boot")})}, ImplicitDeny},
		{"ArnEquals on a value that is no ARN", Request{Action: "ecs:RunTask", Resource: "*", Context: map[string][]string{"ecs:cluster": {"boot"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ecs:RunTask"}, Resource: Strings{"*"}, Condition: cond("ArnEquals", "ecs:cluster", "*")})}, ImplicitDeny},
		{"ForAnyValue on a multi-valued key", Request{Action: "ec2:CreateTags", Resource: "*", Context: map[string][]string{"aws:TagKeys": {"a", "team"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: cond("ForAnyValue:StringEquals", "aws:TagKeys", "team")})}, Allow},
		{"ForAllValues needs every value to match", Request{Action: "ec2:CreateTags", Resource: "*", Context: map[string][]string{"aws:TagKeys": {"a", "team"}}},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: cond("ForAllValues:StringEquals", "aws:TagKeys", "team")})}, ImplicitDeny},
		{"ForAllValues holds for an absent key", Request{Action: "ec2:CreateTags", Resource: "*"},
			[]Document{doc(Statement{Effect: "Allow", Action: Strings{"ec2:*"}, Resource: Strings{"*"}, Condition: cond("ForAllValues:StringEquals", "aws:TagKeys", "team")})}, Allow},
		{"trust policy: principal must match", Request{Caller: Caller{ARN: "arn:aws:sts::2:assumed-role/x/s", RoleARN: "arn:aws:iam::2:role/x", Account: "2"}, Action: "sts:AssumeRole"},
			[]Document{doc(Statement{Effect: "Allow", Principal: &Principal{AWS: Strings{"arn:aws:iam::1:role/x"}}, Action: Strings{"sts:AssumeRole"}})}, ImplicitDeny},
	}
	for _, tt := range tests {
		if got := Evaluate(tt.req, tt.docs...); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
