package awsemu_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/awsemu"
)

// TestSpeedupsAnswerAsMotoDoes holds moto with speedups.py to moto as
// installed (REGIONCTL_EMULATOR_SPEEDUPS=0): the same calls, through the
// paths the changes touch (the account an access key belongs to, in a
// minted account and in none; AWS managed policies there), get the same
// answers, account ids aside. It also fails when the installed moto no
// longer has the shape a change was written for, so that a moto upgrade
// that drops one is seen.
func TestSpeedupsAnswerAsMotoDoes(t *testing.T) {
	t.Setenv("REGIONCTL_EMULATOR_SPEEDUPS", "0")
	plain := start(t)
	if len(plain.Speedups) != 0 {
		t.Errorf("REGIONCTL_EMULATOR_SPEEDUPS=0 still changed moto: %v", plain.Speedups)
	}
	t.Setenv("REGIONCTL_EMULATOR_SPEEDUPS", "")
	fast := start(t)
	if !slices.Equal(fast.Speedups, awsemu.Speedups) {
		t.Errorf("the installed moto took %v of speedups.py's changes, want all of %v", fast.Speedups, awsemu.Speedups)
	}
	want := transcript(t, plain)
	got := transcript(t, fast)
	if !slices.Equal(got, want) {
		t.Errorf("moto with speedups.py answered\n  %s\nmoto as installed answered\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func start(t *testing.T) *awsemu.Emulator {
	t.Helper()
	e, err := awsemu.Start(context.Background(), "")
	if err != nil {
		t.Skipf("no moto_server: %v", err) // TestStartWarmStop fails without it
	}
	t.Cleanup(func() { _ = e.Stop() })
	return e
}

// transcript mints an account in e's organisation and records what its
// callers are told, with the minted account's id written as MINTED.
func transcript(t *testing.T, e *awsemu.Emulator) []string {
	t.Helper()
	ctx := context.Background()
	root := awsemu.Config(e.URL, "us-east-1", aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey})
	orgs := organizations.NewFromConfig(root)
	if _, err := orgs.CreateOrganization(ctx, &organizations.CreateOrganizationInput{FeatureSet: orgtypes.OrganizationFeatureSetAll}); err != nil {
		t.Fatal(err)
	}
	created, err := orgs.CreateAccount(ctx, &organizations.CreateAccountInput{AccountName: aws.String("minted"), Email: aws.String("minted@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	var minted string
	for deadline := time.Now().Add(10 * time.Second); minted == ""; time.Sleep(50 * time.Millisecond) {
		st, err := orgs.DescribeCreateAccountStatus(ctx, &organizations.DescribeCreateAccountStatusInput{CreateAccountRequestId: created.CreateAccountStatus.Id})
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("the account was not made: %v", err)
		}
		minted = aws.ToString(st.CreateAccountStatus.AccountId)
	}
	var out []string
	record := func(format string, args ...any) {
		out = append(out, strings.ReplaceAll(fmt.Sprintf(format, args...), minted, "MINTED"))
	}

	who := func(cfg aws.Config) string {
		id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return "error: " + err.Error()
		}
		return aws.ToString(id.Account) + " " + aws.ToString(id.Arn)
	}
	record("root: %s", who(root))
	record("a key no account holds: %s", who(awsemu.Config(e.URL, "us-east-1", aws.Credentials{AccessKeyID: "AKIAUNKNOWNKEY000000", SecretAccessKey: "x"})))

	role, err := sts.NewFromConfig(root).AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::" + minted + ":role/OrganizationAccountAccessRole"), RoleSessionName: aws.String("speedups")})
	if err != nil {
		t.Fatal(err)
	}
	c := role.Credentials
	inMinted := awsemu.Config(e.URL, "eu-west-1", aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey), SessionToken: aws.ToString(c.SessionToken)})
	record("the minted account's role: %s", who(inMinted))

	iam := awsiam.NewFromConfig(inMinted)
	pol, err := iam.GetPolicy(ctx, &awsiam.GetPolicyInput{PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")})
	if err != nil {
		record("AdministratorAccess: error %v", err)
	} else {
		record("AdministratorAccess: %s %s attachable %v", aws.ToString(pol.Policy.Arn), aws.ToString(pol.Policy.DefaultVersionId), pol.Policy.IsAttachable)
	}
	if _, err := iam.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("deploy"), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}`)}); err != nil {
		t.Fatal(err)
	}
	_, err = iam.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("deploy"), PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")})
	record("attach AdministratorAccess: %v", err)
	attached, err := iam.ListAttachedRolePolicies(ctx, &awsiam.ListAttachedRolePoliciesInput{RoleName: aws.String("deploy")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range attached.AttachedPolicies {
		record("attached: %s", aws.ToString(p.PolicyArn))
	}
	n := 0
	for pages := awsiam.NewListPoliciesPaginator(iam, &awsiam.ListPoliciesInput{Scope: iamtypes.PolicyScopeTypeAws}); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Policies)
	}
	record("AWS managed policies in the minted account: %d", n)
	return out
}
