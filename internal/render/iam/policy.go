// Package iam renders the region-scoped IAM documents of the regional
// pipeline and enforces the isolation rules of DESIGN.md §5 on them.
//
// Entry points: PipelinePolicy and DeployRoleTrust build a region's
// documents, CheckIsolation enforces the rules at render time, and Evaluate
// decides a request against policies (used by the isolation tests).
package iam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Document is an IAM policy document. Action, Resource and Condition values
// that AWS accepts as a string or a list are always lists here.
type Document struct {
	Version   string      `json:"Version"`
	ID        string      `json:"Id,omitempty"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement of a policy.
type Statement struct {
	Sid         string     `json:"Sid,omitempty"`
	Effect      string     `json:"Effect"`
	Principal   *Principal `json:"Principal,omitempty"`
	Action      Strings    `json:"Action,omitempty"`
	NotAction   Strings    `json:"NotAction,omitempty"`
	Resource    Strings    `json:"Resource,omitempty"`
	NotResource Strings    `json:"NotResource,omitempty"`
	// Condition maps an operator (StringEquals, ...) to keys and their values.
	Condition map[string]map[string]Strings `json:"Condition,omitempty"`
}

// Principal names who a trust policy trusts.
type Principal struct {
	AWS     Strings `json:"AWS,omitempty"`
	Service Strings `json:"Service,omitempty"`
}

// Strings is a JSON string or list of strings.
type Strings []string

// UnmarshalJSON accepts a string or a list of strings.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*s = many
	return nil
}

// Names used by the documents.
const (
	DeployRoleName = "ManagementClusterDeployRole"
	// AccountIDPlaceholder is replaced with the regional pipeline's account
	// id by terraform/central-bootstrap when it creates the deploy role.
	AccountIDPlaceholder = "${pipeline_account_id}"
	RegionTag            = "regionctl:region"
	centralPrefix        = "regionctl-central-"
)

// PipelineRoleName is the regional pipeline's role in a region.
func PipelineRoleName(region string) string { return "regional-pipeline-" + region }

// ExternalID is the ExternalId the regional pipeline of region presents.
func ExternalID(region string) string { return "regional-pipeline-" + region }

// StateBucket is the regional pipeline's Terraform state bucket.
func StateBucket(region string) string { return "regionctl-regional-pipeline-" + region }

// regionScopedServices are the services the regional pipeline provisions
// with; every action on them is conditioned on aws:RequestedRegion.
var regionScopedServices = []string{
	"apigateway:*", "autoscaling:*", "ec2:*", "eks:*", "elasticloadbalancing:*",
	"iot:*", "kms:*", "logs:*", "s3:*", "ssm:GetParameter", "ssm:GetParameters",
	"secretsmanager:GetSecretValue", "sts:GetCallerIdentity",
}

// GlobalOnly lists every action the regional pipeline may call that AWS
// serves from a global endpoint, so that aws:RequestedRegion cannot scope it
// (IAM and Organizations requests are always made to us-east-1). Each is
// scoped by resource name or request tag instead; the list is minimal:
//
//   - iam role and OIDC provider actions: EKS needs a cluster role, a node
//     role and an OIDC provider per cluster. Resources are limited to names
//     that start with the region (roles "<region>-*", providers of
//     "oidc.eks.<region>.amazonaws.com"), so a pipeline reaches only its own
//     region's identities.
//   - organizations:CreateAccount: a new management cluster gets its own
//     account; the request must tag it with the pipeline's region.
//   - organizations:DescribeCreateAccountStatus and ListAccounts: read-only
//     and account-wide (no resource-level scoping exists); they let the
//     pipeline find its accounts by name and wait for creation. They reveal
//     account names and change nothing.
var GlobalOnly = []string{
	"iam:AttachRolePolicy", "iam:CreateOpenIDConnectProvider", "iam:CreateRole",
	"iam:DeleteOpenIDConnectProvider", "iam:DeleteRole", "iam:DeleteRolePolicy",
	"iam:DetachRolePolicy", "iam:GetOpenIDConnectProvider", "iam:GetRole",
	"iam:GetRolePolicy", "iam:ListAttachedRolePolicies", "iam:ListInstanceProfilesForRole",
	"iam:ListRolePolicies", "iam:PassRole", "iam:PutRolePolicy", "iam:TagOpenIDConnectProvider",
	"iam:TagRole", "iam:UntagRole",
	"organizations:CreateAccount",
	"organizations:DescribeCreateAccountStatus", "organizations:ListAccounts",
}

// GlobalReadOnly are the actions of GlobalOnly that no resource or tag can
// scope; the isolation proof lists them as its only allowed exceptions.
var GlobalReadOnly = []string{"organizations:DescribeCreateAccountStatus", "organizations:ListAccounts"}

func inRegion(region string) map[string]map[string]Strings {
	return map[string]map[string]Strings{"StringEquals": {"aws:RequestedRegion": {region}}}
}

// PipelinePolicy is the permissions policy of the regional pipeline of region.
func PipelinePolicy(region string) Document {
	iamActions := []string{}
	orgTagged := []string{}
	for _, a := range GlobalOnly {
		switch {
		case a == "organizations:CreateAccount":
			orgTagged = append(orgTagged, a)
		case len(a) > 4 && a[:4] == "iam:":
			iamActions = append(iamActions, a)
		}
	}
	return Document{
		Version: "2012-10-17",
		ID:      "regionctl-generated-regional-pipeline-" + region,
		Statement: []Statement{
			{
				Sid: "ProvisionInRegion", Effect: "Allow",
				Action: regionScopedServices, Resource: Strings{"*"},
				Condition: inRegion(region),
			},
			{
				Sid: "AssumeDeployRoleOfRegion", Effect: "Allow",
				Action:   Strings{"sts:AssumeRole", "sts:TagSession"},
				Resource: Strings{"arn:aws:iam::*:role/" + DeployRoleName},
				Condition: map[string]map[string]Strings{"StringEquals": {
					"aws:RequestedRegion":          {region},
					"aws:ResourceTag/" + RegionTag: {region},
				}},
			},
			{
				Sid: "GlobalIAMOfRegion", Effect: "Allow",
				Action: iamActions,
				Resource: Strings{
					"arn:aws:iam::*:role/" + region + "-*",
					"arn:aws:iam::*:oidc-provider/oidc.eks." + region + ".amazonaws.com/*",
				},
			},
			{
				Sid: "CreateAccountOfRegion", Effect: "Allow",
				Action: orgTagged, Resource: Strings{"*"},
				Condition: map[string]map[string]Strings{"StringEquals": {"aws:RequestTag/" + RegionTag: {region}}},
			},
			{
				Sid: "FindAccounts", Effect: "Allow",
				Action: GlobalReadOnly, Resource: Strings{"*"},
			},
			{
				Sid: "DenyOutsideRegion", Effect: "Deny",
				NotAction: GlobalOnly, Resource: Strings{"*"},
				Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:RequestedRegion": {region}}},
			},
			{
				Sid: "DenyCentralState", Effect: "Deny",
				Action: Strings{"s3:*", "sts:AssumeRole", "iam:PassRole"},
				Resource: Strings{
					"arn:aws:s3:::" + centralPrefix + "*",
					"arn:aws:s3:::" + centralPrefix + "*/*",
					"arn:aws:iam::*:role/" + centralPrefix + "*",
				},
			},
		},
	}
}

// DeployRoleTrust is the trust policy of ManagementClusterDeployRole in the
// management cluster accounts of region: only the region's pipeline role,
// and only with the region's ExternalId.
func DeployRoleTrust(region string) Document {
	return Document{
		Version: "2012-10-17",
		ID:      "regionctl-generated-deploy-role-trust-" + region,
		Statement: []Statement{{
			Sid:       "RegionalPipelineOfRegion",
			Effect:    "Allow",
			Principal: &Principal{AWS: Strings{"arn:aws:iam::" + AccountIDPlaceholder + ":role/" + PipelineRoleName(region)}},
			Action:    Strings{"sts:AssumeRole"},
			Condition: map[string]map[string]Strings{"StringEquals": {"sts:ExternalId": {ExternalID(region)}}},
		}},
	}
}

// Parse decodes a policy document strictly.
func Parse(b []byte) (Document, error) {
	var d Document
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("parsing policy document: %w", err)
	}
	if d.Version != "2012-10-17" {
		return d, fmt.Errorf("policy version %q, want 2012-10-17", d.Version)
	}
	for i, s := range d.Statement {
		if s.Effect != "Allow" && s.Effect != "Deny" {
			return d, fmt.Errorf("statement %d: effect %q", i, s.Effect)
		}
		if (len(s.Action) == 0) == (len(s.NotAction) == 0) {
			return d, fmt.Errorf("statement %d: exactly one of Action and NotAction", i)
		}
		if s.Principal == nil && (len(s.Resource) == 0) == (len(s.NotResource) == 0) {
			return d, fmt.Errorf("statement %d: exactly one of Resource and NotResource", i)
		}
	}
	return d, nil
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
