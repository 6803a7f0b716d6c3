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
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

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
	// Log receives the SDK's own warnings (a retry it gave up on, a
	// checksum it could not validate), with the run's Terraform output,
	// rather than standard error, where they would break into the
	// pipeline's progress. Nil keeps the SDK's default (standard error).
	Log io.Writer
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
	if opts.Log != nil {
		cfg.Logger = logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
			fmt.Fprintf(opts.Log, "aws-sdk-go-v2 %s: %s\n", c, fmt.Sprintf(format, v...))
		})
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
