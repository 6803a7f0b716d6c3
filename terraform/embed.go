// Package terraform embeds the variable declarations of the Terraform roots
// (regional-cluster, management-cluster, central-bootstrap) so that render
// can check every tfvars file against the root it feeds.
package terraform

import "embed"

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
