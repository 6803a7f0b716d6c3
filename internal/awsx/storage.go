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
	"github.com/aws/smithy-go"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// EnsureBucket creates a versioned state bucket when it is missing.
func (c *Client) EnsureBucket(ctx context.Context, creds pipeline.Credentials, bucket, region string) (bool, error) {
	client := c.s3(creds, region)
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err == nil {
		return false, nil
	} else if !notFound(err) {
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
			return false, fmt.Errorf("creating the bucket %s: %w", bucket, err)
		}
		created = false
	}
	if _, err := client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
		return created, fmt.Errorf("turning on versioning of %s: %w", bucket, err)
	}
	return created, nil
}

// PutIfAbsent writes key only when it does not exist (If-None-Match: *).
func (c *Client) PutIfAbsent(ctx context.Context, creds pipeline.Credentials, bucket, key string, body []byte) error {
	_, err := c.s3(creds, "").PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body), IfNoneMatch: aws.String("*")})
	var api smithy.APIError
	if errors.As(err, &api) && (api.ErrorCode() == "PreconditionFailed" || api.ErrorCode() == "ConditionalRequestConflict") {
		return pipeline.ErrExists
	}
	return err
}

// Get reads an object; pipeline.ErrNotFound when it is absent.
func (c *Client) Get(ctx context.Context, creds pipeline.Credentials, bucket, key string) ([]byte, error) {
	out, err := c.s3(creds, "").GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		if notFound(err) {
			return nil, pipeline.ErrNotFound
		}
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// Delete removes an object; a missing one is not an error.
func (c *Client) Delete(ctx context.Context, creds pipeline.Credentials, bucket, key string) error {
	_, err := c.s3(creds, "").DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil && !notFound(err) {
		return err
	}
	return nil
}

func notFound(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NotFound", "NoSuchKey", "NoSuchBucket", "404":
			return true
		}
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
