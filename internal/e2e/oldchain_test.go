package e2e

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/aws/smithy-go"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/pipeline"
	"github.com/regionctl/regionctl/internal/platformapi"
)

// TestOldChainIsDenied installs the identity documents regionctl rendered
// before the chain was rebuilt (testdata/old-chain) and replays the calls
// its regional pipeline made, which passed every test only because moto
// enforces no IAM. Through the gate, AWS's answer to each is AccessDenied:
//
//   - Organizations calls with the regional pipeline's own credentials
//     (only the management account may make them);
//   - the management cluster account's OrganizationAccountAccessRole,
//     which trusts only the management account;
//   - session tags on the deploy role, whose trust allowed no
//     sts:TagSession;
//   - registration, for want of execute-api:Invoke.
//
// What AWS would have allowed but the FAQ forbids (the deploy role with
// AdministratorAccess in the regional account, writable central state,
// unscoped IAM) TestControls shows the new chain refusing.
func TestOldChainIsDenied(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	root := awsemu.Config(e.gate.URL, "us-east-1", aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey})
	orgs := organizations.NewFromConfig(root)
	account := func(name string) string {
		out, err := orgs.CreateAccount(ctx, &organizations.CreateAccountInput{AccountName: aws.String(name), Email: aws.String(name + "@example.com")})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.CreateAccountStatus.AccountId)
	}
	regional, mc := account("staging-eu-west-1-regional"), account("staging-eu-west-1-mc01")
	e.regionalAccount = regional
	read := func(name string) string {
		b, err := os.ReadFile("testdata/old-chain/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), "${pipeline_account_id}", regional)
	}
	in := func(acct string) *awsiam.Client {
		cfg, err := e.platform.InAccount(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		return awsiam.NewFromConfig(cfg)
	}
	// The old bootstrap: the pipeline's role with its rendered policy (its
	// trust here lets the test act as it); the old regional account step:
	// the deploy role with the rendered trust and AdministratorAccess.
	harness := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` + regional + `:root"},"Action":"sts:AssumeRole"}]}`
	ri := in(regional)
	if _, err := ri.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("regional-pipeline-eu-west-1"), AssumeRolePolicyDocument: aws.String(harness)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String("regional-pipeline-eu-west-1"), PolicyName: aws.String("old"),
		PolicyDocument: aws.String(read("regional-pipeline-policy.json"))}); err != nil {
		t.Fatal(err)
	}
	mi := in(mc)
	if _, err := mi.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("ManagementClusterDeployRole"), AssumeRolePolicyDocument: aws.String(read("management-cluster-deploy-role-trust.json")),
		Tags: []iamtypes.Tag{{Key: aws.String("regionctl:region"), Value: aws.String(region)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := mi.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("ManagementClusterDeployRole"), PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")}); err != nil {
		t.Fatal(err)
	}
	// The root user cannot call sts:AssumeRole (AWS IAM User Guide, "Tasks
	// that require root user credentials"; the gate refuses it too): the
	// harness is a platform administrator in the regional account (its
	// AccessRole), whom the harness trust's account principal covers.
	harnessUser, err := e.platform.InAccount(ctx, regional)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sts.NewFromConfig(harnessUser).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::" + regional + ":role/regional-pipeline-eu-west-1"), RoleSessionName: aws.String("old-pipeline")})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Credentials
	old := awsemu.Config(e.gate.URL, region, aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey), SessionToken: aws.ToString(c.SessionToken)})
	e.gate.Ledger().Expect(func(awsemu.Entry) bool { return true })

	oldOrgs := organizations.NewFromConfig(old)
	calls := []struct {
		what string
		call func() error
	}{
		{"ListAccounts (finding the account by name)", func() error {
			_, err := oldOrgs.ListAccounts(ctx, &organizations.ListAccountsInput{})
			return err
		}},
		{"CreateAccount with the region's tag", func() error {
			_, err := oldOrgs.CreateAccount(ctx, &organizations.CreateAccountInput{AccountName: aws.String("staging-eu-west-1-mc02"), Email: aws.String("x@example.com"),
				Tags: []orgtypes.Tag{{Key: aws.String("regionctl:region"), Value: aws.String(region)}}})
			return err
		}},
		{"ListRoots (the OU path)", func() error { _, err := oldOrgs.ListRoots(ctx, &organizations.ListRootsInput{}); return err }},
		{"ListParents", func() error {
			_, err := oldOrgs.ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(mc)})
			return err
		}},
		{"ListTagsForResource (the region tag check)", func() error {
			_, err := oldOrgs.ListTagsForResource(ctx, &organizations.ListTagsForResourceInput{ResourceId: aws.String(mc)})
			return err
		}},
		{"OrganizationAccountAccessRole of the management cluster account", func() error {
			_, err := sts.NewFromConfig(old).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::" + mc + ":role/OrganizationAccountAccessRole"), RoleSessionName: aws.String("regionctl-old")})
			return err
		}},
		{"the deploy role with ExternalId and a session tag", func() error {
			_, err := sts.NewFromConfig(old).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::" + mc + ":role/ManagementClusterDeployRole"), RoleSessionName: aws.String("regionctl-old"),
				ExternalId: aws.String("regional-pipeline-eu-west-1"), Tags: []ststypes.Tag{{Key: aws.String("regionctl:request-id"), Value: aws.String("old")}}})
			return err
		}},
		{"registration with the platform API", func() error {
			client := &platformapi.Client{Credentials: old.Credentials, LiveWait: 1}
			_, err := client.Register(ctx, pipeline.Registration{Endpoint: e.url, Name: "mc01", Region: region, RequestID: "old"})
			if err != nil && strings.Contains(err.Error(), "403") {
				return &smithy.GenericAPIError{Code: "AccessDenied", Message: err.Error()}
			}
			return err
		}},
	}
	for _, c := range calls {
		err := c.call()
		var api smithy.APIError
		if !errors.As(err, &api) || !strings.HasPrefix(api.ErrorCode(), "AccessDenied") {
			t.Errorf("the old chain's %s: want AccessDenied, got %v", c.what, err)
			continue
		}
		t.Logf("old chain: %-65s %s", c.what, api.ErrorCode())
	}
	// The same deploy role assumed as the old runner did, less the session
	// tag, is what AWS would have allowed: the trust itself was sound.
	if _, err := sts.NewFromConfig(old).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::" + mc + ":role/ManagementClusterDeployRole"), RoleSessionName: aws.String("regionctl-old"),
		ExternalId: aws.String("regional-pipeline-eu-west-1")}); err != nil {
		t.Errorf("the old deploy role without session tags: %v", err)
	}
}
