// Package pipeline plans the central and regional provisioning pipelines
// of DESIGN.md §5: the ordered steps, each with the account, role,
// ExternalId, Terraform root, variables file, state backend and API call it
// uses. Plans are pure; `regionctl pipeline ... --dry-run` prints them.
//
// Entry points: Central and Regional.
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

// Step is one step of a pipeline run.
type Step struct {
	Cluster     string            `json:"cluster"` // region/cluster
	Name        string            `json:"step"`    // account, assume-role, terraform, bootstrap, register
	Action      string            `json:"action"`  // what it does, in a line
	Account     string            `json:"account,omitempty"`
	AccountRef  string            `json:"account_ref,omitempty"`
	Email       string            `json:"email,omitempty"`
	OU          string            `json:"ou,omitempty"`
	AccountTags map[string]string `json:"account_tags,omitempty"`
	// DeployRoleTrust is the rendered trust policy file of
	// ManagementClusterDeployRole, ensured in a management cluster's account
	// through its BootstrapRole.
	DeployRoleTrust string            `json:"deploy_role_trust,omitempty"`
	BootstrapRole   string            `json:"bootstrap_role,omitempty"`
	RoleARN         string            `json:"role_arn,omitempty"`
	ExternalID      string            `json:"external_id,omitempty"`
	SessionName     string            `json:"session_name,omitempty"`
	Root            string            `json:"terraform_root,omitempty"`
	VarFile         string            `json:"var_file,omitempty"`
	Backend         map[string]string `json:"backend,omitempty"`
	Command         string            `json:"terraform_command,omitempty"` // apply or destroy
	Calls           []string          `json:"api_calls,omitempty"`
	// Endpoint is the platform API's base URL; empty means it is read at run
	// time from the regional cluster's Terraform state (EndpointState).
	Endpoint      string            `json:"api_endpoint,omitempty"`
	EndpointState map[string]string `json:"api_endpoint_state,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
}

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

func backend(c *config.Cluster, key string) map[string]string {
	return map[string]string{"bucket": str(c, "state_bucket"), "key": key, "region": c.Region.Name, "use_lockfile": "true"}
}

func session(requestID string) string { return "regionctl-" + requestID }

// BootstrapRole is the role AWS Organizations creates in every account it
// creates, trusted by the organisation's management account.
const BootstrapRole = "OrganizationAccountAccessRole"

func accountStep(c *config.Cluster, requestID string) Step {
	return Step{Cluster: c.ID(), Name: "account", Account: str(c, "account", "name"), AccountRef: str(c, "account", "id_ref"),
		Email: str(c, "account", "email"), OU: str(c, "account", "ou"),
		AccountTags: map[string]string{"regionctl:region": c.Region.Name, "regionctl:cluster": c.Name, "regionctl:request-id": requestID},
		Action:      fmt.Sprintf("find the account %s by name in AWS Organizations, or create it (polling DescribeCreateAccountStatus) and move it to %s", str(c, "account", "name"), str(c, "account", "ou"))}
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

// Central plans the central pipeline of a region: the regional cluster's
// account, its Terraform, and the regional pipeline's bootstrap.
func Central(f *config.Fleet, regionName, requestID string) (*Plan, error) {
	r, err := region(f, regionName)
	if err != nil {
		return nil, err
	}
	var rc *config.Cluster
	for _, c := range f.Clusters {
		if c.Region == r && c.Type == "regional" {
			rc = c
		}
	}
	if rc == nil || rc.Effective == nil {
		return nil, fmt.Errorf("region %s has no valid regional cluster", regionName)
	}
	p := &Plan{Pipeline: "central", Region: regionName, RequestID: requestID}
	p.Steps = append(p.Steps, accountStep(rc, requestID))
	p.Steps = append(p.Steps, Step{Cluster: rc.ID(), Name: "assume-role", Action: "assume the account's bootstrap role",
		RoleARN: "arn:aws:iam::${account_id}:role/" + BootstrapRole, SessionName: session(requestID)})
	command := "apply"
	if rc.Bool("delete") {
		command = "destroy"
	}
	p.Steps = append(p.Steps, Step{Cluster: rc.ID(), Name: "terraform", Action: "terraform init with the S3 backend (state bucket created when missing), then " + command,
		Root: path.Join("terraform", terraform.RegionalCluster), VarFile: tfvars(rc), Command: command,
		Backend: backend(rc, path.Join(terraform.RegionalCluster, regionName, rc.Name+".tfstate"))})
	dir := regionDir(rc)
	p.Steps = append(p.Steps, Step{Cluster: rc.ID(), Name: "bootstrap", Command: "apply",
		Action: fmt.Sprintf("bootstrap the regional pipeline: role %s with the region-scoped policy, its state bucket %s, and %s trusting it with ExternalId %s",
			iam.PipelineRoleName(regionName), iam.StateBucket(regionName), iam.DeployRoleName, iam.ExternalID(regionName)),
		Root: path.Join("terraform", terraform.CentralBootstrap), VarFile: path.Join(dir, "terraform", terraform.CentralBootstrap+".tfvars.json"),
		Backend: backend(rc, path.Join(terraform.CentralBootstrap, regionName+".tfstate"))})
	return p, nil
}

// Regional plans the regional pipeline of a region: for each management
// cluster (or only cluster, which must be of that region), its account,
// the deploy role, Terraform apply or destroy, and registration.
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
	var endpointState map[string]string
	if apiEndpoint == "" {
		for _, c := range f.Clusters {
			if c.Region == r && c.Type == "regional" && c.Effective != nil {
				endpointState = backend(c, path.Join(terraform.RegionalCluster, regionName, c.Name+".tfstate"))
				delete(endpointState, "use_lockfile")
			}
		}
	}
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
			p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "none", Action: "delete_pipeline: nothing runs; the pipeline definition is removed"})
			continue
		}
		command := "apply"
		if c.Bool("delete") {
			command = "destroy"
		}
		account := accountStep(c, requestID)
		account.Action += ", then ensure " + iam.DeployRoleName + " in it (through " + BootstrapRole + ") with the rendered trust"
		account.DeployRoleTrust = path.Join(regionDir(c), "iam", "management-cluster-deploy-role-trust.json")
		account.BootstrapRole = "arn:aws:iam::${account_id}:role/" + BootstrapRole
		p.Steps = append(p.Steps, account)
		p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "assume-role", Action: "assume the deploy role of the cluster's account",
			RoleARN: "arn:aws:iam::${account_id}:role/" + iam.DeployRoleName, ExternalID: iam.ExternalID(regionName), SessionName: session(requestID)})
		p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "terraform", Action: "terraform init with the S3 backend, then " + command,
			Root: path.Join("terraform", terraform.ManagementCluster), VarFile: tfvars(c), Command: command,
			Backend: backend(c, path.Join(terraform.ManagementCluster, regionName, c.Name+".tfstate"))})
		if command == "apply" {
			labels := map[string]string{"cluster_type": "management", "region": regionName, "sector": c.SectorName(), "environment": c.Environment()}
			body, _ := json.Marshal(map[string]any{"name": c.Name, "labels": labels})
			p.Steps = append(p.Steps, Step{Cluster: c.ID(), Name: "register", Action: "register the cluster with the platform API (SigV4, execute-api); 201, 409 and \"already exists\" count as registered",
				Endpoint: apiEndpoint, EndpointState: endpointState, Labels: labels,
				Calls: []string{"GET " + shownEndpoint + "/api/v0/live", "POST " + shownEndpoint + "/api/v0/management_clusters " + string(body)}})
		}
	}
	if len(p.Steps) == 0 {
		return nil, fmt.Errorf("region %s has no management cluster to run", regionName)
	}
	return p, nil
}
