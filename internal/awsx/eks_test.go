package awsx_test

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

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

// A token is used while it is young and made anew before it expires, so
// that an install longer than a token's minute keeps its access.
func TestEKSTokenSourceRenewsBeforeExpiry(t *testing.T) {
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	src := awsx.EKSTokenSource(cfg, "mc01", func() time.Time { return at })
	ctx := context.Background()
	first, err := src(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at = at.Add(30 * time.Second)
	if again, _ := src(ctx); again != first {
		t.Error("a 30 s old token was made anew")
	}
	at = at.Add(20 * time.Second)
	time.Sleep(1100 * time.Millisecond) // the presigned date has a one-second grain
	if renewed, _ := src(ctx); renewed == first {
		t.Error("a 50 s old token was used again")
	}
}
