package iam_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/render/iam"
)

// TestPublicAsS3DefinesIt: the examples of the Amazon S3 User Guide's "The
// meaning of public" (bucket policies), decided as it decides them.
func TestPublicAsS3DefinesIt(t *testing.T) {
	for _, tc := range []struct {
		what, statement string
		public          bool
	}{
		{"a federated principal", `{"Principal": {"Federated": "graph.facebook.com"}, "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow"}`, true},
		{"anyone", `{"Principal": "*", "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow"}`, true},
		{"anyone in any VPC", `{"Principal": "*", "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow", "Condition": {"StringLike": {"aws:SourceVpc": "vpc-*"}}}`, true},
		{"anyone in one VPC", `{"Principal": "*", "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow", "Condition": {"StringEquals": {"aws:SourceVpc": "vpc-91237329"}}}`, false},
		{"an account", `{"Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow"}`, false},
		{"roles of any account", `{"Principal": {"AWS": "*"}, "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow", "Condition": {"ArnLike": {"aws:PrincipalArn": "arn:aws:iam::*:role/x"}}}`, true},
		{"an organisation", `{"Principal": "*", "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow", "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-abc123"}}}`, false},
		{"an organisation named by a policy variable", `{"Principal": "*", "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow", "Condition": {"StringEquals": {"aws:PrincipalOrgID": "${aws:ResourceOrgID}"}}}`, true},
		{"an organisation Terraform fills in", `{"Principal": "*", "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow", "Condition": {"StringEquals": {"aws:PrincipalOrgID": "${organization_id}"}}}`, false},
		{"anyone but an organisation", `{"Principal": "*", "Resource": "*", "Action": "s3:PutObject", "Effect": "Allow", "Condition": {"StringNotEquals": {"aws:PrincipalOrgID": "o-abc123"}}}`, true},
		{"a /8", `{"Principal": "*", "Resource": "*", "Action": "s3:GetObject", "Effect": "Allow", "Condition": {"IpAddress": {"aws:SourceIp": "44.0.0.0/8"}}}`, false},
		{"a /1", `{"Principal": "*", "Resource": "*", "Action": "s3:GetObject", "Effect": "Allow", "Condition": {"IpAddress": {"aws:SourceIp": "0.0.0.0/1"}}}`, true},
		{"anyone, denied", `{"Principal": "*", "Resource": "*", "Action": "s3:*", "Effect": "Deny"}`, false},
	} {
		var s iam.Statement
		if err := json.Unmarshal([]byte(tc.statement), &s); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		_, why := iam.PublicStatement(iam.Document{Version: "2012-10-17", Statement: []iam.Statement{s}})
		if (why != "") != tc.public {
			t.Errorf("%s: public = %v (%s), want %v", tc.what, why != "", why, tc.public)
		}
	}
}

// TestNoRenderedBucketPolicyIsPublic: every bucket a region's chain makes
// has Block Public Access on (terraform/modules/state-bucket), so S3
// refuses any public policy for it: each rendered bucket policy of the
// example fleet is not public by S3's definition.
func TestNoRenderedBucketPolicyIsPublic(t *testing.T) {
	w := install(t)
	n := 0
	for _, in := range w.regions {
		for name, doc := range in.docs {
			if !strings.HasSuffix(name, "bucket-policy.json") {
				continue
			}
			n++
			if sid, why := iam.PublicStatement(doc); why != "" {
				t.Errorf("%s %s: statement %s makes it public: %s", in.name, name, sid, why)
			}
		}
	}
	if n < 3 {
		t.Fatalf("only %d bucket policies", n)
	}
}
