package pipeline_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/pipeline"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/schema"
)

func load(t *testing.T, root string) *config.Fleet {
	c, _ := schema.New(schema.Options{Version: "test"})
	f, diags := fleet.Load(os.DirFS(root), "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return f
}

func names(p *pipeline.Plan) string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, s.Cluster+":"+s.Name)
	}
	return strings.Join(out, " ")
}

func TestCentralPlan(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Central(f, "us-east-1", "", "req1")
	if err != nil {
		t.Fatal(err)
	}
	// --cluster is the regional cluster (as the Tasks pass it), or refused.
	if _, err := pipeline.Central(f, "us-east-1", "regional", "req1"); err != nil {
		t.Errorf("--cluster regional: %v", err)
	}
	if _, err := pipeline.Central(f, "us-east-1", "mc01", "req1"); err == nil || !strings.Contains(err.Error(), "--cluster mc01 is not it") {
		t.Errorf("--cluster mc01 on the central pipeline: %v", err)
	}
	if got := names(p); got != "us-east-1/regional:account us-east-1/regional:assume-role us-east-1/regional:terraform us-east-1/regional:argocd us-east-1/regional:bootstrap" {
		t.Fatalf("steps %s", got)
	}
	tf, argo, boot := p.Steps[2], p.Steps[3], p.Steps[4]
	// The bootstrap task is started through the role Terraform acted as,
	// with the root Application render wrote.
	if argo.RoleARN != p.Steps[1].RoleARN || strings.Join(argo.RootDocuments, " ") != "deploy/production/us-east-1/argocd/regional/apps/project.yaml deploy/production/us-east-1/argocd/regional/root.yaml" {
		t.Errorf("argocd step %+v", argo)
	}
	if tf.Vars["runner_image"] == "" || boot.Vars["runner_image"] != "" {
		t.Errorf("runner_image: terraform %q, bootstrap %q", tf.Vars["runner_image"], boot.Vars["runner_image"])
	}
	// The bootstrap task holds the root Application to the fleet
	// repository, which only the reviewed config names.
	if tf.Vars["gitops_repo_url"] != "https://git.platform.example.com/platform/fleet.git" || boot.Vars["gitops_repo_url"] != "" {
		t.Errorf("gitops_repo_url: terraform %q, bootstrap %q", tf.Vars["gitops_repo_url"], boot.Vars["gitops_repo_url"])
	}
	if tf.Root != "terraform/regional-cluster" || tf.Backend["key"] != "regional-cluster/us-east-1/regional.tfstate" || tf.Backend["use_lockfile"] != "true" {
		t.Errorf("terraform step %+v", tf)
	}
	// Every file a plan names is one render writes.
	for _, f := range append([]string{tf.VarFile, boot.VarFile}, argo.RootDocuments...) {
		if _, err := os.Stat("../../" + f); err != nil {
			t.Errorf("the plan names %s, which deploy/ lacks", f)
		}
	}
	if p.Steps[1].SessionName != "regionctl-req1" || p.Steps[1].RoleARN != "arn:aws:iam::${account_id}:role/OrganizationAccountAccessRole" || p.Steps[1].SessionTags {
		t.Errorf("assume-role step %+v", p.Steps[1])
	}
	if acc := p.Steps[0]; !acc.CreateOU || acc.ManagementOU != "/platform/production/us-east-1/management" || acc.OU != "/platform/production/us-east-1/regional" {
		t.Errorf("account step %+v", acc)
	}
	if tf.BucketOwner != "${management_account_id}" || !tf.CreateBucket || tf.Vars["assume_role_arn"] != "${assumed_role_arn}" {
		t.Errorf("terraform step %+v", tf)
	}
	if boot.Vars["regional_oidc_issuer"] != "${output.oidc_issuer}" || boot.Vars["management_ou_id"] != "${management_ou_id}" ||
		boot.Vars["dr_account_id"] != "${dr_account_id}" || boot.Vars["dr_assume_role_arn"] != "arn:aws:iam::${dr_account_id}:role/OrganizationAccountAccessRole" {
		t.Errorf("bootstrap step %+v", boot)
	}
	// The region's DR account, found or made beside the regional account,
	// in an OU of its own, adopted only when tagged for it.
	if dr := p.Steps[0].DRAccount; dr == nil || dr.Name != "production-us-east-1-dr" || dr.OU != "/platform/production/us-east-1/dr" ||
		dr.Tags[iam.ClusterTag] != pipeline.DRAccountCluster || dr.Tags[iam.RegionTag] != "us-east-1" || dr.Email == "" {
		t.Errorf("the account step's DR account %+v", dr)
	}
	// The regional root reads the organisation's ids: its repositories
	// admit the region's management cluster OU.
	for _, k := range []string{"organization_id", "root_id", "management_ou_id"} {
		if tf.Vars[k] != "${"+k+"}" {
			t.Errorf("terraform step's %s: %q", k, tf.Vars[k])
		}
	}
}

func TestRegionalPlan(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "ap-northeast-1", "", "", "req2")
	if err != nil {
		t.Fatal(err)
	}
	// mc02 has delete: true: destroyed, not registered.
	if got := names(p); got != "ap-northeast-1/mc01:account ap-northeast-1/mc01:assume-role ap-northeast-1/mc01:terraform ap-northeast-1/mc01:argocd ap-northeast-1/mc01:register "+
		"ap-northeast-1/mc02:account ap-northeast-1/mc02:assume-role ap-northeast-1/mc02:terraform" {
		t.Fatalf("steps %s", got)
	}
	role := p.Steps[1]
	if role.RoleARN != "arn:aws:iam::${account_id}:role/ManagementClusterDeployRole" || role.ExternalID != "regional-pipeline-ap-northeast-1" {
		t.Errorf("assume-role step %+v", role)
	}
	if p.Steps[7].Command != "destroy" {
		t.Errorf("mc02 is %s, want destroy", p.Steps[7].Command)
	}
	if argo := p.Steps[3]; argo.RoleARN != role.RoleARN || argo.ExternalID != role.ExternalID || !argo.SessionTags ||
		strings.Join(argo.RootDocuments, " ") != "deploy/production/ap-northeast-1/argocd/mc01/apps/project.yaml deploy/production/ap-northeast-1/argocd/mc01/root.yaml" {
		t.Errorf("argocd step %+v", argo)
	}
	reg := p.Steps[4]
	if calls := reg.Calls; len(calls) != 2 || calls[0] != "GET ${platform_api_endpoint}/api/v0/live" || !strings.Contains(calls[1], `"name":"mc01"`) {
		t.Errorf("register calls %v", calls)
	}
	if reg.Endpoint != "" || reg.Labels["region"] != "ap-northeast-1" {
		t.Errorf("register's endpoint %q (want the handoff's), labels %v", reg.Endpoint, reg.Labels)
	}
	if acc := p.Steps[0]; acc.StackSet != "regionctl-deploy-role-ap-northeast-1" ||
		acc.AccountTags["regionctl:region"] != "ap-northeast-1" || acc.AccountTags["regionctl:cluster"] != "mc01" || acc.Handoff != "/regionctl/regional-pipeline/ap-northeast-1" || acc.CreateOU {
		t.Errorf("account step %+v", acc)
	}
	if tf := p.Steps[2]; tf.BucketOwner != "${pipeline_account_id}" || tf.CreateBucket || tf.Backend["bucket"] != "regionctl-regional-pipeline-ap-northeast-1" {
		t.Errorf("terraform step %+v", tf)
	}
	withFlag, err := pipeline.Regional(f, "ap-northeast-1", "mc01", "http://127.0.0.1:9", "r")
	if err != nil {
		t.Fatal(err)
	}
	if s := withFlag.Steps[4]; s.Endpoint != "http://127.0.0.1:9" || s.Calls[0] != "GET http://127.0.0.1:9/api/v0/live" {
		t.Errorf("--api-endpoint: %+v", s)
	}
	if _, err := pipeline.Regional(f, "ap-northeast-1", "mc09", "", "r"); err == nil || !strings.Contains(err.Error(), "no management cluster mc09") {
		t.Errorf("an unknown cluster: %v", err)
	}
	if _, err := pipeline.Regional(f, "us-east-1", "mc03", "", "r"); err != nil {
		t.Errorf("us-east-1/mc03: %v", err)
	}
	if _, err := pipeline.Regional(f, "eu-west-1", "mc03", "", "r"); err == nil || !strings.Contains(err.Error(), "refusing us-east-1/mc03") {
		t.Errorf("another region's cluster is not refused: %v", err)
	}
	g := load(t, "../../golden/deletions")
	p, err = pipeline.Regional(g, "eu-central-1", "mc03", "", "r")
	if err != nil || names(p) != "eu-central-1/mc03:check-destroyed" {
		t.Errorf("delete_pipeline: %s %v", names(p), err)
	}
}

// TestStepListsAreThePlans: the steps each pipeline's help lists are the
// steps its plans hold, every one of them used by some plan of the golden
// fleets.
func TestStepListsAreThePlans(t *testing.T) {
	seen := map[string]map[string]bool{"central": {}, "regional": {}}
	for _, dir := range []string{"../../golden/minimal", "../../golden/deletions", "../../golden/uneven-sectors"} {
		f := load(t, dir)
		for _, r := range f.Regions {
			for _, plan := range []func() (*pipeline.Plan, error){
				func() (*pipeline.Plan, error) { return pipeline.Central(f, r.Name, "", "r") },
				func() (*pipeline.Plan, error) { return pipeline.Regional(f, r.Name, "", "", "r") },
			} {
				p, err := plan()
				if err != nil {
					continue // a region without such clusters
				}
				for _, s := range p.Steps {
					seen[p.Pipeline][s.Name] = true
				}
			}
		}
	}
	for pipe, list := range map[string][]string{"central": pipeline.CentralSteps, "regional": pipeline.RegionalSteps} {
		for s := range seen[pipe] {
			if !slices.Contains(list, s) {
				t.Errorf("the %s pipeline runs a step %s its list lacks: %v", pipe, s, list)
			}
		}
		for _, s := range list {
			if !seen[pipe][s] {
				t.Errorf("the %s pipeline lists a step %s no plan holds", pipe, s)
			}
		}
	}
}
