// Package awsx implements the pipeline's AWS ports (pipeline.Cloud) with
// aws-sdk-go-v2: Organizations accounts and OUs, STS AssumeRole, IAM roles
// and S3 state buckets. It honours AWS_ENDPOINT_URL like every SDK client.
//
// Entry point: New.
package awsx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// Options tune a Client.
type Options struct {
	Region    string // the home region of global services' calls
	RequestID string // carried in the User-Agent of every call
	// AccountWait bounds the wait for an asynchronous CreateAccount, and
	// PollEvery spaces its DescribeCreateAccountStatus calls.
	AccountWait time.Duration
	PollEvery   time.Duration
	// MaxAttempts bounds the SDK's retries of throttling and 5xx answers
	// (AWS_MAX_ATTEMPTS, when set, wins).
	MaxAttempts int
}

// Client is a pipeline.Cloud over aws-sdk-go-v2.
type Client struct {
	cfg  aws.Config
	opts Options
}

var _ pipeline.Cloud = (*Client)(nil)

// New loads the default AWS configuration (environment, shared files).
func New(ctx context.Context, opts Options) (*Client, error) {
	if opts.AccountWait == 0 {
		opts.AccountWait = 15 * time.Minute
	}
	if opts.PollEvery == 0 {
		opts.PollEvery = 5 * time.Second
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 6
	}
	var loads []func(*config.LoadOptions) error
	if os.Getenv("AWS_MAX_ATTEMPTS") == "" {
		loads = append(loads, config.WithRetryMaxAttempts(opts.MaxAttempts))
	}
	if opts.Region != "" {
		loads = append(loads, config.WithRegion(opts.Region))
	}
	if opts.RequestID != "" {
		loads = append(loads, config.WithAppID("regionctl-"+opts.RequestID))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return &Client{cfg: cfg, opts: opts}, nil
}

// Config is the client's configuration with creds (zero: its own) and
// region (empty: its home region).
func (c *Client) Config(creds pipeline.Credentials, region string) aws.Config {
	cfg := c.cfg.Copy()
	if creds.AccessKeyID != "" {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken))
	}
	if region != "" {
		cfg.Region = region
	}
	return cfg
}

// Credentials resolves the client's own credentials, for signing calls to
// the platform API and for Terraform.
func (c *Client) Credentials(ctx context.Context) (pipeline.Credentials, error) {
	v, err := c.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return pipeline.Credentials{}, fmt.Errorf("resolving AWS credentials: %w", err)
	}
	return pipeline.Credentials{AccessKeyID: v.AccessKeyID, SecretAccessKey: v.SecretAccessKey, SessionToken: v.SessionToken, Expires: v.Expires}, nil
}

// AssumeRole calls sts:AssumeRole with the request's ExternalId, session
// name, session tags and session policy.
func (c *Client) AssumeRole(ctx context.Context, req pipeline.AssumeRequest) (pipeline.Credentials, error) {
	in := &sts.AssumeRoleInput{RoleArn: aws.String(req.RoleARN), RoleSessionName: aws.String(req.SessionName), DurationSeconds: aws.Int32(3600)}
	if req.ExternalID != "" {
		in.ExternalId = aws.String(req.ExternalID)
	}
	if req.Policy != "" {
		in.Policy = aws.String(req.Policy)
	}
	for _, k := range slices.Sorted(maps.Keys(req.Tags)) {
		in.Tags = append(in.Tags, ststag(k, req.Tags[k]))
	}
	out, err := sts.NewFromConfig(c.Config(req.Base, "")).AssumeRole(ctx, in)
	if err != nil {
		return pipeline.Credentials{}, fmt.Errorf("assuming %s: %w", req.RoleARN, denied(err))
	}
	cr := out.Credentials
	return pipeline.Credentials{AccessKeyID: aws.ToString(cr.AccessKeyId), SecretAccessKey: aws.ToString(cr.SecretAccessKey),
		SessionToken: aws.ToString(cr.SessionToken), Expires: aws.ToTime(cr.Expiration)}, nil
}

// Caller is who creds are.
func (c *Client) Caller(ctx context.Context, creds pipeline.Credentials) (pipeline.Identity, error) {
	out, err := sts.NewFromConfig(c.Config(creds, "")).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return pipeline.Identity{}, fmt.Errorf("sts:GetCallerIdentity: %w", err)
	}
	return pipeline.Identity{Account: aws.ToString(out.Account), ARN: aws.ToString(out.Arn)}, nil
}

// EnsureRole creates the role when it is missing and, either way, sets its
// trust policy and inline policy, so a role left half-made by a killed run
// is completed.
func (c *Client) EnsureRole(ctx context.Context, creds pipeline.Credentials, spec pipeline.RoleSpec) (bool, error) {
	client := iam.NewFromConfig(c.Config(creds, ""))
	created := false
	_, err := client.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(spec.Name)})
	switch {
	case err == nil:
		if err := c.SetTrust(ctx, creds, spec.Name, spec.TrustJSON); err != nil {
			return false, err
		}
	case code(err) == "NoSuchEntity":
		in := &iam.CreateRoleInput{RoleName: aws.String(spec.Name), AssumeRolePolicyDocument: aws.String(spec.TrustJSON)}
		for _, k := range slices.Sorted(maps.Keys(spec.Tags)) {
			in.Tags = append(in.Tags, iamtag(k, spec.Tags[k]))
		}
		if _, err := client.CreateRole(ctx, in); err != nil {
			return false, fmt.Errorf("creating %s: %w", spec.Name, denied(err))
		}
		created = true
	default:
		return false, fmt.Errorf("reading %s: %w", spec.Name, denied(err))
	}
	if spec.PolicyName != "" {
		if _, err := client.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(spec.Name), PolicyName: aws.String(spec.PolicyName),
			PolicyDocument: aws.String(spec.PolicyJSON)}); err != nil {
			return created, fmt.Errorf("the policy of %s: %w", spec.Name, denied(err))
		}
	}
	return created, nil
}

// SetTrust replaces a role's trust policy.
func (c *Client) SetTrust(ctx context.Context, creds pipeline.Credentials, role, document string) error {
	_, err := iam.NewFromConfig(c.Config(creds, "")).UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(role), PolicyDocument: aws.String(document)})
	if err != nil {
		return fmt.Errorf("updating the trust of %s: %w", role, denied(err))
	}
	return nil
}

// EnsurePolicy makes sure the managed policy name of creds' account holds
// document, adding a default version when it differs.
func (c *Client) EnsurePolicy(ctx context.Context, creds pipeline.Credentials, name, document string) (string, error) {
	client := iam.NewFromConfig(c.Config(creds, ""))
	me, err := c.Caller(ctx, creds)
	if err != nil {
		return "", err
	}
	arn := "arn:" + partitionOf(me.ARN) + ":iam::" + me.Account + ":policy/" + name
	got, err := client.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if code(err) == "NoSuchEntity" {
		if _, err := client.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String(name), PolicyDocument: aws.String(document)}); err != nil {
			return "", fmt.Errorf("creating the policy %s: %w", name, denied(err))
		}
		return arn, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the policy %s: %w", name, denied(err))
	}
	ver, err := client.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: got.Policy.DefaultVersionId})
	if err != nil {
		return "", fmt.Errorf("reading the policy %s: %w", name, denied(err))
	}
	if current, _ := url.QueryUnescape(aws.ToString(ver.PolicyVersion.Document)); sameJSON(current, document) {
		return arn, nil
	}
	versions, err := client.ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(arn)})
	if err != nil {
		return "", denied(err)
	}
	if len(versions.Versions) >= 5 { // IAM keeps five: drop the oldest non-default one
		for i := len(versions.Versions) - 1; i >= 0; i-- {
			if v := versions.Versions[i]; !v.IsDefaultVersion {
				if _, err := client.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: aws.String(arn), VersionId: v.VersionId}); err != nil {
					return "", denied(err)
				}
				break
			}
		}
	}
	if _, err := client.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: aws.String(arn), PolicyDocument: aws.String(document), SetAsDefault: true}); err != nil {
		return "", fmt.Errorf("updating the policy %s: %w", name, denied(err))
	}
	return arn, nil
}

func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

func partitionOf(arn string) string {
	if parts := strings.SplitN(arn, ":", 3); len(parts) == 3 {
		return parts[1]
	}
	return "aws"
}

// Parameter reads an SSM parameter; pipeline.ErrNotFound when absent.
func (c *Client) Parameter(ctx context.Context, creds pipeline.Credentials, name string) (string, error) {
	out, err := ssm.NewFromConfig(c.Config(creds, "")).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
	if code(err) == "ParameterNotFound" {
		return "", pipeline.ErrNotFound
	}
	if err != nil {
		return "", denied(err)
	}
	return aws.ToString(out.Parameter.Value), nil
}

// code is the AWS error code of err, or "".
func code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// denied wraps an AWS access denial in pipeline.ErrDenied, keeping AWS's
// own message.
func denied(err error) error {
	switch code(err) {
	case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation":
		return fmt.Errorf("%w: %w", pipeline.ErrDenied, err)
	}
	return err
}

func (c *Client) orgs(creds pipeline.Credentials) *organizations.Client {
	return organizations.NewFromConfig(c.Config(creds, ""))
}

func (c *Client) s3(creds pipeline.Credentials, region string) *s3.Client {
	return s3.NewFromConfig(c.Config(creds, region), func(o *s3.Options) {
		o.UsePathStyle = pathStyle()
		o.DisableLogOutputChecksumValidationSkipped = true
	})
}
