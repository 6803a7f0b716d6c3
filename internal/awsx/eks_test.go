package awsx_test

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/regionctl/regionctl/internal/awsx"
)

// The token is what EKS's authenticator takes: a presigned
// sts:GetCallerIdentity whose signature covers the cluster's name.
func TestEKSTokenIsAPresignedCallerIdentityOfTheCluster(t *testing.T) {
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "session")}
	tok, err := awsx.EKSToken(context.Background(), cfg, "mc01")
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := strings.CutPrefix(tok, "k8s-aws-v1.")
	if !ok || strings.ContainsAny(raw, "=+/") {
		t.Fatalf("token %q is not k8s-aws-v1. and unpadded base64url", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "https" || !strings.HasPrefix(u.Host, "sts.") || q.Get("Action") != "GetCallerIdentity" || q.Get("X-Amz-Expires") != "60" ||
		q.Get("X-Amz-Security-Token") != "session" || !strings.HasPrefix(q.Get("X-Amz-Credential"), "AKIDEXAMPLE/") {
		t.Errorf("presigned %s", u)
	}
	if signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";"); !contains(signed, "x-k8s-aws-id") || !contains(signed, "host") || q.Get("X-Amz-Signature") == "" {
		t.Errorf("signed headers %v: the cluster's name must be signed", signed)
	}
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}
