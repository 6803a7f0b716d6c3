package simulator

import (
	"strings"

	"github.com/regionctl/regionctl/internal/iamjudge"
)

// A Settlement is a disagreement of the two judges that AWS's
// documentation decides: which side it takes, and where it says so. Each
// one has a test that shows the simulator still answers otherwise, so a
// settlement that is no longer needed is noticed.
type Settlement struct {
	Name string
	// Source is the documentation that decides it.
	Source string
	// Applies says whether the disagreement on a is this one.
	Applies func(a iamjudge.Authorization, v Verdicts) bool
}

// Settlements are every settled disagreement.
var Settlements = []Settlement{
	{
		Name: "the root user acts in its own account with every permission (the simulator knows no implicit permissions of the root user)",
		Source: "IAM User Guide, \"AWS account root user\": the root user has complete access to all AWS services and resources in the account; " +
			"\"Policy evaluation logic\": only SCPs and RCPs limit it there",
		Applies: func(a iamjudge.Authorization, v Verdicts) bool {
			same := a.ResourceAccount == "" || a.ResourceAccount == a.Caller.Account
			return a.Root && same && v.Ours.Decision == iamjudge.Allow && v.Theirs.Result == "ImplicitlyDenied"
		},
	},
	{
		Name: "an OIDC provider's claims (<issuer>:sub, <issuer>:aud) are keys of sts:AssumeRoleWithWebIdentity (the simulator's service data lists only a few providers' keys and drops the others)",
		Source: "IAM User Guide, \"Available keys for AWS OIDC federation\" (the issuer URL followed by :aud, :sub, :amr); " +
			"Amazon EKS User Guide, \"Assign IAM roles to Kubernetes service accounts\" (a trust policy conditioned on oidc.eks.<region>.amazonaws.com/id/<id>:sub and :aud)",
		Applies: func(a iamjudge.Authorization, v Verdicts) bool {
			if a.Action != "sts:AssumeRoleWithWebIdentity" || v.Theirs.Result != "ImplicitlyDenied" || v.Ours.Decision != iamjudge.Allow {
				return false
			}
			for _, k := range v.Theirs.IgnoredContextKeys {
				if strings.HasSuffix(k, ":sub") || strings.HasSuffix(k, ":aud") {
					return true
				}
			}
			return false
		},
	},
	{
		Name:   "API Gateway's HTTP APIs (/apis, their routes, stages and integrations, a domain's API mappings, VPC links) are resource types of apigateway:GET, POST, PATCH and DELETE (the simulator's data merges API Gateway's two services under one prefix and keeps only the REST APIs' resource types for those actions)",
		Source: "Service Authorization Reference, \"Actions, resources, and condition keys for Amazon API Gateway Management V2\": the actions DELETE, GET, PATCH, POST and PUT on the resource types Api, Apis, Route, Routes, Stage, Stages, Integration, Integrations, ApiMapping, ApiMappings, VpcLink, VpcLinks",
		Applies: func(a iamjudge.Authorization, v Verdicts) bool {
			v2 := strings.Contains(a.Resource, "::/apis") || strings.Contains(a.Resource, "/apimappings") || strings.Contains(a.Resource, "::/vpclinks")
			return strings.HasPrefix(a.Action, "apigateway:") && v2 && strings.HasPrefix(v.Theirs.Refused(), "no.resource.types")
		},
	},
}

// Settled names the settlement of a disagreement on a, or "" when none
// applies.
func Settled(a iamjudge.Authorization, v Verdicts) string {
	for _, s := range Settlements {
		if s.Applies(a, v) {
			return s.Name + " (" + s.Source + ")"
		}
	}
	return ""
}
