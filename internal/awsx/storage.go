package awsx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// EnsureBucket creates a versioned, private state bucket when it is
// missing; an existing bucket must belong to owner (a bucket of that name
// in another account is refused, never used).
func (c *Client) EnsureBucket(ctx context.Context, creds pipeline.Credentials, bucket, region, owner string) (bool, error) {
	client := c.s3(creds, region)
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket), ExpectedBucketOwner: aws.String(owner)})
	switch {
	case err == nil:
		return false, nil
	case code(err) == "Forbidden" || code(err) == "AccessDenied" || code(err) == "403":
		return false, fmt.Errorf("the bucket %s exists but not as one of account %s that this identity may use: %w", bucket, owner, denied(err))
	case !notFound(err):
		return false, fmt.Errorf("looking for the bucket %s: %w", bucket, err)
	}
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
	if region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
	}
	created := true
	if _, err := client.CreateBucket(ctx, in); err != nil {
		var owned *s3types.BucketAlreadyOwnedByYou
		if !errors.As(err, &owned) {
			return false, fmt.Errorf("creating the bucket %s: %w", bucket, denied(err))
		}
		created = false
	}
	if _, err := client.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String(bucket), ExpectedBucketOwner: aws.String(owner),
		PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true),
			IgnorePublicAcls: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true)}}); err != nil {
		return created, fmt.Errorf("blocking public access to %s: %w", bucket, denied(err))
	}
	if _, err := client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket), ExpectedBucketOwner: aws.String(owner),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
		return created, fmt.Errorf("turning on versioning of %s: %w", bucket, denied(err))
	}
	return created, nil
}

// CheckBucket fails unless bucket exists and belongs to owner.
func (c *Client) CheckBucket(ctx context.Context, creds pipeline.Credentials, bucket, owner string) error {
	_, err := c.s3(creds, "").HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket), ExpectedBucketOwner: aws.String(owner)})
	switch {
	case err == nil:
		return nil
	case notFound(err):
		return fmt.Errorf("no bucket %s: %w", bucket, pipeline.ErrNotFound)
	}
	return fmt.Errorf("the bucket %s is not one of account %s this identity may use: %w", bucket, owner, denied(err))
}

// PutIfAbsent writes the object only when it does not exist (If-None-Match: *).
func (c *Client) PutIfAbsent(ctx context.Context, creds pipeline.Credentials, o pipeline.Object, body []byte) error {
	_, err := c.s3(creds, "").PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key), Body: bytes.NewReader(body),
		IfNoneMatch: aws.String("*"), ExpectedBucketOwner: owner(o)})
	switch code(err) {
	case "PreconditionFailed", "ConditionalRequestConflict":
		return pipeline.ErrExists
	}
	return denied(err)
}

// Put writes an object, replacing it.
func (c *Client) Put(ctx context.Context, creds pipeline.Credentials, o pipeline.Object, body []byte) error {
	_, err := c.s3(creds, "").PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key), Body: bytes.NewReader(body),
		ExpectedBucketOwner: owner(o)})
	return denied(err)
}

// Get reads an object; pipeline.ErrNotFound when it is absent.
func (c *Client) Get(ctx context.Context, creds pipeline.Credentials, o pipeline.Object) ([]byte, error) {
	out, err := c.s3(creds, "").GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key), ExpectedBucketOwner: owner(o)})
	if err != nil {
		if notFound(err) {
			return nil, pipeline.ErrNotFound
		}
		return nil, denied(err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// Delete removes an object; a missing one is not an error.
func (c *Client) Delete(ctx context.Context, creds pipeline.Credentials, o pipeline.Object) error {
	_, err := c.s3(creds, "").DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key), ExpectedBucketOwner: owner(o)})
	if err != nil && !notFound(err) {
		return denied(err)
	}
	return nil
}

// GetVersion reads an object and its ETag.
func (c *Client) GetVersion(ctx context.Context, creds pipeline.Credentials, o pipeline.Object) ([]byte, string, error) {
	out, err := c.s3(creds, "").GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key), ExpectedBucketOwner: owner(o)})
	if err != nil {
		if notFound(err) {
			return nil, "", pipeline.ErrNotFound
		}
		return nil, "", denied(err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", err
	}
	if out.ETag == nil || *out.ETag == "" {
		return nil, "", fmt.Errorf("%s has no ETag: a conditional write cannot follow", o)
	}
	return body, *out.ETag, nil
}

// PutIfMatch replaces an object only while its ETag is etag (If-Match).
func (c *Client) PutIfMatch(ctx context.Context, creds pipeline.Credentials, o pipeline.Object, body []byte, etag string) (string, error) {
	out, err := c.s3(creds, "").PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key), Body: bytes.NewReader(body),
		IfMatch: aws.String(etag), ExpectedBucketOwner: owner(o)})
	if err != nil {
		return "", conditional(err)
	}
	return aws.ToString(out.ETag), nil
}

// DeleteIfMatch removes an object only while its ETag is etag (If-Match).
func (c *Client) DeleteIfMatch(ctx context.Context, creds pipeline.Credentials, o pipeline.Object, etag string) error {
	_, err := c.s3(creds, "").DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key),
		IfMatch: aws.String(etag), ExpectedBucketOwner: owner(o)})
	return conditional(err)
}

// conditional maps the answers of a conditional write.
func conditional(err error) error {
	if err == nil {
		return nil
	}
	switch code(err) {
	case "PreconditionFailed", "ConditionalRequestConflict":
		return pipeline.ErrChanged
	}
	if notFound(err) {
		return pipeline.ErrNotFound
	}
	return denied(err)
}

func owner(o pipeline.Object) *string {
	if o.Owner == "" {
		return nil
	}
	return aws.String(o.Owner)
}

func notFound(err error) bool {
	switch code(err) {
	case "NotFound", "NoSuchKey", "NoSuchBucket", "404":
		return true
	}
	var nsk *s3types.NoSuchKey
	var nf *s3types.NotFound
	return errors.As(err, &nsk) || errors.As(err, &nf)
}

// pathStyle is true when AWS_ENDPOINT_URL points at a host that cannot
// serve virtual-hosted buckets: an IP address or localhost, as an emulator.
func pathStyle() bool {
	u, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil || u.Host == "" {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || net.ParseIP(h) != nil
}

func ststag(k, v string) ststypes.Tag { return ststypes.Tag{Key: aws.String(k), Value: aws.String(v)} }
func iamtag(k, v string) iamtypes.Tag { return iamtypes.Tag{Key: aws.String(k), Value: aws.String(v)} }
