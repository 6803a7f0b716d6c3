package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/regionctl/regionctl/internal/tftest"
)

// TestRealRoots provisions eu-west-1 with the product's Terraform roots and
// the hashicorp/aws provider from the machine's mirror, against moto. It
// is the slow test of the suite (minutes: the provider loads its schema
// several times per command on two cores); -short skips it.
func TestRealRoots(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the real roots take minutes")
	}
	e := setup(t)
	tf := tftest.Setup(t, "../..")
	e.roots, _ = filepath.Abs("../../terraform")

	// Warm moto's services while the provider is installed once into a
	// template that seeds every workspace.
	warmed := make(chan error, 1)
	go func() {
		warmed <- emu.Prewarm(context.Background(), "ec2", "iam", "sts", "eks", "apigateway", "iot", "s3", "organizations")
	}()
	template := filepath.Join(t.TempDir(), "template")
	if err := os.MkdirAll(template, 0o755); err != nil {
		t.Fatal(err)
	}
	versions, err := os.ReadFile("../../terraform/management-cluster/versions.tf")
	if err != nil {
		t.Fatal(err)
	}
	// The template needs the providers only, not the backend.
	if err := os.WriteFile(filepath.Join(template, "versions.tf"), []byte(strings.Replace(string(versions), `backend "s3" {}`, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tfx, err := tfexec.NewTerraform(template, tf.Exec)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if err := tfx.SetEnv(tfexec.CleanEnv(env)); err != nil {
		t.Fatal(err)
	}
	if err := tfx.Init(context.Background(), tfexec.Backend(false)); err != nil {
		t.Fatal(err)
	}
	t.Logf("template init: %s", time.Since(start).Round(time.Second))
	if err := <-warmed; err != nil {
		t.Fatal(err)
	}
	t.Logf("moto warm: %s", time.Since(start).Round(time.Second))

	step := time.Now()
	if code, _, _ := e.regionctl("pipeline", "central", "--region", region, "--request-id", "real-central", "--terraform-template", template); code != 0 {
		t.Fatalf("central: exit %d; log:\n%s", code, e.log("central-eu-west-1-real-central.log"))
	}
	t.Logf("central pipeline: %s", time.Since(step).Round(time.Second))
	step = time.Now()
	if code, _, _ := e.regionctl("pipeline", "regional", "--region", region, "--request-id", "real-regional", "--terraform-template", template, "--api-endpoint", e.url); code != 0 {
		t.Fatalf("regional: exit %d; log:\n%s", code, e.log("regional-eu-west-1-real-regional.log"))
	}
	t.Logf("regional pipeline: %s", time.Since(step).Round(time.Second))

	accounts := e.accounts()
	for _, n := range names {
		if len(accounts[n]) != 1 {
			t.Fatalf("account %s: %v", n, accounts[n])
		}
	}
	regional := accounts[names[0]][0]
	// Each account runs its EKS cluster.
	for i, n := range names {
		want := []string{"regional", "mc01", "mc02"}[i]
		if got := e.eksClusters(accounts[n][0]); len(got) != 1 || got[0] != want {
			t.Errorf("EKS clusters of %s: %v, want [%s]", n, got, want)
		}
	}
	// The regional pipeline's role carries the rendered region-scoped policy.
	client := iam.NewFromConfig(e.in(regional))
	pol, err := client.GetRolePolicy(context.Background(), &iam.GetRolePolicyInput{RoleName: aws.String("regional-pipeline-eu-west-1"), PolicyName: aws.String("regional-pipeline-eu-west-1")})
	if err != nil {
		t.Fatalf("the regional pipeline's policy: %v", err)
	}
	if doc, _ := url.QueryUnescape(aws.ToString(pol.PolicyDocument)); !strings.Contains(doc, "aws:RequestedRegion") || !strings.Contains(doc, "regionctl-generated-regional-pipeline-eu-west-1") {
		t.Errorf("regional pipeline policy: %.300s", doc)
	}
	for bucket, key := range map[string]string{
		"regionctl-tfstate-eu-west-1-regional": "regional-cluster/eu-west-1/regional.tfstate",
		"regionctl-tfstate-eu-west-1-mc01":     "management-cluster/eu-west-1/mc01.tfstate",
		"regionctl-tfstate-eu-west-1-mc02":     "management-cluster/eu-west-1/mc02.tfstate",
	} {
		res := strings.Join(e.stateResources(bucket, key), " ")
		if !strings.Contains(res, "aws_eks_cluster.this") || !strings.Contains(res, "aws_vpc.this") {
			t.Errorf("s3://%s/%s holds %s", bucket, key, res)
		}
	}
	// The regional cluster's gateway is there; its IoT policy is left out
	// of emulator runs only (internal/tfrun/emulator.go says why).
	res := strings.Join(e.stateResources("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate"), " ")
	if !strings.Contains(res, "aws_apigatewayv2_api.this") || strings.Contains(res, "aws_iot_policy") {
		t.Errorf("regional state: %s", res)
	}
	for _, b := range []string{"hypershift-oidc-staging-eu-west-1-mc01", "hypershift-oidc-staging-eu-west-1-mc02", "regionctl-regional-pipeline-eu-west-1"} {
		if !e.bucketExists(b) {
			t.Errorf("no bucket %s", b)
		}
	}
	if e.bucketExists("hypershift-oidc-staging-eu-west-1") {
		t.Error("the region-wide OIDC bucket of old exists")
	}
	if regs := e.api.Registered(); len(regs) != 2 {
		t.Errorf("registrations %+v", regs)
	}
}

func (e *env) log(name string) string {
	b, _ := os.ReadFile(filepath.Join(e.root, ".regionctl", "logs", name))
	return string(b)
}

func (e *env) eksClusters(account string) []string {
	e.t.Helper()
	creds, err := e.in(account).Credentials.Retrieve(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	clusters, err := emu.EKSClusters(context.Background(), creds, region)
	if err != nil {
		e.t.Fatal(err)
	}
	return clusters
}
