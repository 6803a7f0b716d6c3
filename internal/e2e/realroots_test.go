package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// TestRealRoots provisions eu-west-1 with the product's Terraform roots and
// the hashicorp/aws provider from the machine's mirror, against moto
// through the IAM gate: the regional root through the regional account's
// AccessRole, the management cluster roots through
// ManagementClusterDeployRole with its scoped policy. The gate denying
// any call the roots make fails the test. It is the slow test of the
// suite; -short skips it.
func TestRealRoots(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the real roots take minutes")
	}
	e := setup(t)
	e.roots, _ = filepath.Abs("../../terraform")
	start := time.Now()
	if err := emu.Prewarm(context.Background(), "ec2", "eks", "apigateway", "iot"); err != nil {
		t.Fatal(err)
	}
	t.Logf("moto warm: %s", time.Since(start).Round(time.Second))

	step := time.Now()
	if code, _, _ := e.central("real-central"); code != 0 {
		t.Fatalf("central: exit %d; log:\n%s", code, e.log("central-eu-west-1-real-central.log"))
	}
	t.Logf("central pipeline: %s", time.Since(step).Round(time.Second))
	regional := e.accounts()[names[0]][0]
	e.regionalAccount = regional
	// The regional cluster's own OIDC issuer, which its EKS module made an
	// IAM identity provider: the regional pipeline's pod holds its role
	// through it.
	var state struct {
		Outputs map[string]struct{ Value any } `json:"outputs"`
	}
	b, _ := e.object("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate")
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	issuer, _ := state.Outputs["oidc_issuer"].Value.(string)
	if !strings.HasPrefix(issuer, "https://oidc.eks.eu-west-1.amazonaws.com/id/") {
		t.Fatalf("the regional cluster's issuer: %q", issuer)
	}
	e.issuer = issuer

	step = time.Now()
	if code, _, _ := e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "real-regional", "--api-endpoint", e.url, "--parallel", "2"); code != 0 {
		t.Fatalf("regional: exit %d; log:\n%s", code, e.log("regional-eu-west-1-real-regional.log"))
	}
	t.Logf("regional pipeline: %s", time.Since(step).Round(time.Second))
	accounts := e.accounts()
	for _, n := range names {
		if len(accounts[n]) != 1 {
			t.Fatalf("account %s: %v", n, accounts[n])
		}
	}

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
		"regionctl-tfstate-eu-west-1-regional":  "regional-cluster/eu-west-1/regional.tfstate",
		"regionctl-regional-pipeline-eu-west-1": "management-cluster/eu-west-1/mc01.tfstate",
	} {
		res := strings.Join(e.stateResources(bucket, key), " ")
		if !strings.Contains(res, "aws_eks_cluster.this") || !strings.Contains(res, "aws_vpc.this") {
			t.Errorf("s3://%s/%s holds %s", bucket, key, res)
		}
	}
	// The management clusters' roles carry the boundary.
	mc01 := accounts[names[1]][0]
	role, err := iam.NewFromConfig(e.in(mc01)).GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("eu-west-1-mc01-node")})
	if err != nil || role.Role.PermissionsBoundary == nil || !strings.HasSuffix(aws.ToString(role.Role.PermissionsBoundary.PermissionsBoundaryArn), ":policy/regionctl-management-cluster-boundary") {
		t.Errorf("mc01's node role: %v %+v", err, role)
	}
	// The regional cluster's gateway is there; its IoT policy is left out
	// of emulator runs only (internal/tfrun/emulator.go says why).
	res := strings.Join(e.stateResources("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate"), " ")
	if !strings.Contains(res, "aws_apigatewayv2_api.this") || strings.Contains(res, "aws_iot_policy") || !strings.Contains(res, "aws_iam_openid_connect_provider.this") {
		t.Errorf("regional state: %s", res)
	}
	for _, b := range []string{"hypershift-oidc-staging-eu-west-1-mc01", "hypershift-oidc-staging-eu-west-1-mc02", "regionctl-regional-pipeline-eu-west-1"} {
		if !e.bucketExists(b) {
			t.Errorf("no bucket %s", b)
		}
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
