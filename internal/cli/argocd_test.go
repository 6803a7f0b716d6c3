package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/testrepo"
)

func testCA(t *testing.T) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestClusterSecretCompletesTheRenderedSecret: in the central topology the
// rendered cluster Secret is completed with the endpoint, CA and account
// that exist only once the cluster does; anything else is refused.
func TestClusterSecretCompletesTheRenderedSecret(t *testing.T) {
	r := testrepo.Golden(t, "uneven-sectors")
	run := func(args ...string) (int, string) {
		var out strings.Builder
		code := Run(append([]string{"--root", r.Dir, "--no-cache"}, args...), &out, &out)
		return code, out.String()
	}
	if code, out := run("render"); code != 0 {
		t.Fatal(out)
	}
	ca := testCA(t)
	server := "https://ABCDEF0123456789.gr7.eu-west-1.eks.amazonaws.com"
	code, out := run("argocd", "cluster-secret", "eu-west-1/mc02", "--server", server, "--ca-file", ca, "--account", "123456789012")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var secret struct {
		Metadata struct {
			Name   string
			Labels map[string]string
		}
		StringData map[string]string `json:"stringData"`
	}
	if err := yaml.Unmarshal([]byte(out), &secret); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		AWSAuthConfig struct {
			ClusterName string `json:"clusterName"`
			RoleARN     string `json:"roleARN"`
		} `json:"awsAuthConfig"`
		TLSClientConfig struct {
			CAData string `json:"caData"`
		} `json:"tlsClientConfig"`
	}
	if err := json.Unmarshal([]byte(secret.StringData["config"]), &cfg); err != nil {
		t.Fatal(err)
	}
	pemBytes, _ := os.ReadFile(ca)
	if secret.Metadata.Name != "cluster-production-eu-west-1-mc02" || secret.StringData["server"] != server ||
		cfg.AWSAuthConfig.RoleARN != "arn:aws:iam::123456789012:role/regionctl-argocd-central" || cfg.AWSAuthConfig.ClusterName != "mc02" ||
		cfg.TLSClientConfig.CAData != base64.StdEncoding.EncodeToString(pemBytes) || secret.Metadata.Labels["sector"] == "" {
		t.Errorf("secret %+v, config %+v", secret, cfg)
	}
	for _, bad := range [][]string{
		{"eu-west-1/mc02", "--server", "https://evil.example.com", "--ca-file", ca, "--account", "123456789012"},
		{"eu-west-1/mc02", "--server", server + "/x?y", "--ca-file", ca, "--account", "123456789012"},
		{"eu-west-1/mc02", "--server", server, "--ca-file", ca, "--account", `1","roleARN":"x`},
		{"eu-west-1/mc02", "--server", server, "--ca-file", "/etc/hostname", "--account", "123456789012"},
		{"eu-west-1/mc99", "--server", server, "--ca-file", ca, "--account", "123456789012"},
	} {
		if code, out := run(append([]string{"argocd", "cluster-secret"}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d\n%s", bad, code, out)
		}
	}
	// A per-cluster fleet has no cluster Secrets.
	pc := testrepo.Golden(t, "minimal")
	var sink strings.Builder
	if code := Run([]string{"--root", pc.Dir, "--no-cache", "argocd", "cluster-secret", "us-east-1/mc01", "--server", strings.Replace(server, "eu-west-1", "us-east-1", 1),
		"--ca-file", ca, "--account", "123456789012"}, &sink, io.Discard); code != ExitUsage {
		t.Errorf("per-cluster topology: exit %d", code)
	}
}
