package e2e

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// ecrChecklist judges the policy the regional root put on the region's
// image repositories with iamjudge.Authorize, as ECR would for a cross-account
// pull (the gate does not relay ECR's resource policies): a principal of
// a management cluster account of the region, whose own policy allows
// pulling (as the node role's AmazonEC2ContainerRegistryReadOnly does), may
// pull; the same principal in the region's DR account, or in an account of
// another OU, may not, and no one outside may push.
func (e *env) ecrChecklist(regional, mc01, dr string) {
	t := e.t
	ctx := context.Background()
	const repo = "platform/hypershift-operator"
	out, err := ecr.NewFromConfig(e.in(regional), func(o *ecr.Options) { o.Region = region }).GetRepositoryPolicy(ctx, &ecr.GetRepositoryPolicyInput{RepositoryName: aws.String(repo)})
	if err != nil {
		t.Fatalf("the policy of %s: %v", repo, err)
	}
	policy, err := iampolicy.ParseAWS([]byte(aws.ToString(out.PolicyText)))
	if err != nil {
		t.Fatalf("the policy of %s: %v", repo, err)
	}
	pull := []iam.Document{{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow", Resource: iam.Strings{"*"},
		Action: iam.Strings{"ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage", "ecr:PutImage"}}}}}
	arn := "arn:aws:ecr:" + region + ":" + regional + ":repository/" + repo
	ask := func(account, action string) iamjudge.Decision {
		caller := iamjudge.Caller{ARN: "arn:aws:sts::" + account + ":assumed-role/node/i-1", RoleARN: iam.RoleARN("aws", account, "node"), Account: account}
		return iamjudge.Authorize(iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: action, Resource: arn, Context: map[string][]string{
			"aws:PrincipalOrgPaths": {e.orgPath(account)}, "aws:PrincipalAccount": {account}, "aws:RequestedRegion": {region}}},
			Identity: pull, ResourceAccount: regional, ResourcePolicy: &policy}).Decision
	}
	for _, tc := range []struct {
		what, account, action string
		want                  iamjudge.Decision
	}{
		{"mc01 pulls an image", mc01, "ecr:BatchGetImage", iamjudge.Allow},
		{"mc01 reads a layer", mc01, "ecr:GetDownloadUrlForLayer", iamjudge.Allow},
		{"mc01 pushes an image", mc01, "ecr:PutImage", iamjudge.ImplicitDeny},
		{"the DR account pulls an image", dr, "ecr:BatchGetImage", iamjudge.ImplicitDeny},
	} {
		if got := ask(tc.account, tc.action); got != tc.want {
			t.Errorf("%s: %v, want %v (policy %s)", tc.what, got, tc.want, aws.ToString(out.PolicyText))
		}
	}
}
