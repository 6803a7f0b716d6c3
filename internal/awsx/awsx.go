// Package awsx implements the pipeline's AWS ports (pipeline.Cloud) with
// aws-sdk-go-v2: Organizations accounts and OUs, STS AssumeRole, IAM roles
// and S3 state buckets. It honours AWS_ENDPOINT_URL like every SDK client.
//
// Entry point: New.
package awsx

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

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
// name and session tags.
func (c *Client) AssumeRole(ctx context.Context, req pipeline.AssumeRequest) (pipeline.Credentials, error) {
	in := &sts.AssumeRoleInput{RoleArn: aws.String(req.RoleARN), RoleSessionName: aws.String(req.SessionName), DurationSeconds: aws.Int32(3600)}
	if req.ExternalID != "" {
		in.ExternalId = aws.String(req.ExternalID)
	}
	for _, k := range slices.Sorted(maps.Keys(req.Tags)) {
		in.Tags = append(in.Tags, ststag(k, req.Tags[k]))
	}
	out, err := sts.NewFromConfig(c.Config(req.Base, "")).AssumeRole(ctx, in)
	if err != nil {
		return pipeline.Credentials{}, fmt.Errorf("assuming %s: %w", req.RoleARN, err)
	}
	cr := out.Credentials
	return pipeline.Credentials{AccessKeyID: aws.ToString(cr.AccessKeyId), SecretAccessKey: aws.ToString(cr.SecretAccessKey),
		SessionToken: aws.ToString(cr.SessionToken), Expires: aws.ToTime(cr.Expiration)}, nil
}

// CallerAccount is the account of creds.
func (c *Client) CallerAccount(ctx context.Context, creds pipeline.Credentials) (string, error) {
	out, err := sts.NewFromConfig(c.Config(creds, "")).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", fmt.Errorf("sts:GetCallerIdentity: %w", err)
	}
	return aws.ToString(out.Account), nil
}

// EnsureRole creates the role when it is missing and, either way, sets its
// trust policy and attaches its policies, so a role left half-made by a
// killed run is completed.
func (c *Client) EnsureRole(ctx context.Context, creds pipeline.Credentials, spec pipeline.RoleSpec) (bool, error) {
	client := iam.NewFromConfig(c.Config(creds, ""))
	created := false
	_, err := client.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(spec.Name)})
	var missing interface{ ErrorCode() string }
	switch {
	case err == nil:
		if _, err := client.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(spec.Name), PolicyDocument: aws.String(spec.TrustJSON)}); err != nil {
			return false, fmt.Errorf("updating the trust of %s: %w", spec.Name, err)
		}
	case errors.As(err, &missing) && missing.ErrorCode() == "NoSuchEntity":
		in := &iam.CreateRoleInput{RoleName: aws.String(spec.Name), AssumeRolePolicyDocument: aws.String(spec.TrustJSON)}
		for _, k := range slices.Sorted(maps.Keys(spec.Tags)) {
			in.Tags = append(in.Tags, iamtag(k, spec.Tags[k]))
		}
		if _, err := client.CreateRole(ctx, in); err != nil {
			return false, fmt.Errorf("creating %s: %w", spec.Name, err)
		}
		created = true
	default:
		return false, fmt.Errorf("reading %s: %w", spec.Name, err)
	}
	for _, arn := range spec.Policies {
		if _, err := client.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(spec.Name), PolicyArn: aws.String(arn)}); err != nil {
			return created, fmt.Errorf("attaching %s to %s: %w", arn, spec.Name, err)
		}
	}
	return created, nil
}

func (c *Client) orgs() *organizations.Client {
	return organizations.NewFromConfig(c.Config(pipeline.Credentials{}, ""))
}

func (c *Client) s3(creds pipeline.Credentials, region string) *s3.Client {
	return s3.NewFromConfig(c.Config(creds, region), func(o *s3.Options) {
		o.UsePathStyle = pathStyle()
		o.DisableLogOutputChecksumValidationSkipped = true
	})
}
