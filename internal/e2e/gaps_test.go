package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/regionctl/regionctl/internal/pipeline"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/tfrun"
	"github.com/regionctl/regionctl/terraform"
)

// emulatorGaps are the resources the emulator overrides leave out of
// emulator runs (internal/tfrun/emulator.go), with what each must be when
// a plan with the overrides lifted proposes it, by address within a
// cluster root.
var emulatorGaps = map[string]func(after map[string]any, outputs map[string]string) error{
	"module.cluster.module.eks.aws_eks_addon.ebs_csi": func(a map[string]any, out map[string]string) error {
		if a["addon_name"] != "aws-ebs-csi-driver" {
			return fmt.Errorf("addon %v", a["addon_name"])
		}
		return nil
	},
	"module.cluster.module.eks.aws_eks_addon.pod_identity_agent": func(a map[string]any, out map[string]string) error {
		if a["addon_name"] != "eks-pod-identity-agent" {
			return fmt.Errorf("addon %v", a["addon_name"])
		}
		return nil
	},
	"module.cluster.module.eks.aws_eks_access_entry.bootstrap": func(a map[string]any, out map[string]string) error {
		if a["principal_arn"] != out["bootstrap_role_arn"] || a["type"] != "STANDARD" {
			return fmt.Errorf("access entry of %v (%v), want the bootstrap role %s", a["principal_arn"], a["type"], out["bootstrap_role_arn"])
		}
		return nil
	},
	"module.cluster.module.eks.aws_eks_access_policy_association.bootstrap": func(a map[string]any, out map[string]string) error {
		scope, _ := a["access_scope"].([]any)
		if a["principal_arn"] != out["bootstrap_role_arn"] || !strings.HasSuffix(fmt.Sprint(a["policy_arn"]), ":cluster-access-policy/AmazonEKSClusterAdminPolicy") ||
			len(scope) != 1 || scope[0].(map[string]any)["type"] != "cluster" {
			return fmt.Errorf("association %v of %v over %v", a["policy_arn"], a["principal_arn"], scope)
		}
		return nil
	},
}

// gapJob is one root of a cluster the pipelines applied, with what the
// pipeline ran it with.
type gapJob struct {
	pipeline string // whose pod plans it: central or regional
	job      pipeline.TerraformJob
	outputs  map[string]string
}

// planGaps plans each job again, as its pipeline's pod, with the emulator
// overrides lifted (tfrun.Runner.WithGaps): Terraform must propose exactly
// the resources the emulator cannot create, as the product's roots declare
// them, and change nothing else. This is the plan-only check of what moto
// lacks, and a second plan of the roots the test applied only once.
func (e *env) planGaps(jobs ...gapJob) {
	t := e.t
	var wg sync.WaitGroup
	problems := make([][]string, len(jobs))
	for i, g := range jobs {
		// The test's environment (terraform's CLI configuration included),
		// as the pipeline's pod has it.
		env := maps.Clone(e.vars)
		maps.Copy(env, e.podEnv(g.pipeline, region))
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &tfrun.Runner{Source: e.roots, WorkDir: e.work, Template: template, Emulator: e.proxy.URL, Env: env, WithGaps: true}
			plan, _, err := r.ShowPlan(context.Background(), g.job)
			if err != nil {
				problems[i] = []string{fmt.Sprintf("%s: %v", g.job.Cluster, err)}
				return
			}
			problems[i] = gapProblems(g.job.Cluster, plan, g.outputs)
		}()
	}
	wg.Wait()
	for _, p := range problems {
		for _, s := range p {
			t.Error(s)
		}
	}
}

// gapProblems holds a plan to emulatorGaps: every gap created as declared,
// nothing else changed.
func gapProblems(cluster string, plan *tfjson.Plan, outputs map[string]string) []string {
	var problems []string
	seen := map[string]bool{}
	for _, rc := range plan.ResourceChanges {
		actions := rc.Change.Actions
		if actions.NoOp() || actions.Read() {
			continue
		}
		check, gap := emulatorGaps[rc.Address]
		if !gap || !actions.Create() {
			problems = append(problems, fmt.Sprintf("%s: the plan would %v %s (%s)", cluster, actions, rc.Address, changed(rc.Change)))
			continue
		}
		seen[rc.Address] = true
		after, _ := rc.Change.After.(map[string]any)
		if err := check(after, outputs); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s: %v", cluster, rc.Address, err))
		}
	}
	var missing []string
	for a := range emulatorGaps {
		if !seen[a] {
			missing = append(missing, a)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%s: the plan does not propose %v, which emulator runs leave out", cluster, missing))
	}
	return slices.Clip(problems)
}

// managementGapJob is the management cluster root of cluster in account, as
// the regional pipeline runs it.
func (e *env) managementGapJob(cluster, account string, outputs map[string]string) gapJob {
	return gapJob{pipeline: "regional", outputs: outputs, job: pipeline.TerraformJob{
		Cluster: region + "/" + cluster, Root: terraform.ManagementCluster, Region: region,
		VarFile: filepath.Join(e.root, "deploy/staging", region, "terraform", cluster+".tfvars.json"),
		Vars: map[string]string{"account_id": account, "assume_role_arn": iam.RoleARN("aws", account, iam.DeployRoleName),
			"assume_role_external_id": iam.ExternalID(region), "assume_role_session_name": "regionctl-gap-plan", "regional_account_id": e.regionalAccount,
			"runner_image": e.runnerImage(), "gitops_repo_url": e.repoURL()},
		Backend: map[string]string{"bucket": iam.StateBucket(region), "key": pipeline.StateKey(terraform.ManagementCluster, region, cluster), "region": region, "use_lockfile": "true"},
	}}
}

// runnerImage and repoURL are the fleet's gitops.runner_image and
// gitops.repo_url, which the pipelines pass the cluster roots for their
// bootstrap tasks.
func (e *env) runnerImage() string { return e.gitops("runner_image") }
func (e *env) repoURL() string     { return e.gitops("repo_url") }

func (e *env) gitops(key string) string {
	b, err := os.ReadFile(filepath.Join(e.root, "config", "global", "00-platform.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^  ` + key + `: (\S+)$`).FindSubmatch(b)
	if m == nil {
		e.t.Fatalf("config/global/00-platform.yaml sets no gitops.%s", key)
	}
	return string(m[1])
}

// regionalGapJob is the regional cluster root, as the central pipeline
// runs it; a management cluster account of the region tells its OU.
func (e *env) regionalGapJob(managementAccount string, outputs map[string]string) gapJob {
	ctx := context.Background()
	orgs := e.orgs()
	org, err := orgs.DescribeOrganization(ctx, &organizations.DescribeOrganizationInput{})
	if err != nil {
		e.t.Fatal(err)
	}
	roots, err := orgs.ListRoots(ctx, &organizations.ListRootsInput{})
	if err != nil {
		e.t.Fatal(err)
	}
	parents, err := orgs.ListParents(ctx, &organizations.ListParentsInput{ChildId: aws.String(managementAccount)})
	if err != nil || len(parents.Parents) != 1 {
		e.t.Fatalf("the OU of %s: %v %v", managementAccount, parents, err)
	}
	return gapJob{pipeline: "central", outputs: outputs, job: pipeline.TerraformJob{
		Cluster: region + "/regional", Root: terraform.RegionalCluster, Region: region,
		VarFile: filepath.Join(e.root, "deploy/staging", region, "terraform", "regional.tfvars.json"),
		Vars: map[string]string{"account_id": e.regionalAccount, "assume_role_arn": iam.RoleARN("aws", e.regionalAccount, iam.AccessRole),
			"assume_role_session_name": "regionctl-gap-plan", "organization_id": aws.ToString(org.Organization.Id),
			"root_id": aws.ToString(roots.Roots[0].Id), "management_ou_id": aws.ToString(parents.Parents[0].Id), "runner_image": e.runnerImage(), "gitops_repo_url": e.repoURL()},
		Backend: map[string]string{"bucket": "regionctl-tfstate-" + region + "-regional", "key": pipeline.StateKey(terraform.RegionalCluster, region, "regional"), "region": region, "use_lockfile": "true"},
	}}
}

// changed names the attributes a change alters, with their values before
// and after, or the ones it replaces the resource for.
func changed(c *tfjson.Change) string {
	before, _ := c.Before.(map[string]any)
	after, _ := c.After.(map[string]any)
	unknown, _ := c.AfterUnknown.(map[string]any)
	sensitive, _ := c.AfterSensitive.(map[string]any)
	var out []string
	for k, a := range after {
		if b := before[k]; fmt.Sprint(a) != fmt.Sprint(b) {
			if sensitive[k] == true {
				out = append(out, k+": (sensitive, changed)")
				continue
			}
			out = append(out, fmt.Sprintf("%s: %v -> %v", k, b, a))
		}
	}
	for k := range unknown {
		if unknown[k] == true {
			out = append(out, k+": (known after apply)")
		}
	}
	for _, p := range c.ReplacePaths {
		out = append(out, fmt.Sprintf("replaced for %v", p))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
