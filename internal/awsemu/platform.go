package awsemu

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/render/iam"
)

// Platform is what a platform's organisation administrators set up once,
// before the central pipeline first runs: the organisation (its
// management account is DefaultAccount), the central cluster's OIDC
// issuer as an IAM identity provider, and the central pipeline's role,
// trusted by the central cluster's Tekton ServiceAccount and holding the
// policy regionctl renders (deploy/central/<partition>/iam/); and the role
// its approvers sign in as (the example fleet's gitops.approvers), which
// may assume the regions' approver roles.
type Platform struct {
	Gate        *Gate
	CentralRole string // ARN
	// Approvers is the approvers' sign-in role (ARN), and Admins the
	// platform administrators': single sign-on roles (Gate.SignIn).
	Approvers, Admins string
	// CentralIssuer is the central cluster's OIDC issuer (https://...).
	CentralIssuer string
	Namespace     string // of the pipelines' ServiceAccounts
}

// SetupPlatform makes the Platform through the gate, as the management
// account's root user.
func SetupPlatform(ctx context.Context, g *Gate, centralPolicy []byte, namespace string) (*Platform, error) {
	root := Config(g.URL, "us-east-1", aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey})
	if _, err := organizations.NewFromConfig(root).CreateOrganization(ctx, &organizations.CreateOrganizationInput{FeatureSet: orgtypes.OrganizationFeatureSetAll}); err != nil {
		return nil, fmt.Errorf("creating the organisation: %w", err)
	}
	p := &Platform{Gate: g, CentralIssuer: "https://oidc.eks.us-east-1.amazonaws.com/id/CENTRAL", Namespace: namespace,
		CentralRole: iam.RoleARN("aws", DefaultAccount, iam.CentralPipelineRole)}
	provider, err := OIDCProvider(ctx, root, p.CentralIssuer)
	if err != nil {
		return nil, err
	}
	trust, _ := json.Marshal(iam.Document{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow",
		Principal: &iam.Principal{Federated: iam.Strings{provider}}, Action: iam.Strings{"sts:AssumeRoleWithWebIdentity"},
		Condition: map[string]map[string]iam.Strings{"StringEquals": {issuerKey(p.CentralIssuer) + ":sub": {serviceAccount(namespace, iam.CentralServiceAccount)}}}}}})
	client := awsiam.NewFromConfig(root)
	if _, err := client.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String(iam.CentralPipelineRole), AssumeRolePolicyDocument: aws.String(string(trust))}); err != nil {
		return nil, fmt.Errorf("creating the central pipeline's role: %w", err)
	}
	if _, err := client.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String(iam.CentralPipelineRole), PolicyName: aws.String(iam.CentralPipelineRole),
		PolicyDocument: aws.String(string(centralPolicy))}); err != nil {
		return nil, fmt.Errorf("the central pipeline's policy: %w", err)
	}
	// People sign in through the organisation's identity provider (a SAML
	// provider of the management account): approvers to their role, the
	// platform's administrators to theirs. The root user signs in to
	// nothing and assumes no role (AWS refuses it).
	saml := "arn:aws:iam::" + DefaultAccount + ":saml-provider/platform-sso"
	signIn, _ := json.Marshal(iam.Document{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow",
		Principal: &iam.Principal{Federated: iam.Strings{saml}}, Action: iam.Strings{"sts:AssumeRoleWithSAML"},
		Condition: map[string]map[string]iam.Strings{"StringEquals": {"SAML:aud": {"https://signin.aws.amazon.com/saml"}}}}}})
	p.Approvers = iam.RoleARN("aws", DefaultAccount, ApproversRole)
	p.Admins = iam.RoleARN("aws", DefaultAccount, AdminsRole)
	for _, r := range []struct{ name, policy string }{
		{ApproversRole, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sts:AssumeRole","Resource":"arn:aws:iam::*:role/regionctl-approver-*"}]}`},
		{AdminsRole, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sts:AssumeRole","Resource":"arn:aws:iam::*:role/` + iam.AccessRole + `"}]}`},
	} {
		if _, err := client.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String(r.name), AssumeRolePolicyDocument: aws.String(string(signIn))}); err != nil {
			return nil, fmt.Errorf("creating the role %s: %w", r.name, err)
		}
		if _, err := client.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String(r.name), PolicyName: aws.String(r.name), PolicyDocument: aws.String(r.policy)}); err != nil {
			return nil, fmt.Errorf("the policy of %s: %w", r.name, err)
		}
	}
	return p, nil
}

// AdminsRole is the platform administrators' sign-in role in the
// management account: it may reach accounts through their AccessRole.
const AdminsRole = "platform-admins"

// ApproversRole is the approvers' sign-in role in the management account,
// as the example fleet's gitops.approvers names it.
const ApproversRole = "platform-approvers"

// Approver is an approver signed in (the approvers' role), then in the
// approver role of region in account (the regional account, or the
// management account for the regional cluster's states), through the gate.
func (p *Platform) Approver(ctx context.Context, region, account string) (aws.Config, error) {
	hop := func(cfg aws.Config, role string) (aws.Config, error) {
		out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("approver")})
		if err != nil {
			return aws.Config{}, fmt.Errorf("assuming %s: %w", role, err)
		}
		c := out.Credentials
		return Config(p.Gate.URL, region, aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey),
			SessionToken: aws.ToString(c.SessionToken)}), nil
	}
	creds, err := p.Gate.SignIn(ctx, p.Approvers, "approver")
	if err != nil {
		return aws.Config{}, err
	}
	signedIn := Config(p.Gate.URL, region, creds)
	return hop(signedIn, iam.RoleARN("aws", account, iam.ApproverRoleName(region)))
}

// OIDCProvider registers an OIDC issuer (https://...) as an IAM identity
// provider of cfg's account and returns its ARN, as the EKS module of the
// regional cluster does for its own issuer.
func OIDCProvider(ctx context.Context, cfg aws.Config, issuer string) (string, error) {
	out, err := awsiam.NewFromConfig(cfg).CreateOpenIDConnectProvider(ctx, &awsiam.CreateOpenIDConnectProviderInput{Url: aws.String(issuer),
		ClientIDList: []string{"sts.amazonaws.com"}, ThumbprintList: []string{"9e99a48a9960b14926bb7f3b02e22da2b0ab7280"}})
	if err != nil {
		return "", fmt.Errorf("registering the OIDC issuer %s: %w", issuer, err)
	}
	return aws.ToString(out.OpenIDConnectProviderArn), nil
}

// InAccount is a platform administrator acting in account through its
// AccessRole, signed in and assumed through the gate.
func (p *Platform) InAccount(ctx context.Context, account string) (aws.Config, error) {
	creds, err := p.Gate.SignIn(ctx, p.Admins, "platform-admin")
	if err != nil {
		return aws.Config{}, err
	}
	out, err := sts.NewFromConfig(Config(p.Gate.URL, "us-east-1", creds)).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(iam.RoleARN("aws", account, iam.AccessRole)),
		RoleSessionName: aws.String("platform-admin")})
	if err != nil {
		return aws.Config{}, err
	}
	c := out.Credentials
	return Config(p.Gate.URL, "us-east-1", aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey),
		SessionToken: aws.ToString(c.SessionToken)}), nil
}

// IRSA is the environment of a process that runs as a ServiceAccount's
// pod with an IAM role (EKS IRSA): the SDKs and Terraform exchange the
// token for the role's credentials through AssumeRoleWithWebIdentity, sent
// to endpoint (the SDK's web identity provider reads only the
// service-specific AWS_ENDPOINT_URL_STS). The token is written into dir.
// The gate reads its claims; it does not check its signature, there being
// no issuer to ask.
func IRSA(dir, endpoint, roleARN, issuer, namespace, sa string) (map[string]string, error) {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"regionctl-test"}`))
	claims, _ := json.Marshal(map[string]any{"iss": issuer, "sub": serviceAccount(namespace, sa), "aud": []string{"sts.amazonaws.com"}})
	token := header + "." + base64.RawURLEncoding.EncodeToString(claims) + ".unsigned"
	path := filepath.Join(dir, sa+".token")
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		return nil, err
	}
	return map[string]string{"AWS_ROLE_ARN": roleARN, "AWS_WEB_IDENTITY_TOKEN_FILE": path, "AWS_ROLE_SESSION_NAME": sa, "AWS_ENDPOINT_URL_STS": endpoint,
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": ""}, nil
}

func serviceAccount(namespace, sa string) string {
	return "system:serviceaccount:" + namespace + ":" + sa
}

func issuerKey(issuer string) string { return issuer[len("https://"):] }

// WebIdentity is cfg holding a role through IRSA as the pod of a
// ServiceAccount would: AssumeRoleWithWebIdentity with its token, through
// the gate at endpoint. Tests use it to act as a pipeline directly.
func WebIdentity(ctx context.Context, endpoint, region, roleARN, issuer, namespace, sa string) (aws.Config, error) {
	dir, err := os.MkdirTemp("", "regionctl-token-")
	if err != nil {
		return aws.Config{}, err
	}
	defer os.RemoveAll(dir)
	env, err := IRSA(dir, endpoint, roleARN, issuer, namespace, sa)
	if err != nil {
		return aws.Config{}, err
	}
	token, err := os.ReadFile(env["AWS_WEB_IDENTITY_TOKEN_FILE"])
	if err != nil {
		return aws.Config{}, err
	}
	anon := sts.NewFromConfig(Config(endpoint, region, aws.Credentials{}), func(o *sts.Options) { o.Credentials = aws.AnonymousCredentials{} })
	out, err := anon.AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String(sa),
		WebIdentityToken: aws.String(string(token))})
	if err != nil {
		return aws.Config{}, err
	}
	c := out.Credentials
	return Config(endpoint, region, aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey),
		SessionToken: aws.ToString(c.SessionToken)}), nil
}
