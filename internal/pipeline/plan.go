// Package pipeline plans and runs the central and regional provisioning
// pipelines of DESIGN.md §5: the ordered steps, each with the account,
// role, ExternalId, Terraform root, variables file, state backend and API
// call it uses. Plans are pure; `regionctl pipeline ... --dry-run` prints
// them, and Runner carries them out.
//
// Entry points: Central, Regional and Runner.Run.
package pipeline

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/terraform"
)

// Step is one step of a pipeline run. Values written ${name} are known
// only at run time (account and organisation ids, the assumed role,
// Terraform outputs) and are filled in from what earlier steps learned.
type Step struct {
	Cluster     string            `json:"cluster"` // region/cluster
	Name        string            `json:"step"`    // account, assume-role, terraform, bootstrap, register
	Action      string            `json:"action"`  // what it does, in a line
	Account     string            `json:"account,omitempty"`
	Email       string            `json:"email,omitempty"`
	OU          string            `json:"ou,omitempty"`
	AccountTags map[string]string `json:"account_tags,omitempty"`
	CreateOU    bool              `json:"create_ou,omitempty"`
	// ManagementOU is the OU path of the region's management cluster
	// accounts, which the central pipeline makes sure exists.
	ManagementOU string `json:"management_ou,omitempty"`
	// DRAccount is the region's disaster-recovery account, which the
	// central pipeline's account step finds or creates beside the regional
	// account.
	DRAccount *DRAccount `json:"dr_account,omitempty"`
	// Handoff is the SSM parameter the regional pipeline reads first; the
	// minting role comes from it.
	Handoff     string `json:"handoff_parameter,omitempty"`
	MintingRole string `json:"minting_role,omitempty"`
	// StackSet is the region's StackSet that deploys the deploy role into
	// an account placed in the region's OU, which the account step waits
	// for.
	StackSet    string `json:"stack_set,omitempty"`
	RoleARN     string `json:"role_arn,omitempty"`
	ExternalID  string `json:"external_id,omitempty"`
	SessionName string `json:"session_name,omitempty"`
	SessionTags bool   `json:"session_tags,omitempty"`
	Root        string `json:"terraform_root,omitempty"`
	VarFile     string `json:"var_file,omitempty"`
	// Documents is the repository's directory of rendered documents the
	// root reads (staged as its DocumentsDir): the region's IAM documents.
	Documents string `json:"documents,omitempty"`
	// Vars are the root's run-time variables (terraform.Runtime).
	Vars    map[string]string `json:"terraform_vars,omitempty"`
	Backend map[string]string `json:"backend,omitempty"`
	// BucketOwner is the account that must own the state bucket;
	// CreateBucket lets the step create it (the central pipeline's own).
	BucketOwner  string `json:"bucket_owner,omitempty"`
	CreateBucket bool   `json:"create_bucket,omitempty"`
	Command      string `json:"terraform_command,omitempty"` // apply or destroy
	// Approval says the run applies only a reviewed plan an approver
	// approved (a destroy, or a sector with approval: always).
	Approval bool     `json:"approval,omitempty"`
	Calls    []string `json:"api_calls,omitempty"`
	// Endpoint is the platform API's base URL; empty means the one the
	// central pipeline's handoff names, read at run time.
	Endpoint string            `json:"api_endpoint,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	// RootDocuments are the cluster's rendered AppProject and root
	// Application (files under deploy/), which the argocd step hands its
	// bootstrap task.
	RootDocuments []string `json:"root_documents,omitempty"`
}

// DRAccount names a region's disaster-recovery account.
type DRAccount struct {
	Name  string            `json:"name"`
	Email string            `json:"email"`
	OU    string            `json:"ou"`
	Tags  map[string]string `json:"tags"`
}

// DRAccountCluster is the regionctl:cluster tag of a DR account: it is
// adopted by name only when tagged so (with its region and environment).
const DRAccountCluster = "etcd-backup"

// Plan is the ordered steps of one run.
type Plan struct {
	Pipeline  string `json:"pipeline"` // central or regional
	Region    string `json:"region"`
	RequestID string `json:"request_id"`
	Steps     []Step `json:"steps"`
}

func str(c *config.Cluster, path ...string) string {
	if v := c.Effective.Lookup(path...); v != nil && v.Kind == config.String {
		return v.Str
	}
	return ""
}

func tfvars(c *config.Cluster) string {
	return path.Join("deploy", render.RegionDir(c.Environment(), c.Region.Name), "terraform", c.Name+".tfvars.json")
}

func backend(bucket, key, region string) map[string]string {
	return map[string]string{"bucket": bucket, "key": key, "region": region, "use_lockfile": "true"}
}

func session(requestID string) string { return "regionctl-" + requestID }

// StateKey is the key of a cluster's Terraform state in its bucket.
func StateKey(root, region, cluster string) string {
	return path.Join(root, region, cluster+".tfstate")
}

func accountStep(c *config.Cluster, requestID string) Step {
	return Step{Cluster: c.ID(), Name: "account", Account: str(c, "account", "name"),
		Email: str(c, "account", "email"), OU: str(c, "account", "ou"),
		AccountTags: map[string]string{iam.RegionTag: c.Region.Name, iam.EnvironmentTag: c.Environment(), iam.ClusterTag: c.Name, iam.RequestIDTag: requestID}}
}

func regionDir(c *config.Cluster) string {
	return path.Join("deploy", render.RegionDir(c.Environment(), c.Region.Name))
}

func region(f *config.Fleet, name string) (*config.Region, error) {
	for _, r := range f.Regions {
		if r.Name == name {
			return r, nil
		}
	}
	var names []string
	for _, r := range f.Regions {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("no region %s in the fleet; regions: %v", name, names)
}

func regionalCluster(f *config.Fleet, r *config.Region) *config.Cluster {
	for _, c := range f.Clusters {
		if c.Region == r && c.Type == "regional" && c.Effective != nil {
			return c
		}
	}
	return nil
}

// Central plans the central pipeline of a region: the regional account,
// reached through its AccessRole; the regional cluster's Terraform; and
// the regional pipeline's bootstrap.
func Central(f *config.Fleet, regionName, cluster, requestID string) (*Plan, error) {
	r, err := region(f, regionName)
	if err != nil {
		return nil, err
	}
	rc := regionalCluster(f, r)
	if rc == nil {
		return nil, fmt.Errorf("region %s has no valid regional cluster", regionName)
	}
	if cluster != "" && cluster != rc.Name {
		return nil, fmt.Errorf("the central pipeline of %s runs for its regional cluster %s; --cluster %s is not it (management clusters run in the regional pipeline)", regionName, rc.ID(), cluster)
	}
	partition := iam.Partition(regionName)
	p := &Plan{Pipeline: "central", Region: regionName, RequestID: requestID}
	account := accountStep(rc, requestID)
	account.CreateOU = true
	for _, c := range f.Clusters {
		if c.Region == r && c.Type == "management" && c.Effective != nil && account.ManagementOU == "" {
			account.ManagementOU = str(c, "account", "ou")
		}
	}
	account.Action = fmt.Sprintf("find the account %s in AWS Organizations (adopted only when tagged for %s), or create it, and move it to %s", account.Account, rc.ID(), account.OU)
	if account.ManagementOU != "" {
		account.Action += fmt.Sprintf("; make sure the OU %s of the region's management clusters exists", account.ManagementOU)
	}
	if name := str(rc, "etcd_backup", "account", "name"); name != "" {
		account.DRAccount = &DRAccount{Name: name, Email: str(rc, "etcd_backup", "account", "email"), OU: str(rc, "etcd_backup", "account", "ou"),
			Tags: map[string]string{iam.RegionTag: regionName, iam.EnvironmentTag: rc.Environment(), iam.ClusterTag: DRAccountCluster, iam.RequestIDTag: requestID}}
		account.Action += fmt.Sprintf("; find the region's DR account %s (adopted only when tagged for %s/%s), or create it, and move it to %s", name, regionName, DRAccountCluster, account.DRAccount.OU)
	}
	p.Steps = append(p.Steps, account)
	accessRole := iam.RoleARN(partition, "${account_id}", iam.AccessRole)
	p.Steps = append(p.Steps, Step{Cluster: rc.ID(), Name: "assume-role", Action: "assume the regional account's " + iam.AccessRole + " (as the central pipeline) and check the identity it gives",
		RoleARN: accessRole, SessionName: session(requestID)})
	command := "apply"
	if rc.Bool("delete") {
		command = "destroy"
	}
	bucket := str(rc, "state_bucket")
	runtime := map[string]string{"account_id": "${account_id}", "assume_role_arn": "${assumed_role_arn}", "assume_role_session_name": session(requestID),
		"organization_id": "${organization_id}", "root_id": "${root_id}", "management_ou_id": "${management_ou_id}", "runner_image": runnerImage(f), "gitops_repo_url": fleetRepoURL(f)}
	p.Steps = append(p.Steps, Step{Cluster: rc.ID(), Name: "terraform", Command: command,
		Action: "terraform init with the central state bucket (created when missing, owned by the management account), then " + command + " through the assumed role",
		Root:   path.Join("terraform", terraform.RegionalCluster), VarFile: tfvars(rc), Vars: runtime, Approval: rc.NeedsApproval(),
		Backend: backend(bucket, StateKey(terraform.RegionalCluster, regionName, rc.Name), regionName), BucketOwner: "${management_account_id}", CreateBucket: true})
	if command == "destroy" {
		return p, nil
	}
	p.Steps = append(p.Steps, argocdStep(rc, Step{RoleARN: accessRole, SessionName: session(requestID)}))
	boot := map[string]string{"management_account_id": "${management_account_id}", "organization_id": "${organization_id}", "root_id": "${root_id}",
		"management_ou_id": "${management_ou_id}", "regional_oidc_issuer": "${output.oidc_issuer}", "platform_api_endpoint": "${output.platform_api_endpoint}",
		"platform_api_id": "${output.platform_api_id}", "regional_ou_id": "${regional_ou_id}",
		"dr_account_id": "${dr_account_id}", "dr_assume_role_arn": iam.RoleARN(partition, "${dr_account_id}", iam.AccessRole)}
	for k, v := range runtime {
		if k != "runner_image" && k != "gitops_repo_url" {
			boot[k] = v
		}
	}
	dir := regionDir(rc)
	p.Steps = append(p.Steps, Step{Cluster: rc.ID(), Name: "bootstrap", Command: "apply",
		Action: fmt.Sprintf("bootstrap the regional pipeline: role %s (trusted by the regional cluster's Tekton ServiceAccount), its state bucket %s, the handoff parameter, and the minting role %s of the management account; in the DR account, the etcd snapshot bucket %s",
			iam.PipelineRoleName(regionName), str(firstManagement(f, r, rc), "state_bucket"), iam.MintingRoleName(regionName), str(rc, "etcd_backup", "bucket")),
		Root: path.Join("terraform", terraform.CentralBootstrap), VarFile: path.Join(dir, "terraform", terraform.CentralBootstrap+".tfvars.json"), Documents: path.Join(dir, "iam"), Vars: boot, Approval: rc.NeedsApproval(),
		Backend: backend(bucket, path.Join(terraform.CentralBootstrap, regionName+".tfstate"), regionName), BucketOwner: "${management_account_id}"})
	return p, nil
}

// CentralSteps and RegionalSteps name each pipeline's steps in the order
// they run (a plan holds those its clusters need).
var (
	CentralSteps  = []string{"account", "assume-role", "terraform", "argocd", "bootstrap"}
	RegionalSteps = []string{"account", "assume-role", "terraform", "argocd", "register", "check-destroyed"}
)

// runnerImage is gitops.runner_image: the image the Tekton Tasks run, and
// the clusters' bootstrap tasks.
func runnerImage(f *config.Fleet) string { return gitops(f, "runner_image") }

// fleetRepoURL is gitops.repo_url: the one source a cluster's bootstrap
// task accepts for its root Application.
func fleetRepoURL(f *config.Fleet) string { return gitops(f, "repo_url") }

// gitops is the string setting key of config/global's gitops, or "".
func gitops(f *config.Fleet, key string) string {
	if g := f.Global.Get("gitops"); g != nil {
		if v := g.Get(key); v != nil && v.Kind == config.String {
			return v.Str
		}
	}
	return ""
}

// argocdStep starts the cluster's bootstrap task (made by its root) after
// the apply, through the role the cluster's Terraform acted as (as): the
// task installs Argo CD in the cluster and applies its rendered root.
func argocdStep(c *config.Cluster, as Step) Step {
	as.Cluster, as.Name = c.ID(), "argocd"
	dir := path.Join(regionDir(c), "argocd", c.Name)
	as.RootDocuments = []string{path.Join(dir, "apps", "project.yaml"), path.Join(dir, "root.yaml")}
	as.Action = fmt.Sprintf("start the cluster's bootstrap task (ECS Fargate, in its private subnets, as its bootstrap role) with %s and %s, and wait for it: it installs Argo CD, that AppProject and that root Application, which then manages the cluster",
		as.RootDocuments[0], as.RootDocuments[1])
	return as
}

// firstManagement is the region's first management cluster, or rc.
func firstManagement(f *config.Fleet, r *config.Region, rc *config.Cluster) *config.Cluster {
	for _, c := range f.Clusters {
		if c.Region == r && c.Type == "management" && c.Effective != nil {
			return c
		}
	}
	return rc
}

// Regional plans the regional pipeline of a region: for each management
// cluster (or only cluster, which must be of that region), its account
// through the region's minting role, the deploy role assumed with the
// region's ExternalId, Terraform apply or destroy, and registration.
func Regional(f *config.Fleet, regionName, cluster, apiEndpoint, requestID string) (*Plan, error) {
	r, err := region(f, regionName)
	if err != nil {
		return nil, err
	}
	if cluster != "" {
		var elsewhere *config.Cluster
		found := false
		for _, c := range f.Clusters {
			if c.Name == cluster && c.Type == "management" {
				if c.Region == r {
					found = true
				} else if elsewhere == nil {
					elsewhere = c
				}
			}
		}
		if !found && elsewhere != nil {
			return nil, fmt.Errorf("refusing %s: the regional pipeline of %s handles only its own region's management clusters", elsewhere.ID(), regionName)
		}
		if !found {
			return nil, fmt.Errorf("no management cluster %s in region %s", cluster, regionName)
		}
	}
	partition := iam.Partition(regionName)
	shownEndpoint := apiEndpoint
	if shownEndpoint == "" {
		shownEndpoint = "${platform_api_endpoint}"
	}
	p := &Plan{Pipeline: "regional", Region: regionName, RequestID: requestID}
	for _, c := range f.Clusters {
		if c.Region != r || c.Type != "management" || (cluster != "" && c.Name != cluster) || c.Effective == nil {
			continue
		}
		if c.Bool("delete_pipeline") {
			// The pipeline's last word on a cluster: it goes only after a
			// run recorded that its destroy completed.
			p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "check-destroyed",
				Action:  "delete_pipeline: check that a run recorded a completed destroy next to the cluster's state (refuse otherwise); nothing else runs, and the pipeline definition is removed",
				Backend: backend(str(c, "state_bucket"), StateKey(terraform.ManagementCluster, regionName, c.Name), regionName)})
			continue
		}
		command := "apply"
		if c.Bool("delete") {
			command = "destroy"
		}
		account := accountStep(c, requestID)
		account.Handoff = iam.ParameterName(regionName)
		account.MintingRole = "${minting_role_arn}"
		account.ExternalID = iam.ExternalID(regionName)
		account.SessionName = session(requestID)
		account.StackSet = iam.DeployRoleStackSet(regionName)
		account.Action = fmt.Sprintf("read the central pipeline's handoff %s; through the region's minting role (ExternalId %s), find the account %s (adopted only when tagged for %s) or create it with those tags, move it from the root to %s and mark it placed; wait for AWS CloudFormation to deploy %s there (StackSet %s)",
			account.Handoff, account.ExternalID, account.Account, c.ID(), account.OU, iam.DeployRoleName, account.StackSet)
		p.Steps = append(p.Steps, account)
		p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "assume-role", Action: "assume the deploy role of the cluster's account and check the identity it gives",
			RoleARN: iam.RoleARN(partition, "${account_id}", iam.DeployRoleName), ExternalID: iam.ExternalID(regionName), SessionName: session(requestID), SessionTags: true})
		runtime := map[string]string{"account_id": "${account_id}", "assume_role_arn": "${assumed_role_arn}",
			"assume_role_external_id": iam.ExternalID(regionName), "assume_role_session_name": session(requestID), "regional_account_id": "${pipeline_account_id}",
			"runner_image": runnerImage(f), "gitops_repo_url": fleetRepoURL(f)}
		p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "terraform", Action: "terraform init with the region's management cluster state bucket (owned by the regional account), then " + command + " through the deploy role",
			Root: path.Join("terraform", terraform.ManagementCluster), VarFile: tfvars(c), Command: command, Vars: runtime, Approval: c.NeedsApproval(),
			Backend: backend(str(c, "state_bucket"), StateKey(terraform.ManagementCluster, regionName, c.Name), regionName), BucketOwner: "${pipeline_account_id}"})
		if command == "apply" {
			p.Steps = append(p.Steps, argocdStep(c, Step{RoleARN: iam.RoleARN(partition, "${account_id}", iam.DeployRoleName),
				ExternalID: iam.ExternalID(regionName), SessionName: session(requestID), SessionTags: true}))
			labels := map[string]string{"cluster_type": "management", "region": regionName, "sector": c.SectorName(), "environment": c.Environment()}
			body, _ := json.Marshal(map[string]any{"name": c.Name, "labels": labels})
			p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "register", Action: "register the cluster with the platform API (SigV4, execute-api); 201 and 409 count as registered",
				Endpoint: apiEndpoint, Labels: labels,
				Calls: []string{"GET " + shownEndpoint + "/api/v0/live", "POST " + shownEndpoint + "/api/v0/management_clusters " + string(body)}})
		}
	}
	if len(p.Steps) == 0 {
		return nil, fmt.Errorf("region %s has no management cluster to run", regionName)
	}
	return p, nil
}

// OnlyStep keeps only the steps named step ("" keeps every step); a
// pipeline without such a step is an error.
func (p *Plan) OnlyStep(step string) error {
	if step == "" {
		return nil
	}
	var kept []Step
	for _, s := range p.Steps {
		if s.Name == step {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("the %s pipeline has no step %q", p.Pipeline, step)
	}
	p.Steps = kept
	return nil
}

// Expected is what a PipelineRun was rendered to do, as its caller says:
// the role and ExternalId each assume-role step assumes, the variables
// file and the command (apply or destroy) of each terraform step; ""
// expects nothing of that field.
type Expected struct {
	RoleARN, ExternalID string
	TFVars, Command     string
}

// Holds refuses a plan that differs from what its PipelineRun expects: the
// run is stale (rendered from another config) and must not act.
func (p *Plan) Holds(e Expected) error {
	for _, s := range p.Steps {
		var checks [][3]string // flag, expected, planned
		switch s.Name {
		case "assume-role":
			checks = [][3]string{{"--role-arn", e.RoleARN, s.RoleARN}, {"--external-id", e.ExternalID, s.ExternalID}}
		case "terraform":
			checks = [][3]string{{"--tfvars", e.TFVars, s.VarFile}, {"--destroy", e.Command, s.Command}}
		}
		for _, c := range checks {
			if c[1] != "" && c[1] != c[2] {
				return fmt.Errorf("%s %s: the caller expects %s %q but the fleet config plans %q; the PipelineRun is stale: re-render deploy/ and start it again", s.Cluster, s.Name, c[0], c[1], c[2])
			}
		}
	}
	return nil
}
