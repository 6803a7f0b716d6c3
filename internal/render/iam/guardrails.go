package iam

// The organisation's guardrails of a region (DESIGN.md §5): a service
// control policy and a resource control policy, which the central
// pipeline's bootstrap attaches to the region's OUs of management cluster
// accounts and of its regional account. They bind every principal and
// resource of those accounts, whatever its own policies say, and nothing
// in those accounts can detach them (only the management account changes
// an organisation's policies).

// globalServices are the services whose requests are not made in the
// region's own endpoint (IAM, STS's global endpoint, Organizations, Route
// 53, ...): the region's SCP does not hold them to aws:RequestedRegion.
var globalServices = Strings{"account:*", "cloudfront:*", "ecr-public:*", "health:*", "iam:*", "organizations:*", "route53:*",
	"route53domains:*", "sts:*", "support:*", "tag:*"}

// GuardrailSCP is the service control policy of r's OUs: no root user, no
// leaving the organisation, no change to the identity chain but by AWS
// CloudFormation StackSets (which deploys it) and the account's AccessRole
// (the central pipeline's break-glass), no region but r's own, and no data
// of an account outside the organisation.
func GuardrailSCP(r Region) Document {
	p := r.Partition()
	chain := Strings{RoleARN(p, "*", DeployRoleName), RoleARN(p, "*", AccessRole), RoleARN(p, "*", StackSetExecutionRole),
		"arn:" + p + ":iam::*:policy/" + BoundaryName}
	return Document{Version: "2012-10-17", Statement: []Statement{
		{
			Sid: "DenyTheRootUser", Effect: "Deny",
			Action: Strings{"*"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"ArnLike": {"aws:PrincipalArn": {"arn:" + p + ":iam::*:root"}}},
		},
		{
			Sid: "DenyLeavingTheOrganization", Effect: "Deny",
			Action: Strings{"organizations:LeaveOrganization"}, Resource: Strings{"*"},
		},
		{
			Sid: "DenyChangingTheChain", Effect: "Deny",
			Action:   Strings{"iam:Attach*", "iam:Create*", "iam:Delete*", "iam:Detach*", "iam:Put*", "iam:Tag*", "iam:Untag*", "iam:Update*"},
			Resource: chain,
			Condition: map[string]map[string]Strings{"ArnNotLike": {"aws:PrincipalArn": {
				RoleARN(p, "*", StackSetExecutionRole), RoleARN(p, "*", AccessRole),
			}}},
		},
		{
			Sid: "DenyChangingTheChainStack", Effect: "Deny",
			Action:   Strings{"cloudformation:*"},
			Resource: Strings{"arn:" + p + ":cloudformation:*:*:stack/StackSet-" + DeployRoleStackSet(r.Name) + "-*/*"},
			Condition: map[string]map[string]Strings{"ArnNotLike": {"aws:PrincipalArn": {
				RoleARN(p, "*", StackSetExecutionRole), RoleARN(p, "*", AccessRole),
			}}},
		},
		{
			Sid: "DenyOtherRegions", Effect: "Deny",
			NotAction: globalServices, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:RequestedRegion": {r.Name}}},
		},
		{
			// The resource perimeter: objects, keys and secrets of
			// accounts outside the organisation (or of none).
			Sid: "DenyResourcesOutsideOrganization", Effect: "Deny",
			Action:    dataActions(),
			Resource:  Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:ResourceOrgID": {OrganizationID}}},
		},
	}}
}

// DataPerimeterRCP is the resource control policy of r's OUs: S3, STS,
// KMS and Secrets Manager resources of its accounts answer only
// principals of the organisation and AWS services (a role that trusts an
// outside account, a bucket or key shared out, a secret's resource
// policy: none admits an outsider). The OIDC buckets of the region's
// management clusters stay readable by anyone: HyperShift's OIDC
// discovery documents are public by design (seed 004).
func DataPerimeterRCP(r Region) Document {
	p := r.Partition()
	return Document{Version: "2012-10-17", Statement: []Statement{
		{
			Sid: "OnlyTheOrganization", Effect: "Deny",
			Principal: &Principal{Any: true},
			Action: Strings{"s3:*", "sts:AssumeRole", "sts:DecodeAuthorizationMessage", "sts:GetAccessKeyInfo", "sts:GetFederationToken",
				"sts:GetServiceBearerToken", "sts:GetSessionToken", "sts:SetContext", "kms:*", "secretsmanager:*"},
			NotResource: Strings{"arn:" + p + ":s3:::" + r.OIDCBuckets + "/*"},
			Condition: map[string]map[string]Strings{
				"StringNotEqualsIfExists": {"aws:PrincipalOrgID": {OrganizationID}},
				"BoolIfExists":            {"aws:PrincipalIsAWSService": {"false"}},
			},
		},
	}}
}

// dataActions are the actions that move data in or out of an existing
// object, key or secret: AWS puts aws:ResourceOrgID in their request
// context whenever the resource's account is in an organisation. Actions
// that create a resource (s3:CreateBucket, kms:CreateKey,
// secretsmanager:CreateSecret) are not among them: a resource not made yet
// has no organisation to compare, and a Deny keyed on one would refuse
// them.
func dataActions() Strings {
	return Strings{"s3:GetObject*", "s3:PutObject*", "s3:DeleteObject*", "s3:ListBucket*", "s3:RestoreObject", "s3:ReplicateObject",
		"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*", "kms:CreateGrant",
		"secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue", "secretsmanager:BatchGetSecretValue"}
}
