package e2e

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/cli"
	regioniam "github.com/regionctl/regionctl/internal/render/iam"
)

const region = "eu-west-1"

var names = []string{"staging-eu-west-1-regional", "staging-eu-west-1-mc01", "staging-eu-west-1-mc02"}

// TestProvisionRegion provisions eu-west-1 through the IAM gate: the
// central pipeline as the central cluster's pod, then the regional one as
// the regional cluster's pod, each with its own role through IRSA. It
// checks what exists in the emulator, who assumed what, what the platform
// API received, and that the gate denied nothing; then runs both again
// and checks that nothing was made twice.
func TestProvisionRegion(t *testing.T) {
	e := setup(t)
	code, out, _ := e.central("req-central")
	if code != 0 {
		t.Fatalf("central: exit %d", code)
	}
	for _, want := range []string{"eu-west-1/regional", "account", "created", "assume-role", "terraform", "bootstrap", "central pipeline of eu-west-1 done", "Terraform output: " + e.root + "/.regionctl/logs/central-eu-west-1-req-central.log"} {
		if !strings.Contains(out, want) {
			t.Errorf("central output lacks %q", want)
		}
	}
	e.regionalAccount = e.accounts()[names[0]][0]
	e.regionalIssuer()
	if code, _, _ := e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "req-regional"); code != 0 {
		t.Fatalf("regional: exit %d", code)
	}

	// Terraform's output went to the named log file, each line prefixed by
	// its cluster.
	log, err := os.ReadFile(filepath.Join(e.root, ".regionctl/logs/regional-eu-west-1-req-regional.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[eu-west-1/mc01] ", "[eu-west-1/mc02] ", "Apply complete!"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q", want)
		}
	}

	accounts := e.accounts()
	for i, n := range names {
		if len(accounts[n]) != 1 {
			t.Fatalf("account %s: %v", n, accounts[n])
		}
		want := "/platform/staging/eu-west-1/" + []string{"regional", "management", "management"}[i]
		if got := e.ouPath(accounts[n][0]); got != want {
			t.Errorf("%s is in %s, want %s", n, got, want)
		}
	}
	regional := accounts[names[0]][0]
	pipelineRole := "arn:aws:iam::" + regional + ":role/regional-pipeline-eu-west-1"

	// The regional account holds the pipeline's role (trusted through IRSA
	// only) and no deploy role; the management account, the minting role.
	if trust, _, ok := e.role(regional, "regional-pipeline-eu-west-1"); !ok || !strings.Contains(trust, "sts:AssumeRoleWithWebIdentity") || strings.Contains(trust, ":root") {
		t.Errorf("the regional pipeline's role: %v %s", ok, trust)
	}
	if _, _, ok := e.role(regional, regioniam.DeployRoleName); ok {
		t.Error("the regional account holds a ManagementClusterDeployRole")
	}
	if trust, _, ok := e.role(awsemu.DefaultAccount, "regionctl-minting-eu-west-1"); !ok || !strings.Contains(trust, pipelineRole) || !strings.Contains(trust, "regional-pipeline-eu-west-1\"") {
		t.Errorf("the minting role: %v %s", ok, trust)
	}
	// Each management cluster account: the deploy role AWS CloudFormation
	// deployed from the region's StackSet, trusting the pipeline role with
	// the ExternalId, its scoped inline policy and no managed one, and the
	// account marked placed.
	for _, n := range names[1:] {
		acct := accounts[n][0]
		trust, attached, ok := e.role(acct, regioniam.DeployRoleName)
		if !ok {
			t.Fatalf("no ManagementClusterDeployRole in %s", n)
		}
		if !strings.Contains(trust, `"sts:ExternalId"`) || !strings.Contains(trust, "regional-pipeline-eu-west-1") || !strings.Contains(trust, pipelineRole) {
			t.Errorf("%s deploy role trust: %s", n, trust)
		}
		if len(attached) != 0 {
			t.Errorf("%s deploy role has managed policies %v", n, attached)
		}
		if pol := e.inlinePolicy(acct, regioniam.DeployRoleName); !strings.Contains(pol, `"Id":"regionctl-generated-deploy-role-eu-west-1"`) || strings.Contains(pol, "AdministratorAccess") {
			t.Errorf("%s deploy role policy: %.200s", n, pol)
		}
		if tags := e.accountTags(acct); tags[regioniam.SealedTag] != "true" || tags[regioniam.RegionTag] != region {
			t.Errorf("%s is not marked placed: %v", n, tags)
		}
	}

	// What STS was asked: the AccessRole of the regional account by the
	// central pipeline; the minting role with the ExternalId; the deploy
	// role with the ExternalId and the request id in session name and tag
	// (once waiting for it to arrive, once to act); and no management
	// cluster account's AccessRole at all.
	var deploy, minting, access, regionalAccess, drAccess int
	dr := e.accounts()["staging-eu-west-1-dr"][0]
	for _, ar := range e.proxy.assumeRoles() {
		arn := ar.Get("RoleArn")
		switch {
		case strings.HasSuffix(arn, ":role/ManagementClusterDeployRole"):
			deploy++
			if ar.Get("ExternalId") != "regional-pipeline-eu-west-1" || ar.Get("RoleSessionName") != "regionctl-req-regional" || ar.Get("Tags.member.1.Key") != "regionctl:request-id" {
				t.Errorf("deploy role assumed with %v", ar)
			}
			if strings.Contains(arn, regional) {
				t.Errorf("the regional account's deploy role was assumed: %s", arn)
			}
		case strings.HasSuffix(arn, ":role/regionctl-minting-eu-west-1"):
			minting++
			if ar.Get("ExternalId") != "regional-pipeline-eu-west-1" {
				t.Errorf("minting role assumed with %v", ar)
			}
		case strings.HasSuffix(arn, ":role/OrganizationAccountAccessRole"):
			if ar.Get("ExternalId") != "" || ar.Get("Tags.member.1.Key") != "" {
				t.Errorf("AccessRole assumed with %v", ar)
			}
			if strings.Contains(arn, regional) { // the central pipeline, and Terraform through it
				regionalAccess++
				continue
			}
			if strings.Contains(arn, ":"+dr+":") { // the DR account: the central pipeline's bootstrap, through Terraform
				drAccess++
				continue
			}
			access++
			t.Errorf("a management cluster account's AccessRole was assumed: %v", ar)
		default:
			t.Errorf("unexpected AssumeRole %v", ar)
		}
	}
	if deploy != 4 || minting != 2 || access != 0 || regionalAccess == 0 || drAccess == 0 {
		t.Errorf("%d deploy role, %d minting role, %d management cluster AccessRole, %d regional AccessRole, %d DR AccessRole assumptions; want 4, 2, 0, some, some",
			deploy, minting, access, regionalAccess, drAccess)
	}

	// State: the regional cluster's and the bootstrap's in the central
	// bucket; the management clusters' in the regional pipeline's.
	for bucket, key := range map[string]string{
		"regionctl-tfstate-eu-west-1-regional":  "regional-cluster/eu-west-1/regional.tfstate",
		"regionctl-regional-pipeline-eu-west-1": "management-cluster/eu-west-1/mc01.tfstate",
	} {
		if got := strings.Join(e.stateResources(bucket, key), " "); got != "terraform_data.cluster" {
			t.Errorf("s3://%s/%s holds %s", bucket, key, got)
		}
		if _, ok := e.object(bucket, key+".regionctl-run"); ok {
			t.Errorf("the run lease of %s was left behind", key)
		}
	}
	if got := strings.Join(e.stateResources("regionctl-regional-pipeline-eu-west-1", "management-cluster/eu-west-1/mc02.tfstate"), " "); got != "terraform_data.cluster" {
		t.Errorf("mc02 state holds %s", got)
	}
	if res := e.stateResources("regionctl-tfstate-eu-west-1-regional", "central-bootstrap/eu-west-1.tfstate"); !strings.Contains(strings.Join(res, " "), "aws_ssm_parameter.handoff") {
		t.Errorf("the bootstrap state holds %v", res)
	}
	if owner := e.bucketOwner("regionctl-tfstate-eu-west-1-regional"); owner != awsemu.DefaultAccount {
		t.Errorf("the central state bucket belongs to %s", owner)
	}
	if owner := e.bucketOwner("regionctl-regional-pipeline-eu-west-1"); owner != regional {
		t.Errorf("the management cluster state bucket belongs to %s", owner)
	}
	cfg := e.in(regional)
	cfg.Region = region
	handoff, err := ssm.NewFromConfig(cfg).GetParameter(context.Background(), &ssm.GetParameterInput{Name: aws.String("/regionctl/regional-pipeline/eu-west-1")})
	if err != nil || !strings.Contains(aws.ToString(handoff.Parameter.Value), `"minting_role_arn":"arn:aws:iam::`+awsemu.DefaultAccount+`:role/regionctl-minting-eu-west-1"`) {
		t.Errorf("the handoff parameter: %v %v", err, handoff)
	}

	// The platform API: two registrations, by the regional pipeline's role,
	// carrying the request id.
	regs := e.api.Registered()
	if len(regs) != 2 {
		t.Fatalf("registrations %+v", regs)
	}
	for _, r := range regs {
		if r.RequestID != "req-regional" || r.Labels["region"] != region || r.Caller != pipelineRole || r.Region != region {
			t.Errorf("registration %+v", r)
		}
	}

	// Again: everything is found, nothing is created, the placed accounts
	// are not moved. Meanwhile the OIDC buckets got new names, which the
	// deploy role's policy names: the central pipeline updates the
	// region's StackSet, and AWS every deploy role.
	oidc := filepath.Join(e.root, "config/global/zz-oidc.yaml")
	if err := os.WriteFile(oidc, []byte("hypershift:\n  oidc_bucket: hypershift-oidc-v2-${environment}-${region}-${cluster}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var rendered bytes.Buffer
	if code := cli.Run([]string{"--root", e.root, "--no-cache", "render"}, &rendered, &rendered); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, rendered.String())
	}
	creates := e.proxy.count("CreateAccount")
	if code, out, _ := e.central("req-central-2"); code != 0 || strings.Contains(out, "created") {
		t.Fatalf("central again: exit %d", code)
	}
	for _, n := range names[1:] {
		if pol := e.inlinePolicy(accounts[n][0], regioniam.DeployRoleName); !strings.Contains(pol, "hypershift-oidc-v2-staging-eu-west-1-*") {
			t.Errorf("%s's deploy role was not updated: %.300s", n, pol)
		}
	}
	code, out, _ = e.regionalRun("pipeline", "regional", "--region", region, "--request-id", "req-regional-2", "--parallel", "2")
	if code != 0 || strings.Count(out, "already registered") != 2 || strings.Contains(out, "marked placed") || strings.Contains(out, "moved") {
		t.Fatalf("regional again: exit %d", code)
	}
	// The regional and DR accounts, and the two management clusters'.
	if e.proxy.count("CreateAccount") != creates || creates != 4 {
		t.Errorf("CreateAccount called %d times, then %d", creates, e.proxy.count("CreateAccount"))
	}
	if len(e.api.Registered()) != 2 {
		t.Errorf("registrations after a re-run: %+v", e.api.Registered())
	}
	for _, n := range names {
		if len(e.accounts()[n]) != 1 {
			t.Errorf("%s: %v", n, e.accounts()[n])
		}
	}
}

func (e *env) inlinePolicy(account, role string) string {
	e.t.Helper()
	out, err := iam.NewFromConfig(e.in(account)).GetRolePolicy(context.Background(), &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(role)})
	if err != nil {
		return ""
	}
	doc, _ := url.QueryUnescape(aws.ToString(out.PolicyDocument))
	return doc
}

// accountTags are an account's tags in the organisation.
func (e *env) accountTags(account string) map[string]string {
	e.t.Helper()
	out, err := organizations.NewFromConfig(e.awsConfig()).ListTagsForResource(context.Background(), &organizations.ListTagsForResourceInput{ResourceId: aws.String(account)})
	if err != nil {
		e.t.Fatal(err)
	}
	tags := map[string]string{}
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags
}
