package awsx

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// TestSDKWarningsGoToTheRunLog: a warning of the SDK's own (here S3's
// "no supported checksum", on an answer without one) is written to the
// run's log, not to standard error where it breaks into the progress.
func TestSDKWarningsGoToTheRunLog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	var log bytes.Buffer
	c, err := New(context.Background(), Options{Region: "us-east-1", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	client := s3.NewFromConfig(c.Config(pipeline.Credentials{}, ""), func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(srv.URL), true
	})
	out, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(out.Body)
	out.Body.Close()
	if !strings.Contains(log.String(), "aws-sdk-go-v2 DEBUG: Response has no supported checksum") {
		t.Errorf("the run's log holds %q; want the SDK's checksum warning", log.String())
	}
}
