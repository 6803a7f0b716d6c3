// Package iam renders the IAM documents of the identity chain of DESIGN.md
// §5 (the central pipeline, the regional pipeline, the minting role and
// ManagementClusterDeployRole, their boundaries, bucket policies and the
// organisation's guardrails) and checks the render-time rules on them.
//
// Entry points: RegionDocuments and CentralPipelinePolicy build the
// documents, CheckIsolation and CheckQuotas enforce the rules at render
// time. Deciding requests is internal/iamjudge's: this package never judges
// its own output.
package iam

import "github.com/regionctl/regionctl/internal/iampolicy"

// The policy language, as internal/iampolicy writes it.
type (
	Document  = iampolicy.Document
	Statement = iampolicy.Statement
	Principal = iampolicy.Principal
	Strings   = iampolicy.Strings
)
