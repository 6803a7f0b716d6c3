package iam_test

import (
	"testing"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// TestCentralStateUnderOnePattern: the central pipeline's policy names the
// regions' default-named state buckets by one pattern, held to its own
// (the management) account, so that it stays one size however many
// regions there are; it reaches those buckets and a bucket named by
// state_bucket, and not a bucket of the same pattern in another account.
// Both judges decide each request.
func TestCentralStateUnderOnePattern(t *testing.T) {
	const management, stranger = "111111111111", "999999999999"
	var regions []iam.Region
	for i := range 300 {
		name := []string{"us-east-1", "eu-west-1", "ap-south-1"}[i%3]
		regions = append(regions, iam.Region{Name: name, CentralStateBucket: iam.CentralStatePrefix + name + "-regional"})
	}
	regions = append(regions, iam.Region{Name: "eu-central-1", CentralStateBucket: "acme-central-state-eu-central-1"})
	doc := iam.CentralPipelinePolicy("aws", regions)
	if _, problem := iam.CheckQuota("deploy/central/aws/iam/central-pipeline-policy.json", doc); problem != "" {
		t.Fatalf("301 regions: %s", problem)
	}
	caller := session(management, "regionctl-central-pipeline", "tekton")
	req := func(action, resource, owner string) iamjudge.Authorization {
		return iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: action, Resource: resource,
			Context: map[string][]string{"aws:RequestedRegion": {"us-east-1"}, "aws:PrincipalAccount": {management}, "aws:ResourceAccount": {owner}}},
			Identity: []iam.Document{doc}, ResourceAccount: owner}
	}
	// A stranger's bucket named like the pattern, whose policy invites
	// the management account in: only the policy's own condition keeps
	// the central pipeline's state out of it.
	baited := func(a iamjudge.Authorization) iamjudge.Authorization {
		a.ResourcePolicy = &iam.Document{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow",
			Principal: &iam.Principal{AWS: iam.Strings{"arn:aws:iam::" + management + ":root"}}, Action: iam.Strings{"s3:*"},
			Resource: iam.Strings{"arn:aws:s3:::regionctl-tfstate-evil-regional", "arn:aws:s3:::regionctl-tfstate-evil-regional/*"}}}}
		return a
	}
	for _, tt := range []struct {
		what string
		a    iamjudge.Authorization
		want iamjudge.Decision
	}{
		{"create its region's state bucket", req("s3:CreateBucket", "arn:aws:s3:::regionctl-tfstate-us-east-1-regional", ""), iamjudge.Allow},
		{"find a state bucket not made yet (HeadBucket)", req("s3:ListBucket", "arn:aws:s3:::regionctl-tfstate-us-east-1-regional", ""), iamjudge.Allow},
		{"configure a stranger's bucket of the pattern", baited(req("s3:PutBucketPolicy", "arn:aws:s3:::regionctl-tfstate-evil-regional", stranger)), iamjudge.ImplicitDeny},
		{"its region's state", req("s3:PutObject", "arn:aws:s3:::regionctl-tfstate-eu-west-1-regional/regional-cluster/eu-west-1/regional.tfstate", management), iamjudge.Allow},
		{"its region's state bucket", req("s3:ListBucket", "arn:aws:s3:::regionctl-tfstate-eu-west-1-regional", management), iamjudge.Allow},
		{"a state bucket named by state_bucket", req("s3:GetObject", "arn:aws:s3:::acme-central-state-eu-central-1/x.tfstate", management), iamjudge.Allow},
		{"a bucket of the pattern in another account", baited(req("s3:PutObject", "arn:aws:s3:::regionctl-tfstate-evil-regional/x.tfstate", stranger)), iamjudge.ImplicitDeny},
		{"a bucket named by state_bucket in another account", req("s3:PutObject", "arn:aws:s3:::acme-central-state-eu-central-1/x.tfstate", stranger), iamjudge.ImplicitDeny},
		{"another bucket of its account", req("s3:GetObject", "arn:aws:s3:::acme-billing/report.csv", management), iamjudge.ImplicitDeny},
		{"a management cluster's state bucket", req("s3:GetObject", "arn:aws:s3:::regionctl-regional-pipeline-eu-west-1/x.tfstate", management), iamjudge.ImplicitDeny},
	} {
		if v := judge(t, tt.what, tt.a); v.Decision != tt.want {
			t.Errorf("%s: %v (%s), want %v", tt.what, v.Decision, v.Reason, tt.want)
		}
	}
}
