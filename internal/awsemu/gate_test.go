package awsemu_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/aws/smithy-go"

	"github.com/regionctl/regionctl/internal/awsemu"
)

var shared *awsemu.Emulator

func TestMain(m *testing.M) {
	code := func() int {
		if _, err := exec.LookPath("moto_server"); err == nil {
			var err error
			if shared, err = awsemu.Start(context.Background(), ""); err != nil {
				panic(err)
			}
			defer shared.Stop()
		}
		return m.Run()
	}()
	os.Exit(code)
}

// gate resets the package's emulator and puts a gate in front of it.
func gate(t *testing.T) *awsemu.Gate {
	t.Helper()
	if shared == nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" {
			t.Fatal("moto_server is required here")
		}
		t.Skip("skipping: no moto_server on PATH")
	}
	if err := shared.Reset(); err != nil {
		t.Fatal(err)
	}
	g, err := awsemu.StartGate(shared.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func cfgFor(t *testing.T, endpoint, region string, creds aws.Credentials) aws.Config {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(region), config.WithBaseEndpoint(endpoint),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken)),
		config.WithRetryMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// must fails the test on the error of a call: must(t)(client.Call(...)).
func must(t *testing.T) func(any, error) any {
	return func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// denied asserts err is AWS's answer code.
func denied(t *testing.T, what string, err error, code string) {
	t.Helper()
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != code {
		t.Errorf("%s: got %v, want the error code %s", what, err, code)
	}
}

func doc(statements ...map[string]any) *string {
	b, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": statements})
	return aws.String(string(b))
}

func sessionOf(t *testing.T, out *sts.AssumeRoleOutput) aws.Credentials {
	t.Helper()
	return aws.Credentials{AccessKeyID: aws.ToString(out.Credentials.AccessKeyId), SecretAccessKey: aws.ToString(out.Credentials.SecretAccessKey),
		SessionToken: aws.ToString(out.Credentials.SessionToken)}
}

// TestGateDecidesAsAWS drives the emulator through the gate with the AWS
// SDK and shows the decisions AWS would make: identity policies, trust
// policies (AssumeRole and TagSession), Organizations' management-account
// rule, cross-account bucket access, the expected bucket owner, web
// identities, and signatures; each denial arriving as the SDK error AWS
// sends.
func TestGateDecidesAsAWS(t *testing.T) {
	g := gate(t)
	ctx := context.Background()
	root := cfgFor(t, g.URL, "us-east-1", aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey})
	must(t)(organizations.NewFromConfig(root).CreateOrganization(ctx, &organizations.CreateOrganizationInput{FeatureSet: orgtypes.OrganizationFeatureSetAll}))

	// A role of the management account that may only list buckets.
	rootTrust := doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + awsemu.DefaultAccount + ":root"}, "Action": "sts:AssumeRole"})
	rootIAM := awsiam.NewFromConfig(root)
	must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("reader"), AssumeRolePolicyDocument: rootTrust}))
	must(t)(rootIAM.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String("reader"), PolicyName: aws.String("p"),
		PolicyDocument: doc(map[string]any{"Effect": "Allow", "Action": []string{"s3:ListAllMyBuckets", "s3:GetObject", "sts:AssumeRole"}, "Resource": "*"})}))
	reader := "arn:aws:iam::" + awsemu.DefaultAccount + ":role/reader"
	// The root user assumes no role (STS API Reference, AssumeRole); a
	// person signed in to an operator role does.
	_, err := sts.NewFromConfig(root).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(reader), RoleSessionName: aws.String("s0")})
	denied(t, "the root user assuming a role", err, "AccessDenied")
	must(t)(rootIAM.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("operator"), AssumeRolePolicyDocument: rootTrust}))
	must(t)(rootIAM.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String("operator"), PolicyName: aws.String("p"),
		PolicyDocument: doc(map[string]any{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"})}))
	operator, err := g.SignIn(ctx, "arn:aws:iam::"+awsemu.DefaultAccount+":role/operator", "test")
	if err != nil {
		t.Fatal(err)
	}
	stsRoot := sts.NewFromConfig(cfgFor(t, g.URL, "us-east-1", operator))
	sess := cfgFor(t, g.URL, "us-east-1", sessionOf(t, must(t)(stsRoot.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(reader), RoleSessionName: aws.String("s1")})).(*sts.AssumeRoleOutput)))

	must(t)(s3.NewFromConfig(sess, func(o *s3.Options) { o.UsePathStyle = true }).ListBuckets(ctx, &s3.ListBucketsInput{}))
	_, err = awsiam.NewFromConfig(sess).ListRoles(ctx, &awsiam.ListRolesInput{})
	denied(t, "a session without iam:ListRoles", err, "AccessDenied")

	// Session tags need sts:TagSession in the trust policy.
	_, err = stsRoot.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(reader), RoleSessionName: aws.String("s2"),
		Tags: []ststypes.Tag{{Key: aws.String("team"), Value: aws.String("a")}}})
	denied(t, "session tags the trust does not allow", err, "AccessDenied")
	_, err = stsRoot.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::" + awsemu.DefaultAccount + ":role/none"), RoleSessionName: aws.String("s3")})
	denied(t, "a role that does not exist", err, "AccessDenied")

	// A member account: Organizations answers only the management account.
	orgs := organizations.NewFromConfig(root)
	created := must(t)(orgs.CreateAccount(ctx, &organizations.CreateAccountInput{AccountName: aws.String("member"), Email: aws.String("m@example.com")})).(*organizations.CreateAccountOutput)
	member := aws.ToString(created.CreateAccountStatus.AccountId)
	access := "arn:aws:iam::" + member + ":role/OrganizationAccountAccessRole"
	admin := cfgFor(t, g.URL, "us-east-1", sessionOf(t, must(t)(stsRoot.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(access), RoleSessionName: aws.String("admin")})).(*sts.AssumeRoleOutput)))
	must(t)(awsiam.NewFromConfig(admin).ListRoles(ctx, &awsiam.ListRolesInput{})) // AdministratorAccess, as AWS gives it
	_, err = organizations.NewFromConfig(admin).ListAccounts(ctx, &organizations.ListAccountsInput{})
	denied(t, "ListAccounts from a member account", err, "AccessDeniedException")
	_, err = sts.NewFromConfig(sess).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(access), RoleSessionName: aws.String("x")})
	if err != nil {
		t.Errorf("a role of the management account allowed sts:AssumeRole cannot assume a member's access role: %v", err)
	}

	// Cross-account S3: the member's bucket, read by the management
	// account's reader, needs the bucket's policy to allow it.
	s3m := s3.NewFromConfig(admin, func(o *s3.Options) { o.UsePathStyle = true })
	must(t)(s3m.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("member-bucket")}))
	must(t)(s3m.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("member-bucket"), Key: aws.String("k"), Body: strings.NewReader("v")}))
	s3r := s3.NewFromConfig(sess, func(o *s3.Options) { o.UsePathStyle = true })
	_, err = s3r.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("member-bucket"), Key: aws.String("k")})
	denied(t, "a cross-account read without a bucket policy", err, "AccessDenied")
	must(t)(s3m.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("member-bucket"), Policy: doc(map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"AWS": reader}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::member-bucket/*"})}))
	must(t)(s3r.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("member-bucket"), Key: aws.String("k")}))
	_, err = s3r.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("member-bucket"), Key: aws.String("k"), ExpectedBucketOwner: aws.String(awsemu.DefaultAccount)})
	denied(t, "a bucket of another owner than expected", err, "AccessDenied")

	// Public access: an unsigned request is allowed only by a bucket policy
	// granting "*", and not at all once the bucket's public access block
	// restricts public buckets.
	anonymous := func(method, path string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, g.URL+path, strings.NewReader(""))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := anonymous("GET", "/member-bucket/k"); c != http.StatusForbidden {
		t.Errorf("an anonymous read under a policy naming one role: %d", c)
	}
	must(t)(s3m.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("member-bucket"), Policy: doc(map[string]any{
		"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::member-bucket/*"})}))
	if c := anonymous("GET", "/member-bucket/k"); c != http.StatusOK {
		t.Errorf("an anonymous read under a policy granting it to *: %d", c)
	}
	if c := anonymous("PUT", "/member-bucket/forged"); c != http.StatusForbidden {
		t.Errorf("an anonymous write under a policy granting only reads: %d", c)
	}
	must(t)(s3m.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("member-bucket"),
		PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{RestrictPublicBuckets: aws.Bool(true)}}))
	if c := anonymous("GET", "/member-bucket/k"); c != http.StatusForbidden {
		t.Errorf("an anonymous read of a bucket that restricts public buckets: %d", c)
	}
	// With BlockPublicPolicy S3 refuses a public policy, even of the
	// bucket's owner, and takes one that is not public.
	must(t)(s3m.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("member-bucket"),
		PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{RestrictPublicBuckets: aws.Bool(true), BlockPublicPolicy: aws.Bool(true)}}))
	_, err = s3m.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("member-bucket"), Policy: doc(map[string]any{
		"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::member-bucket/*"})})
	denied(t, "a public policy of a bucket that blocks them", err, "AccessDenied")
	must(t)(s3m.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("member-bucket"), Policy: doc(map[string]any{
		"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::member-bucket/*",
		"Condition": map[string]any{"StringEquals": map[string]any{"aws:PrincipalOrgID": "o-exampleorg"}}})}))

	// A web identity: the member's OIDC provider and a role trusting one
	// ServiceAccount of it.
	issuer := "oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE"
	iamm := awsiam.NewFromConfig(admin)
	must(t)(iamm.CreateOpenIDConnectProvider(ctx, &awsiam.CreateOpenIDConnectProviderInput{Url: aws.String("https://" + issuer), ClientIDList: []string{"sts.amazonaws.com"},
		ThumbprintList: []string{strings.Repeat("a", 40)}}))
	must(t)(iamm.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("pod"), AssumeRolePolicyDocument: doc(map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"Federated": "arn:aws:iam::" + member + ":oidc-provider/" + issuer},
		"Action": "sts:AssumeRoleWithWebIdentity", "Condition": map[string]any{"StringEquals": map[string]any{issuer + ":sub": "system:serviceaccount:ns:sa"}}})}))
	token := func(sub string) string {
		claims, _ := json.Marshal(map[string]any{"iss": "https://" + issuer, "sub": sub, "aud": "sts.amazonaws.com"})
		return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(claims) + ".sig"
	}
	anon := sts.NewFromConfig(cfgFor(t, g.URL, "us-east-1", aws.Credentials{}), func(o *sts.Options) { o.Credentials = aws.AnonymousCredentials{} })
	must(t)(anon.AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{RoleArn: aws.String("arn:aws:iam::" + member + ":role/pod"),
		RoleSessionName: aws.String("pod"), WebIdentityToken: aws.String(token("system:serviceaccount:ns:sa"))}))
	_, err = anon.AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{RoleArn: aws.String("arn:aws:iam::" + member + ":role/pod"),
		RoleSessionName: aws.String("pod"), WebIdentityToken: aws.String(token("system:serviceaccount:ns:other"))})
	denied(t, "another ServiceAccount's token", err, "AccessDenied")

	// A forged signature is refused.
	forged := cfgFor(t, g.URL, "us-east-1", aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: "wrong"})
	_, err = sts.NewFromConfig(forged).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	denied(t, "a forged signature", err, "SignatureDoesNotMatch")

	var deny []string
	for _, e := range g.Ledger().Entries() {
		if e.Decision == "deny" {
			deny = append(deny, e.Action+" "+e.Principal)
		}
	}
	t.Logf("ledger:\n%s", awsemu.Summary(g.Ledger().Entries()))
	if len(deny) != 12 {
		t.Errorf("%d denials in the ledger, want 12: %v", len(deny), deny)
	}
}
