package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/cli"
	"github.com/regionctl/regionctl/internal/fleet"
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
	// ACM issues the platform API's certificate only once public DNS
	// reaches its zone: the gate answers so, reaching exactly the zones the
	// config says a parent delegates (moto alone issues any).
	zones, err := fleet.DelegatedZonesOf(os.DirFS(e.root))
	if err != nil {
		t.Fatal(err)
	}
	if !zones["api.eu-west-1.stage.hcp.example.com"] {
		t.Fatalf("the example's eu-west-1 API zone is not delegated in config/ (%v): its regional apply would wait out ACM's validation", zones)
	}
	e.gate.ModelPublicDNS(func(name string) bool { return zones[name] })
	start := time.Now()
	if err := e.emu.Prewarm(context.Background(), "ec2", "eks", "apigateway", "iot", "route53", "acm", "elasticloadbalancing"); err != nil {
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
	// The platform API stands for the regional root's API Gateway API,
	// which the regional pipeline's policy names.
	if e.apiID, _ = state.Outputs["platform_api_id"].Value.(string); e.apiID == "" {
		t.Fatal("the regional root has no platform_api_id output")
	}

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
	t.Logf("resource instances in state: regional %d, central-bootstrap %d, mc01 %d",
		len(e.stateResources("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate")),
		len(e.stateResources("regionctl-tfstate-eu-west-1-regional", "central-bootstrap/eu-west-1.tfstate")),
		len(e.stateResources("regionctl-regional-pipeline-eu-west-1", "management-cluster/eu-west-1/mc01.tfstate")))
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
	// The regional cluster's entry for the platform API, Maestro's broker
	// credentials and its OIDC provider are there.
	res := strings.Join(e.stateResources("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate"), " ")
	for _, want := range []string{"aws_apigatewayv2_vpc_link.this", "aws_lb_listener.https", "aws_apigatewayv2_domain_name.api", "aws_route53_record.api",
		"aws_iot_policy.this", "aws_iot_policy_attachment.this", "aws_secretsmanager_secret_version.this", "aws_iam_openid_connect_provider.this",
		"aws_ecr_repository_policy.this"} {
		if !strings.Contains(res, want) {
			t.Errorf("regional state lacks %s: %s", want, res)
		}
	}
	for _, b := range []string{"hypershift-oidc-staging-eu-west-1-mc01", "hypershift-oidc-staging-eu-west-1-mc02", "regionctl-regional-pipeline-eu-west-1"} {
		if !e.bucketExists(b) {
			t.Errorf("no bucket %s", b)
		}
	}
	if regs := e.api.Registered(); len(regs) != 2 {
		t.Errorf("registrations %+v", regs)
	}
	e.hypershiftChecklist(mc01, "mc01")
	mc01Outputs := e.stateOutputs("regionctl-regional-pipeline-eu-west-1", "management-cluster/eu-west-1/mc01.tfstate")
	e.etcdBackupChecklist(mc01, accounts[names[2]][0], mc01Outputs["cluster_name"])
	e.maestroChecklist(regional, mc01, "mc01", mc01Outputs, e.stateOutputs("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate"))
	e.ecrChecklist(regional, mc01, e.accounts()["staging-"+region+"-dr"][0])
	e.bootstrapChecklist(regional, mc01)
	e.healthChecklist(regional, mc01, accounts[names[2]][0], e.stateOutputs("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate")["cluster_name"], mc01Outputs["cluster_name"])

	// Again, with nothing changed: Terraform finds nothing to do, so what
	// the roots declare is what the emulator holds.
	step = time.Now()
	if code, _, _ := e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "real-regional-2", "--api-endpoint", e.url, "--parallel", "2"); code != 0 {
		t.Fatalf("regional again: exit %d; log:\n%s", code, e.log("regional-eu-west-1-real-regional-2.log"))
	}
	t.Logf("regional pipeline, nothing changed: %s", time.Since(step).Round(time.Second))
	again := e.log("regional-eu-west-1-real-regional-2.log")
	for _, c := range []string{"mc01", "mc02"} {
		if !strings.Contains(again, "[eu-west-1/"+c+"] Apply complete! Resources: 0 added, 0 changed, 0 destroyed.") {
			t.Errorf("%s changed on a second run with nothing changed; log:\n%s", c, again)
		}
	}

	// What the emulator cannot create, planned as the product's roots
	// declare it; nothing else would change, in the regional root (applied
	// once above) as in mc01's.
	step = time.Now()
	e.planGaps(
		e.regionalGapJob(mc01, e.stateOutputs("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate")),
		e.managementGapJob("mc01", mc01, e.stateOutputs("regionctl-regional-pipeline-eu-west-1", "management-cluster/eu-west-1/mc01.tfstate")),
	)
	t.Logf("plan with the emulator's gaps: %s", time.Since(step).Round(time.Second))

	// delete: true destroys mc02's infrastructure once its reviewed plan is
	// approved, and nothing is left.
	mc02 := accounts[names[2]][0]
	file := filepath.Join(e.root, "config/clusters/eu-west-1/mc02.yaml")
	b, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(b, "\ndelete: true\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	var rendered bytes.Buffer
	if code := cli.Run([]string{"--root", e.root, "--no-cache", "render"}, &rendered, &rendered); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, rendered.String())
	}
	step = time.Now()
	planID := e.reviewAndApprove(regional)
	t.Logf("plans reviewed and mc02's approved: %s", time.Since(step).Round(time.Second))
	step = time.Now()
	// Once the provider deleted mc02's OIDC bucket, it asks (HeadBucket)
	// until the bucket is gone. A bucket that no longer exists has no
	// account, so the deploy role's own-account condition
	// (aws:ResourceAccount) does not hold and the gate answers 403; the S3
	// API reference (HeadBucket) documents "a generic 400 Bad Request, 403
	// Forbidden or 404 Not Found" for a bucket that does not exist or may
	// not be accessed, and the provider's wait ends on either.
	gone := "arn:aws:s3:::hypershift-oidc-staging-eu-west-1-mc02"
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool {
		return en.Operation == "s3:HeadBucket" && en.Resource == gone && strings.HasSuffix(en.Principal, ":role/ManagementClusterDeployRole")
	})
	code, out, _ := e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "real-regional-4", "--api-endpoint", e.url, "--parallel", "2")
	if code != 0 {
		t.Fatalf("regional with mc02 deleted and approved: exit %d; log:\n%s", code, e.log("regional-eu-west-1-real-regional-4.log"))
	}
	if !strings.Contains(out, "destroy of terraform/management-cluster done (the reviewed plan "+planID[:12]+")") {
		t.Errorf("mc02's destroy did not apply the approved plan %s:\n%s", planID[:12], out)
	}
	t.Logf("regional pipeline, mc02 destroyed: %s", time.Since(step).Round(time.Second))
	if left := e.stateResources("regionctl-regional-pipeline-eu-west-1", "management-cluster/eu-west-1/mc02.tfstate"); len(left) != 0 {
		t.Errorf("mc02's state after the destroy holds %v", left)
	}
	if got := e.eksClusters(mc02); len(got) != 0 {
		t.Errorf("EKS clusters of mc02's account after the destroy: %v", got)
	}
	if e.bucketExists("hypershift-oidc-staging-eu-west-1-mc02") {
		t.Error("mc02's OIDC bucket outlived the destroy")
	}
	if _, err := iam.NewFromConfig(e.in(mc02)).GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("eu-west-1-mc02-hypershift")}); err == nil {
		t.Error("mc02's operator role outlived the destroy")
	}
}

// hypershiftChecklist is seed 004's list of what a management cluster's
// account must hold before HyperShift can run hosted clusters, asked of the
// emulator as the cluster's account sees it: a bucket anyone may read OIDC
// documents from (and nothing else), the operator's credentials held by its
// ServiceAccount under the boundary, PrivateLink's private zone, and the
// public zone with the roles that write into it.
func (e *env) hypershiftChecklist(account, cluster string) {
	t := e.t
	ctx := context.Background()
	bucket := "hypershift-oidc-staging-" + region + "-" + cluster
	s3c := s3.NewFromConfig(e.in(account), func(o *s3.Options) { o.UsePathStyle = true })
	pab, err := s3c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("OIDC bucket's public access block: %v", err)
	}
	if c := pab.PublicAccessBlockConfiguration; aws.ToBool(c.BlockPublicPolicy) || aws.ToBool(c.RestrictPublicBuckets) || !aws.ToBool(c.BlockPublicAcls) || !aws.ToBool(c.IgnorePublicAcls) {
		t.Errorf("OIDC bucket's public access block %+v: a public policy must be allowed and ACLs blocked", *c)
	}
	// The gate holds bucket policies and applies them (moto does neither).
	pol, ok := e.gate.BucketPolicy(bucket)
	if !ok {
		t.Fatalf("OIDC bucket %s has no policy", bucket)
	}
	var doc struct {
		Statement []struct {
			Effect    string
			Principal any
			Action    any
			Resource  any
		}
	}
	if err := json.Unmarshal(pol, &doc); err != nil {
		t.Fatal(err)
	}
	publicRead := false
	for _, st := range doc.Statement {
		if st.Effect != "Allow" {
			continue
		}
		if fmt.Sprint(st.Principal) != "*" && fmt.Sprint(st.Principal) != "map[AWS:*]" {
			t.Errorf("OIDC bucket allows %v to %v", st.Principal, st.Action)
			continue
		}
		if fmt.Sprint(st.Action) != "s3:GetObject" || fmt.Sprint(st.Resource) != "arn:aws:s3:::"+bucket+"/*" {
			t.Errorf("OIDC bucket's public statement grants %v on %v; only s3:GetObject of its objects may be public", st.Action, st.Resource)
			continue
		}
		publicRead = true
	}
	if !publicRead {
		t.Errorf("OIDC bucket %s is not publicly readable: %s", bucket, pol)
	}
	// As a hosted cluster's client would: an anonymous read of a document
	// the operator wrote is answered; listing or writing is refused.
	key := "hosted-1/.well-known/openid-configuration"
	direct := s3.NewFromConfig(e.awsConfig(), func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := direct.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(`{"issuer":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool { return en.Principal == "anonymous" }) // the probes below
	for _, probe := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/" + bucket + "/" + key, http.StatusOK},
		{"GET", "/" + bucket + "?list-type=2", http.StatusForbidden},
		{"PUT", "/" + bucket + "/forged", http.StatusForbidden},
	} {
		req, _ := http.NewRequestWithContext(ctx, probe.method, e.gate.URL+probe.path, strings.NewReader(""))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != probe.want {
			t.Errorf("anonymous %s %s: %d, want %d", probe.method, probe.path, res.StatusCode, probe.want)
		}
	}

	client := iam.NewFromConfig(e.in(account))
	// Each role is held by its ServiceAccount's pods through EKS Pod
	// Identity: the association EKS finds for that ServiceAccount of the
	// cluster names the role, and the role's trust admits the session.
	for name, sa := range map[string][2]string{"hypershift": {"hypershift", "operator"}, "external-dns": {"external-dns", "external-dns"},
		"cert-manager": {"cert-manager", "cert-manager"}} {
		role := region + "-" + cluster + "-" + name
		out, err := client.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)})
		if err != nil {
			t.Errorf("role %s: %v", role, err)
			continue
		}
		trust, _ := url.QueryUnescape(aws.ToString(out.Role.AssumeRolePolicyDocument))
		if !strings.Contains(trust, awsemu.PodIdentityService) || strings.Contains(trust, "AssumeRoleWithWebIdentity") {
			t.Errorf("role %s is not held through EKS Pod Identity alone: %s", role, trust)
		}
		creds, err := e.gate.PodIdentitySession(ctx, account, region, cluster, sa[0], sa[1], sa[1]+"-0")
		if err != nil {
			t.Errorf("a pod of %s/%s: %v", sa[0], sa[1], err)
		} else if who, err := sts.NewFromConfig(awsemu.Config(e.gate.URL, region, creds)).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil ||
			!strings.Contains(aws.ToString(who.Arn), ":assumed-role/"+role+"/") {
			t.Errorf("a pod of %s/%s holds %v (%v), want role %s", sa[0], sa[1], who, err, role)
		}
		if out.Role.PermissionsBoundary == nil || !strings.HasSuffix(aws.ToString(out.Role.PermissionsBoundary.PermissionsBoundaryArn), ":policy/regionctl-management-cluster-boundary") {
			t.Errorf("role %s has no boundary", role)
		}
	}
	op, err := client.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(region + "-" + cluster + "-hypershift"), PolicyName: aws.String("hypershift-operator")})
	if err != nil {
		t.Fatalf("the operator's policy: %v", err)
	}
	opDoc, _ := url.QueryUnescape(aws.ToString(op.PolicyDocument))
	for _, want := range []string{"s3:PutObject", "arn:aws:s3:::" + bucket + "/*", "ec2:CreateVpcEndpointServiceConfiguration", "route53:ChangeResourceRecordSets"} {
		if !strings.Contains(opDoc, want) {
			t.Errorf("the operator's policy lacks %s: %s", want, opDoc)
		}
	}
	res := strings.Join(e.stateResources("regionctl-regional-pipeline-"+region, "management-cluster/"+region+"/"+cluster+".tfstate"), " ")
	for _, want := range []string{"aws_route53_zone.private_link", "aws_route53_zone.public", "aws_s3_bucket_policy.oidc"} {
		if !strings.Contains(res, want) {
			t.Errorf("%s's state lacks %s: %s", cluster, want, res)
		}
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
	clusters, err := e.emu.EKSClusters(context.Background(), creds, region)
	if err != nil {
		e.t.Fatal(err)
	}
	return clusters
}
