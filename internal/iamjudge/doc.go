// Package iamjudge decides requests against IAM policies as AWS's policy
// evaluation logic does: Evaluate for the policies of one kind, Authorize
// for everything AWS weighs on one request (identity policies, boundary,
// session policies, the resource's policy, the organisation's SCPs and
// RCPs).
//
// It is the project's own judge and generates nothing: internal/render/iam
// writes the documents, the IAM gate of internal/awsemu and the isolation
// tests ask this package, and internal/iamjudge/simulator asks a second
// judge that others maintain the same questions.
package iamjudge

import "github.com/regionctl/regionctl/internal/iampolicy"

// The policy language, as internal/iampolicy reads it.
type (
	Document  = iampolicy.Document
	Statement = iampolicy.Statement
	Principal = iampolicy.Principal
	Strings   = iampolicy.Strings
)
