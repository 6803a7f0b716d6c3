// Package terraform embeds the variable declarations of the Terraform roots
// (regional-cluster, management-cluster, central-bootstrap) so that render
// can check every tfvars file against the root it feeds.
package terraform

import "embed"

//go:generate go run ../tools/tfshared -root ..

// Roots holds the *.tf files of each root module.
//
//go:embed regional-cluster/*.tf management-cluster/*.tf central-bootstrap/*.tf
var Roots embed.FS

// Root names.
const (
	RegionalCluster   = "regional-cluster"
	ManagementCluster = "management-cluster"
	CentralBootstrap  = "central-bootstrap"
)

// Runtime are the variables of each root that a pipeline passes when it
// runs the root, because only AWS knows them then (account and
// organisation ids) or they name the identity the root acts through.
// Rendered variables files never set them, and render does not ask for
// them; Terraform refuses to run a root without them.
var Runtime = map[string][]string{
	RegionalCluster:   {"account_id", "assume_role_arn", "assume_role_session_name", "management_ou_id", "organization_id", "root_id", "runner_image", "gitops_repo_url"},
	ManagementCluster: {"account_id", "assume_role_arn", "assume_role_external_id", "assume_role_session_name", "regional_account_id", "runner_image", "gitops_repo_url"},
	CentralBootstrap: {"account_id", "assume_role_arn", "assume_role_session_name", "dr_account_id", "dr_assume_role_arn", "management_account_id",
		"management_ou_id", "organization_id", "platform_api_endpoint", "platform_api_id", "regional_oidc_issuer", "regional_ou_id", "root_id"},
}
