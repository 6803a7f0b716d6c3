package awsx

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/regionctl/regionctl/internal/kube"
	"github.com/regionctl/regionctl/internal/pipeline"
)

// EKSClient is a Kubernetes client of EKS cluster name in region, as the
// client's own identity: the API endpoint and CA from eks:DescribeCluster,
// and the token EKS's authenticator accepts, a presigned
// sts:GetCallerIdentity naming the cluster (x-k8s-aws-id).
func (c *Client) EKSClient(ctx context.Context, region, name string) (*kube.Client, error) {
	cfg := c.Config(pipeline.Credentials{}, region)
	out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("describing EKS cluster %s: %w", name, denied(err))
	}
	cl := out.Cluster
	if cl == nil || aws.ToString(cl.Endpoint) == "" || cl.CertificateAuthority == nil {
		return nil, fmt.Errorf("EKS cluster %s has no endpoint or CA yet", name)
	}
	ca, err := base64.StdEncoding.DecodeString(aws.ToString(cl.CertificateAuthority.Data))
	if err != nil {
		return nil, fmt.Errorf("the CA of EKS cluster %s: %w", name, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("the CA of EKS cluster %s holds no certificate", name)
	}
	return &kube.Client{Base: aws.ToString(cl.Endpoint), TokenSource: EKSTokenSource(cfg, name, time.Now), HTTP: &http.Client{Timeout: 60 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}, nil
}

// EKSTokenSource gives EKS tokens of cfg's identity for cluster name, a
// new one once the last is 45 s old: each is presigned for 60 s, and an
// install outlasts that.
func EKSTokenSource(cfg aws.Config, name string, now func() time.Time) func(context.Context) (string, error) {
	var (
		mu    sync.Mutex
		token string
		made  time.Time
	)
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if token == "" || now().Sub(made) >= 45*time.Second {
			t, err := EKSToken(ctx, cfg, name)
			if err != nil {
				return "", err
			}
			token, made = t, now()
		}
		return token, nil
	}
}

// EKSToken is a bearer token of cfg's identity for EKS cluster name: a
// presigned sts:GetCallerIdentity URL bound to the cluster by its signed
// x-k8s-aws-id header, valid 60 s after it is made (EKS keeps it 15
// minutes).
func EKSToken(ctx context.Context, cfg aws.Config, name string) (string, error) {
	presign := sts.NewPresignClient(sts.NewFromConfig(cfg))
	req, err := presign.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(o *sts.PresignOptions) {
		o.ClientOptions = append(o.ClientOptions, func(so *sts.Options) {
			so.APIOptions = append(so.APIOptions, smithyhttp.AddHeaderValue("x-k8s-aws-id", name), smithyhttp.SetHeaderValue("X-Amz-Expires", "60"))
		})
	})
	if err != nil {
		return "", fmt.Errorf("presigning the EKS token of %s: %w", name, err)
	}
	return "k8s-aws-v1." + base64.RawURLEncoding.EncodeToString([]byte(req.URL)), nil
}
