package iam

import (
	"slices"
	"sort"
	"strings"
)

// Names of the identity chain (DESIGN.md §5).
const (
	// CentralPipelineRole runs the central pipeline in the organisation's
	// management account (the central cluster's Tekton, through IRSA).
	CentralPipelineRole = "regionctl-central-pipeline"
	// AccessRole is the role AWS Organizations makes in every account it
	// creates, trusted by the management account. Only the central
	// pipeline uses it; no regional principal can assume it, directly or
	// through a role it can assume.
	AccessRole = "OrganizationAccountAccessRole"
	// DeployRoleName is the role the regional pipeline provisions a
	// management cluster's account through. AWS CloudFormation deploys it
	// (DeployRoleStackSet) into every account that lands in the region's
	// OU of management clusters: no regional principal makes it.
	DeployRoleName = "ManagementClusterDeployRole"
	// BoundaryName is the permissions boundary every role the deploy role
	// creates must carry, in each management cluster's account.
	BoundaryName = "regionctl-management-cluster-boundary"
	// Service accounts whose pods hold the pipelines' roles (IRSA).
	CentralServiceAccount  = "regionctl-central-pipeline"
	RegionalServiceAccount = "regionctl-regional-pipeline"
	// ParameterPrefix is where the central pipeline publishes, in a
	// regional account's SSM Parameter Store, what that region's pipeline
	// needs to know (the management account, the minting role).
	ParameterPrefix = "/regionctl/"
)

// Tags regionctl reserves on accounts, roles and sessions.
const (
	RegionTag      = "regionctl:region"
	EnvironmentTag = "regionctl:environment"
	ClusterTag     = "regionctl:cluster"
	RequestIDTag   = "regionctl:request-id"
	// SealedTag marks a management cluster account the regional pipeline
	// moved into its region's OU: no regional principal may move it again.
	SealedTag = "regionctl:sealed"
)

// Placeholders the documents carry until they are installed: account and
// organisation ids are known only at run time, from AWS.
const (
	PipelineAccount   = "${pipeline_account_id}"   // the region's (regional) account
	ManagementAccount = "${management_account_id}" // the organisation's management account
	OrganizationID    = "${organization_id}"
	RootID            = "${root_id}"
	ManagementOU      = "${management_ou_id}" // the region's OU of management cluster accounts
	DRAccount         = "${dr_account_id}"    // the region's disaster-recovery account
	OIDCProvider      = "${oidc_provider}"    // the regional cluster's OIDC issuer, without https://
	PlatformAPIID     = "${platform_api_id}"  // the region's platform API (API Gateway), in the regional account
	// AccountIDPlaceholder is the old name of PipelineAccount.
	AccountIDPlaceholder = PipelineAccount
)

// PipelineRoleName is the regional pipeline's role in a region.
func PipelineRoleName(region string) string { return "regional-pipeline-" + region }

// MintingRoleName is the management account's role through which the
// regional pipeline of region mints its management clusters' accounts.
func MintingRoleName(region string) string { return "regionctl-minting-" + region }

// DeployRoleStackSet is the CloudFormation StackSet (service-managed
// permissions, automatic deployment) through which AWS deploys the deploy
// role and its boundary into each account of region's management cluster
// OU. The central pipeline makes it in the management account.
func DeployRoleStackSet(region string) string { return "regionctl-deploy-role-" + region }

// StackSetExecutionRole matches the roles AWS CloudFormation StackSets
// makes in each member account and deploys a service-managed StackSet's
// stacks through.
const StackSetExecutionRole = "stacksets-exec-*"

// GuardrailPolicy is the name of the service control policy on a region's
// OUs; DataPerimeterPolicy that of its resource control policy.
func GuardrailPolicy(region string) string { return "regionctl-guardrails-" + region }

// DataPerimeterPolicy: see GuardrailPolicy.
func DataPerimeterPolicy(region string) string { return "regionctl-data-perimeter-" + region }

// ExternalID is the ExternalId the regional pipeline of region presents.
func ExternalID(region string) string { return "regional-pipeline-" + region }

// StateBucket is the default bucket of the Terraform state of a region's
// management clusters, in the regional account.
func StateBucket(region string) string { return "regionctl-regional-pipeline-" + region }

// ParameterName is the SSM parameter of the regional account through which
// the central pipeline hands the regional pipeline of region what it
// needs (see Handoff in internal/pipeline).
func ParameterName(region string) string { return ParameterPrefix + "regional-pipeline/" + region }

// Partition is the AWS partition of a region: every ARN regionctl renders
// takes it from the region.
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-isob-"):
		return "aws-iso-b"
	case strings.HasPrefix(region, "us-iso-"):
		return "aws-iso"
	case strings.HasPrefix(region, "eu-isoe-"):
		return "aws-iso-e"
	case strings.HasPrefix(region, "us-isof-"):
		return "aws-iso-f"
	case strings.HasPrefix(region, "eusc-"):
		return "aws-eusc"
	}
	return "aws"
}

// AccountRoot is the ARN of an account's root principal.
func AccountRoot(partition, account string) string {
	return "arn:" + partition + ":iam::" + account + ":root"
}

// RoleARN is the ARN of a role.
func RoleARN(partition, account, name string) string {
	return "arn:" + partition + ":iam::" + account + ":role/" + name
}

// Region is what one region's documents refer to.
type Region struct {
	Name        string
	Environment string
	// TektonNamespace is the regional cluster's namespace of the regional
	// pipeline's ServiceAccount.
	TektonNamespace string
	// ManagementStateBucket holds the state of the region's management
	// clusters, in the regional account; CentralStateBucket holds the
	// regional cluster's and the bootstrap's, in the management account.
	ManagementStateBucket string
	CentralStateBucket    string
	// EtcdBackupBucket keeps the management clusters' etcd snapshots, in
	// the region's DR account.
	EtcdBackupBucket string
	// HealthBucket keeps the region's clusters' health reports
	// (argocd.health_bucket), in the management account.
	HealthBucket string
	// Approvers are the IAM roles whose sessions may assume the region's
	// approver roles (gitops.approvers).
	Approvers []string
	Clusters  []ManagementCluster
	// OIDCBuckets is the pattern of the names of the region's management
	// clusters' OIDC buckets (hypershift.oidc_bucket, the cluster's name
	// made *): the deploy role, the same in every account of the region,
	// may make and keep those of its own account.
	OIDCBuckets string
}

// ManagementCluster is what a management cluster's deploy role may touch.
type ManagementCluster struct {
	Name       string
	OIDCBucket string
}

// Partition is the region's partition.
func (r Region) Partition() string { return Partition(r.Name) }

// GlobalRegion is the region requests to a global service (Route 53) of
// partition are signed for: their aws:RequestedRegion.
func GlobalRegion(partition string) string {
	switch partition {
	case "aws-us-gov":
		return "us-gov-west-1"
	case "aws-cn":
		return "cn-northwest-1"
	case "aws-iso-b":
		return "us-isob-east-1"
	case "aws-iso":
		return "us-iso-east-1"
	case "aws-iso-e":
		return "eu-isoe-west-1"
	case "aws-iso-f":
		return "us-isof-south-1"
	case "aws-eusc":
		return "eusc-de-east-1"
	}
	return "us-east-1"
}

// dnsActions are the Route 53 calls the management cluster root makes for
// its zones (modules/hypershift).
var dnsActions = Strings{"route53:CreateHostedZone", "route53:GetHostedZone", "route53:DeleteHostedZone", "route53:UpdateHostedZoneComment",
	"route53:ListHostedZones", "route53:ChangeTagsForResource", "route53:ListTagsForResource", "route53:GetChange",
	"route53:ListResourceRecordSets", "route53:ChangeResourceRecordSets",
	"route53:AssociateVPCWithHostedZone", "route53:DisassociateVPCFromHostedZone"}

func (r Region) arn(service, region, account, resource string) string {
	return "arn:" + r.Partition() + ":" + service + ":" + region + ":" + account + ":" + resource
}

func (r Region) pipelineRole() string {
	return RoleARN(r.Partition(), PipelineAccount, PipelineRoleName(r.Name))
}

func (r Region) inRegion() map[string]map[string]Strings {
	return map[string]map[string]Strings{"StringEquals": {"aws:RequestedRegion": {r.Name}}}
}

func bucketARNs(partition string, buckets ...string) Strings {
	var out Strings
	for _, b := range buckets {
		out = append(out, "arn:"+partition+":s3:::"+b, "arn:"+partition+":s3:::"+b+"/*")
	}
	return out
}

// sessionTagKeys are the only session tags regionctl passes.
var sessionTagKeys = Strings{RequestIDTag}

// AccountTagKeys are the tags every account regionctl creates carries; an
// account is adopted only when its tags name the same region, environment
// and cluster.
var AccountTagKeys = Strings{ClusterTag, EnvironmentTag, RegionTag, RequestIDTag}

// PipelineTrust lets the regional cluster's Tekton ServiceAccount of the
// regional pipeline (and nothing else) assume its role, through IRSA.
func PipelineTrust(r Region) Document {
	return Document{Version: "2012-10-17", ID: "regionctl-regional-pipeline-trust-" + r.Name, Statement: []Statement{{
		Sid: "RegionalClusterTektonServiceAccount", Effect: "Allow",
		Principal: &Principal{Federated: Strings{"arn:" + r.Partition() + ":iam::" + PipelineAccount + ":oidc-provider/" + OIDCProvider}},
		Action:    Strings{"sts:AssumeRoleWithWebIdentity"},
		Condition: map[string]map[string]Strings{"StringEquals": {
			OIDCProvider + ":sub": {"system:serviceaccount:" + r.TektonNamespace + ":" + RegionalServiceAccount},
			OIDCProvider + ":aud": {"sts.amazonaws.com"},
		}},
	}}}
}

// ResourcelessActions are the calls of the regional pipeline that AWS
// authorizes on no resource type: IAM allows them on "*" only (the
// Service Authorization Reference types no resource for them, and a
// policy naming one never grants them).
var ResourcelessActions = Strings{"iot:CreateKeysAndCertificate", "iot:DescribeEndpoint", "iot:ListAttachedPolicies"}

// MaestroAgentPolicyPrefix begins the name of every IoT policy of a Maestro
// agent of region (terraform/modules/maestro-agent): the regional pipeline
// may make and change those policies only.
func MaestroAgentPolicyPrefix(region string) string { return region + "-maestro-agent-" }

// PipelinePolicy is the regional pipeline's own permissions: assume its
// region's minting role and its region's deploy roles, keep the state of
// its management clusters, read the central pipeline's handoff, register
// clusters with its own region's platform API, and make its Maestro
// agents' certificates and policies on its region's broker. It reads
// nothing of the central pipeline's state (the regional cluster's holds
// the Maestro server's key) and writes none of it. Everything else it
// does, it does through those roles; nothing is allowed outside its
// region.
func PipelinePolicy(r Region) Document {
	p := r.Partition()
	return Document{Version: "2012-10-17", ID: "regionctl-generated-regional-pipeline-" + r.Name, Statement: []Statement{
		{
			Sid: "AssumeMintingRoleOfRegion", Effect: "Allow",
			Action:   Strings{"sts:AssumeRole", "sts:TagSession"},
			Resource: Strings{RoleARN(p, ManagementAccount, MintingRoleName(r.Name))},
		},
		{
			Sid: "AssumeDeployRolesOfRegion", Effect: "Allow",
			Action:   Strings{"sts:AssumeRole", "sts:TagSession"},
			Resource: Strings{RoleARN(p, "*", DeployRoleName)},
			Condition: map[string]map[string]Strings{"StringEquals": {
				"aws:ResourceTag/" + RegionTag: {r.Name},
			}},
		},
		{
			Sid: "ManagementClusterState", Effect: "Allow",
			Action:   Strings{"s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:GetBucketVersioning"},
			Resource: bucketARNs(p, r.ManagementStateBucket),
		},
		{
			Sid: "ReadCentralHandoff", Effect: "Allow",
			Action:   Strings{"ssm:GetParameter"},
			Resource: Strings{r.arn("ssm", r.Name, PipelineAccount, "parameter"+ParameterName(r.Name))},
		},
		{
			Sid: "RegisterWithPlatformAPIOfRegion", Effect: "Allow",
			Action: Strings{"execute-api:Invoke"},
			Resource: Strings{
				r.arn("execute-api", r.Name, PipelineAccount, PlatformAPIID+"/*/GET/api/v0/live"),
				r.arn("execute-api", r.Name, PipelineAccount, PlatformAPIID+"/*/POST/api/v0/management_clusters"),
			},
		},
		{
			// AWS IoT types no resource for these two: they are allowed on
			// "*" in the region only.
			Sid: "MaestroAgentCertificatesOfRegion", Effect: "Allow",
			Action: ResourcelessActions, Resource: Strings{"*"},
			Condition: r.inRegion(),
		},
		{
			Sid: "MaestroAgentCredentialsOfRegion", Effect: "Allow",
			Action: Strings{"iot:DescribeCertificate", "iot:UpdateCertificate", "iot:DeleteCertificate",
				"iot:AttachPolicy", "iot:DetachPolicy"},
			Resource: Strings{r.arn("iot", r.Name, PipelineAccount, "cert/*")},
		},
		{
			Sid: "MaestroAgentPoliciesOfRegion", Effect: "Allow",
			Action: Strings{"iot:CreatePolicy", "iot:GetPolicy", "iot:DeletePolicy", "iot:GetPolicyVersion", "iot:ListPolicyVersions",
				"iot:CreatePolicyVersion", "iot:DeletePolicyVersion", "iot:SetDefaultPolicyVersion", "iot:ListTargetsForPolicy",
				"iot:TagResource", "iot:UntagResource", "iot:ListTagsForResource"},
			Resource: Strings{r.arn("iot", r.Name, PipelineAccount, "policy/"+MaestroAgentPolicyPrefix(r.Name)+"*")},
		},
		{
			Sid: "DenyOutsideRegion", Effect: "Deny",
			NotAction: Strings{"sts:GetCallerIdentity"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:RequestedRegion": {r.Name}}},
		},
		{
			Sid: "DenyCentralStateWrites", Effect: "Deny",
			NotAction: Strings{"s3:GetObject"},
			Resource:  bucketARNs(p, r.CentralStateBucket),
		},
	}}
}

// trustOfPipeline is the trust of the roles the regional pipeline of r
// assumes: its role only, with its ExternalId, passing no session tag but
// the request id.
func trustOfPipeline(r Region, id string) Document {
	return Document{Version: "2012-10-17", ID: id, Statement: []Statement{
		{
			Sid: "RegionalPipelineOfRegion", Effect: "Allow",
			Principal: &Principal{AWS: Strings{r.pipelineRole()}},
			Action:    Strings{"sts:AssumeRole"},
			Condition: map[string]map[string]Strings{"StringEquals": {"sts:ExternalId": {ExternalID(r.Name)}}},
		},
		{
			// The Service Authorization Reference gives sts:TagSession no
			// sts:ExternalId key: the ExternalId is the AssumeRole
			// statement's to require, and this one limits the tags.
			Sid: "ItsRequestIDOnly", Effect: "Allow",
			Principal: &Principal{AWS: Strings{r.pipelineRole()}},
			Action:    Strings{"sts:TagSession"},
			Condition: map[string]map[string]Strings{"ForAllValues:StringEquals": {"aws:TagKeys": sessionTagKeys}},
		},
	}}
}

// DeployRoleTrust is the trust policy of ManagementClusterDeployRole in the
// management cluster accounts of r.
func DeployRoleTrust(r Region) Document {
	return trustOfPipeline(r, "regionctl-generated-deploy-role-trust-"+r.Name)
}

// MintingTrust is the trust policy of the minting role of r, in the
// management account.
func MintingTrust(r Region) Document {
	return trustOfPipeline(r, "regionctl-generated-minting-role-trust-"+r.Name)
}

// MintingPolicy is what the regional pipeline of r may do in the
// management account: create accounts tagged with its region and
// environment (the tags ride on the CreateAccount request: AWS then also
// authorizes organizations:TagResource, on no account yet), tag only what
// is already tagged for its region, move out of the root only an account
// of its region that no run has placed yet, and only into its region's
// OU. It reaches no account: the deploy role arrives in a new account
// through AWS CloudFormation (DeployRoleStackSet), not through this role.
func MintingPolicy(r Region) Document {
	p := r.Partition()
	org := "arn:" + p + ":organizations::" + ManagementAccount + ":"
	tagged := map[string]Strings{"aws:RequestTag/" + RegionTag: {r.Name}, "aws:RequestTag/" + EnvironmentTag: {r.Environment}}
	taggable := OrganizationResources(p)
	return Document{Version: "2012-10-17", ID: "regionctl-generated-minting-role-" + r.Name, Statement: []Statement{
		{
			Sid: "FindAccounts", Effect: "Allow",
			Action:   append(Strings{}, orgReads...),
			Resource: Strings{"*"},
		},
		{
			Sid: "CreateAccountsOfRegion", Effect: "Allow",
			Action: Strings{"organizations:CreateAccount"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{
				"StringEquals":              tagged,
				"ForAllValues:StringEquals": {"aws:TagKeys": AccountTagKeys},
			},
		},
		{
			// Tags on the CreateAccount request, and the placed mark on
			// an account of the region; DenyTaggingOutsideRegion keeps
			// every existing resource of another region, or of none, out.
			Sid: "TagAccountsOfRegion", Effect: "Allow",
			Action: Strings{"organizations:TagResource"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{
				"StringEquals":              tagged,
				"StringEqualsIfExists":      {"aws:RequestTag/" + SealedTag: {"true"}},
				"ForAllValues:StringEquals": {"aws:TagKeys": append(append(Strings{}, AccountTagKeys...), SealedTag)},
			},
		},
		{
			Sid: "DenyTaggingOutsideRegion", Effect: "Deny",
			Action:    Strings{"organizations:TagResource", "organizations:UntagResource"},
			Resource:  taggable,
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:ResourceTag/" + RegionTag: {r.Name}}},
		},
		{
			Sid: "DenyTaggingOutsideEnvironment", Effect: "Deny",
			Action:    Strings{"organizations:TagResource", "organizations:UntagResource"},
			Resource:  taggable,
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:ResourceTag/" + EnvironmentTag: {r.Environment}}},
		},
		{
			// The account its own run created (the request id the session
			// is tagged with), of its region, and never placed before.
			Sid: "MoveAccountOfThisRun", Effect: "Allow",
			Action:   Strings{"organizations:MoveAccount"},
			Resource: Strings{org + "account/" + OrganizationID + "/*"},
			Condition: map[string]map[string]Strings{
				"StringEquals": {
					"aws:ResourceTag/" + RegionTag: {r.Name}, "aws:ResourceTag/" + EnvironmentTag: {r.Environment},
					"aws:ResourceTag/" + RequestIDTag: {"${aws:PrincipalTag/" + RequestIDTag + "}"},
				},
				"Null": {"aws:ResourceTag/" + SealedTag: {"true"}},
			},
		},
		{
			Sid: "FromRootIntoRegionOU", Effect: "Allow",
			Action:   Strings{"organizations:MoveAccount"},
			Resource: Strings{org + "root/" + OrganizationID + "/" + RootID, org + "ou/" + OrganizationID + "/" + ManagementOU},
		},
		{
			Sid: "DenyMovingPlacedAccounts", Effect: "Deny",
			Action:    Strings{"organizations:MoveAccount"},
			Resource:  Strings{org + "account/" + OrganizationID + "/*"},
			Condition: map[string]map[string]Strings{"Null": {"aws:ResourceTag/" + SealedTag: {"false"}}},
		},
	}}
}

// OrganizationResources are the ARN patterns of every taggable resource of
// the organisation (the Service Authorization Reference's resource types
// of organizations:TagResource).
func OrganizationResources(partition string) Strings {
	org := "arn:" + partition + ":organizations::" + ManagementAccount + ":"
	return Strings{org + "account/" + OrganizationID + "/*", org + "ou/" + OrganizationID + "/*", org + "root/" + OrganizationID + "/*",
		org + "policy/" + OrganizationID + "/*", org + "resourcepolicy/" + OrganizationID + "/*", org + "transfer/" + OrganizationID + "/*"}
}

// orgReads are the Organizations reads the minting role needs on every
// account and OU: they change nothing and AWS scopes none of them further.
var orgReads = []string{"organizations:ListAccounts", "organizations:ListCreateAccountStatus", "organizations:DescribeCreateAccountStatus",
	"organizations:DescribeOrganization", "organizations:ListRoots", "organizations:ListOrganizationalUnitsForParent",
	"organizations:ListParents", "organizations:ListTagsForResource"}

// regionalServices are what the deploy role and the roles it creates may
// use, all within their region.
var regionalServices = Strings{"autoscaling:*", "ec2:*", "eks:*", "elasticloadbalancing:*", "kms:*", "logs:*", "secretsmanager:*"}

// DeployRolePolicy is the permissions of ManagementClusterDeployRole in
// every management cluster account of r (one StackSet deploys the same
// role into each): the regional services in its region, the OIDC buckets
// of its own account, and IAM only for roles and OIDC providers named for
// its region, created with the boundary. Each account is one cluster's
// alone, so its region's names are its cluster's.
func DeployRolePolicy(r Region) Document {
	p := r.Partition()
	roles := RoleARN(p, "*", r.Name+"-*")
	boundary := "arn:" + p + ":iam::*:policy/" + BoundaryName
	own := map[string]map[string]Strings{"StringEquals": {"aws:RequestedRegion": {r.Name}, "aws:ResourceAccount": {PrincipalAccountVariable}}}
	statements := []Statement{
		{Sid: "ProvisionInRegion", Effect: "Allow", Action: regionalServices, Resource: Strings{"*"}, Condition: r.inRegion()},
		{
			// A bucket being created has no owner to compare yet: creating
			// it makes it the caller's account's.
			Sid: "CreateClusterBuckets", Effect: "Allow", Action: Strings{"s3:CreateBucket"},
			Resource: Strings{"arn:" + p + ":s3:::" + r.OIDCBuckets}, Condition: r.inRegion(),
		},
		{Sid: "ClusterBucketsOfItsAccount", Effect: "Allow", Action: Strings{"s3:*"}, Resource: bucketARNs(p, r.OIDCBuckets), Condition: own},
		{
			Sid: "CreateClusterRolesWithBoundary", Effect: "Allow",
			Action: Strings{"iam:CreateRole", "iam:PutRolePermissionsBoundary"}, Resource: Strings{roles},
			Condition: map[string]map[string]Strings{"ArnLike": {"iam:PermissionsBoundary": {boundary}}},
		},
		{
			Sid: "ManageClusterRoles", Effect: "Allow",
			Action: Strings{"iam:GetRole", "iam:TagRole", "iam:UntagRole", "iam:ListRoleTags", "iam:DeleteRole", "iam:UpdateRole",
				"iam:UpdateRoleDescription", "iam:UpdateAssumeRolePolicy", "iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy",
				"iam:ListRolePolicies", "iam:ListAttachedRolePolicies", "iam:DetachRolePolicy", "iam:ListInstanceProfilesForRole"},
			Resource: Strings{roles},
		},
		{
			Sid: "AttachServicePolicies", Effect: "Allow",
			Action: Strings{"iam:AttachRolePolicy"}, Resource: Strings{roles},
			Condition: map[string]map[string]Strings{"ArnLike": {"iam:PolicyARN": {
				"arn:" + p + ":iam::aws:policy/AmazonEKS*", "arn:" + p + ":iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
				"arn:" + p + ":iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy",
			}}},
		},
		{
			// EKS takes the cluster and node roles; EKS Pod Identity
			// (pods.eks.amazonaws.com) the roles its associations give the
			// cluster's ServiceAccounts.
			Sid: "PassClusterRolesToEKS", Effect: "Allow",
			Action: Strings{"iam:PassRole"}, Resource: Strings{roles},
			Condition: map[string]map[string]Strings{"StringEquals": {"iam:PassedToService": {"eks.amazonaws.com", "ec2.amazonaws.com", "pods.eks.amazonaws.com"}}},
		},
	}
	statements = append(statements, bootstrapTaskStatements(r)...)
	statements = append(statements, []Statement{
		{
			Sid: "ClusterOIDCProviders", Effect: "Allow",
			Action: Strings{"iam:CreateOpenIDConnectProvider", "iam:DeleteOpenIDConnectProvider", "iam:GetOpenIDConnectProvider",
				"iam:TagOpenIDConnectProvider", "iam:UntagOpenIDConnectProvider", "iam:UpdateOpenIDConnectProviderThumbprint",
				"iam:AddClientIDToOpenIDConnectProvider"},
			Resource: Strings{"arn:" + p + ":iam::*:oidc-provider/oidc.eks." + r.Name + ".amazonaws.com/*"},
		},
		{
			// Route 53 is global: its requests are signed for the
			// partition's global region, and zone ids are not known
			// before; the account is the cluster's alone, so its zones are.
			Sid: "ClusterDNSZones", Effect: "Allow", Action: dnsActions, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"StringEquals": {"aws:RequestedRegion": {GlobalRegion(p)}}},
		},
		{
			Sid: "ServiceLinkedRolesOfClusterServices", Effect: "Allow",
			Action: Strings{"iam:CreateServiceLinkedRole"}, Resource: Strings{RoleARN(p, "*", "aws-service-role/*")},
			Condition: map[string]map[string]Strings{"StringEquals": {"iam:AWSServiceName": {
				"autoscaling.amazonaws.com", "ecs.amazonaws.com", "eks-nodegroup.amazonaws.com", "eks.amazonaws.com", "elasticloadbalancing.amazonaws.com",
			}}},
		},
		{
			// The root makes ELB's service-linked role (the load balancer
			// controller, under the boundary, cannot), reads it, tags it
			// as it tags everything it makes, and deletes it on destroy.
			Sid: "LoadBalancingServiceLinkedRole", Effect: "Allow",
			Action:   ServiceLinkedRoleUpkeep,
			Resource: Strings{RoleARN(p, "*", "aws-service-role/elasticloadbalancing.amazonaws.com/*")},
		},
	}...)
	statements = append(statements, deployRoleDenials(r, boundary)...)
	return Document{Version: "2012-10-17", ID: "regionctl-generated-deploy-role-" + r.Name, Statement: statements}
}

// bootstrapTaskStatements let the deploy role make and run a cluster's
// bootstrap task (modules/eks/bootstrap.tf): its ECS cluster and task
// definition, run in that cluster only, as the cluster's two bootstrap
// roles only.
func bootstrapTaskStatements(r Region) []Statement {
	p := r.Partition()
	boot := r.Name + "-*-bootstrap"
	bootCluster := r.arn("ecs", r.Name, "*", "cluster/"+boot)
	bootTaskDef := r.arn("ecs", r.Name, "*", "task-definition/"+boot+":*")
	bootTasks := r.arn("ecs", r.Name, "*", "task/"+boot+"/*")
	return []Statement{
		{
			Sid: "BootstrapTaskOfCluster", Effect: "Allow",
			Action: Strings{"ecs:CreateCluster", "ecs:DeleteCluster", "ecs:DescribeClusters", "ecs:UpdateCluster", "ecs:TagResource",
				"ecs:UntagResource", "ecs:ListTagsForResource"},
			Resource:  Strings{bootCluster, bootTaskDef},
			Condition: r.inRegion(),
		},
		{
			Sid: "BootstrapTaskDefinitions", Effect: "Allow",
			Action:   Strings{"ecs:RegisterTaskDefinition", "ecs:DescribeTaskDefinition", "ecs:DeregisterTaskDefinition"},
			Resource: Strings{"*"}, Condition: r.inRegion(),
		},
		{
			Sid: "RunTheBootstrapTask", Effect: "Allow",
			Action: Strings{"ecs:RunTask"}, Resource: Strings{bootTaskDef},
			Condition: map[string]map[string]Strings{"StringEquals": {"aws:RequestedRegion": {r.Name}}, "ArnLike": {"ecs:cluster": {bootCluster}}},
		},
		{
			Sid: "WatchTheBootstrapTask", Effect: "Allow",
			Action: Strings{"ecs:DescribeTasks"}, Resource: Strings{bootTasks}, Condition: r.inRegion(),
		},
		{
			Sid: "PassBootstrapRolesToECS", Effect: "Allow",
			Action: Strings{"iam:PassRole"}, Resource: Strings{RoleARN(p, "*", boot), RoleARN(p, "*", boot+"-ecs")},
			Condition: map[string]map[string]Strings{"StringEquals": {"iam:PassedToService": {"ecs-tasks.amazonaws.com"}}},
		},
	}
}

// deployRoleDenials keep the deploy role in its region (Route 53 in its
// partition's global region) and off the chain that made it.
func deployRoleDenials(r Region, boundary string) []Statement {
	p := r.Partition()
	return []Statement{
		{
			Sid: "DenyOutsideRegion", Effect: "Deny",
			NotAction: Strings{"iam:*", "route53:*", "sts:GetCallerIdentity"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:RequestedRegion": {r.Name}}},
		},
		{
			Sid: "DenyDNSOutsideItsGlobalRegion", Effect: "Deny",
			Action: Strings{"route53:*"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:RequestedRegion": {GlobalRegion(p)}}},
		},
		{
			Sid: "DenyChangingTheChain", Effect: "Deny",
			Action:   Strings{"iam:*"},
			Resource: Strings{RoleARN(p, "*", DeployRoleName), RoleARN(p, "*", AccessRole), RoleARN(p, "*", StackSetExecutionRole), boundary},
		},
	}
}

// Boundary is the permissions boundary of every role the deploy role
// creates in a management cluster account of r: the cluster's services in
// its region, no IAM, Organizations or role chaining at all, and no data
// to or from accounts outside the organisation.
func Boundary(r Region) Document {
	return Document{Version: "2012-10-17", ID: "regionctl-generated-management-cluster-boundary-" + r.Name, Statement: []Statement{
		{
			Sid: "ClusterServicesInRegion", Effect: "Allow",
			Action: append(append(Strings{}, regionalServices...), "ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage",
				"ecr:GetAuthorizationToken", "ecr:GetDownloadUrlForLayer", "route53:*", "s3:*", "sts:AssumeRoleWithWebIdentity", "tag:GetResources"),
			Resource: Strings{"*"},
		},
		{
			Sid: "DenyOutsideRegion", Effect: "Deny",
			NotAction: Strings{"route53:*", "sts:GetCallerIdentity", "sts:AssumeRoleWithWebIdentity"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:RequestedRegion": {r.Name}}},
		},
		{
			Sid: "DenyIdentityChanges", Effect: "Deny",
			Action:   Strings{"account:*", "iam:*", "organizations:*", "sts:AssumeRole"},
			Resource: Strings{"*"},
		},
		{
			// Data stays in the organisation: objects, keys and secrets of
			// an account outside it (or of none) are out of reach.
			Sid: "DenyResourcesOutsideOrganization", Effect: "Deny",
			Action:    dataActions(),
			Resource:  Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:ResourceOrgID": {OrganizationID}}},
		},
	}}
}

// ManagementStateBucketPolicy admits to the region's management cluster
// state only the region's pipeline (and the AccessRole the central
// pipeline manages the bucket with): no other principal, of this account
// or another, may touch it.
func ManagementStateBucketPolicy(r Region) Document {
	p := r.Partition()
	approver := RoleARN(p, PipelineAccount, ApproverRoleName(r.Name))
	return Document{Version: "2012-10-17", ID: "regionctl-generated-management-state-bucket-" + r.Name, Statement: []Statement{
		{
			Sid: "OnlyTheRegionalPipeline", Effect: "Deny",
			Principal: &Principal{Any: true},
			Action:    Strings{"s3:*"},
			Resource:  bucketARNs(p, r.ManagementStateBucket),
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:PrincipalArn": {
				r.pipelineRole(), RoleARN(p, PipelineAccount, AccessRole), approver,
			}}},
		},
		onlyApprovers(p, r.ManagementStateBucket, approver),
	}}
}

// CentralStateBucketPolicy keeps the central state of a region, in the
// management account's bucket, to the central pipeline (and the region's
// central approver, for approvals): the regional pipeline reads none of it
// (the regional cluster's state holds the Maestro server's key; what the
// regional pipeline needs of it, the handoff parameter tells it).
func CentralStateBucketPolicy(r Region) Document {
	p := r.Partition()
	central := RoleARN(p, ManagementAccount, CentralPipelineRole)
	approver := RoleARN(p, ManagementAccount, ApproverRoleName(r.Name))
	return Document{Version: "2012-10-17", ID: "regionctl-generated-central-state-bucket-" + r.Name, Statement: []Statement{
		{
			Sid: "OnlyTheCentralPipeline", Effect: "Deny",
			Principal: &Principal{Any: true},
			Action:    Strings{"s3:*"},
			Resource:  bucketARNs(p, r.CentralStateBucket),
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:PrincipalArn": {
				central, AccountRoot(p, ManagementAccount), approver,
			}}},
		},
		onlyApprovers(p, r.CentralStateBucket, approver),
	}}
}

// ApproverRoleName is the role that approves reviewed plans of a region's
// clusters: one in the regional account (the management clusters' states)
// and one in the management account (the regional cluster's).
func ApproverRoleName(region string) string { return "regionctl-approver-" + region }

// Where plans and approvals are kept, next to a state object: a plan at
// <state key>.regionctl-plan/<id>.tfplan (with its summary, .json), its
// approval at <state key>.regionctl-approval/<id>.
const (
	PlanInfix     = ".regionctl-plan/"
	ApprovalInfix = ".regionctl-approval/"
)

// ApproverTrust lets the sessions of the configured approver roles assume
// a region's approver role.
func ApproverTrust(r Region) Document {
	return Document{Version: "2012-10-17", ID: "regionctl-generated-approver-trust-" + r.Name, Statement: []Statement{{
		Sid: "Approvers", Effect: "Allow",
		Principal: &Principal{AWS: append(Strings{}, r.Approvers...)},
		Action:    Strings{"sts:AssumeRole"},
	}}}
}

// ApproverPolicy is what an approver of region r may do with the states in
// bucket: read the summaries of the plans kept there, and write approvals
// of them; nothing else, and nothing outside its region.
func ApproverPolicy(r Region, bucket string) Document {
	p := r.Partition()
	return Document{Version: "2012-10-17", ID: "regionctl-generated-approver-" + r.Name + "-" + bucket, Statement: []Statement{
		{
			Sid: "ReadPlanSummaries", Effect: "Allow",
			Action:   Strings{"s3:GetObject"},
			Resource: Strings{"arn:" + p + ":s3:::" + bucket + "/*" + PlanInfix + "*.json"},
		},
		{
			Sid: "ApprovePlans", Effect: "Allow",
			Action:   Strings{"s3:PutObject"},
			Resource: Strings{"arn:" + p + ":s3:::" + bucket + "/*" + ApprovalInfix + "*"},
		},
		{
			Sid: "DenyOutsideRegion", Effect: "Deny",
			NotAction: Strings{"sts:GetCallerIdentity"}, Resource: Strings{"*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:RequestedRegion": {r.Name}}},
		},
	}}
}

// onlyApprovers denies writing or removing an approval in bucket to every
// principal but approver: not even the pipeline whose run waits for it.
func onlyApprovers(p, bucket, approver string) Statement {
	return Statement{
		Sid: "OnlyApproversApprove", Effect: "Deny",
		Principal: &Principal{Any: true},
		Action:    Strings{"s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutObjectTagging"},
		Resource:  Strings{"arn:" + p + ":s3:::" + bucket + "/*" + ApprovalInfix + "*"},
		Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:PrincipalArn": {approver}}},
	}
}

// EtcdBackupRoleSuffix ends the name of the role, in each management
// cluster account, that writes the cluster's etcd snapshots
// (<region>-<cluster>-etcd-backup, terraform/modules/etcd-backup).
const EtcdBackupRoleSuffix = "etcd-backup"

// PrincipalAccountVariable is the AWS policy variable of the caller's
// account. Rendered documents are Terraform templates (their ${name}
// placeholders are filled at install), so it is written $${...} there:
// EscapeVariables.
const PrincipalAccountVariable = "${aws:PrincipalAccount}"

// EtcdBackupBucketPolicy is the policy of the region's etcd snapshot
// bucket in its DR account: the etcd-backup role of an account in the
// region's management cluster OU may add objects under its own account's
// prefix, and nothing else (it cannot read, list, overwrite another's or
// delete); no one but the DR account's AccessRole (the central pipeline)
// deletes objects or changes the bucket.
func EtcdBackupBucketPolicy(r Region) Document {
	p := r.Partition()
	bucket := "arn:" + p + ":s3:::" + r.EtcdBackupBucket
	return Document{Version: "2012-10-17", ID: "regionctl-generated-etcd-backup-bucket-" + r.Name, Statement: []Statement{
		{
			Sid: "ManagementClustersOfRegionAddTheirOwn", Effect: "Allow",
			Principal: &Principal{Any: true},
			Action:    Strings{"s3:PutObject"},
			Resource:  Strings{bucket + "/" + PrincipalAccountVariable + "/*"},
			// The organisation's id, a fixed value once Terraform fills it
			// in, is what keeps the policy from being public by S3's
			// definition (iam.PublicStatement): the bucket has Block
			// Public Access on, and S3 refuses a public policy for it.
			Condition: map[string]map[string]Strings{
				"StringEquals":           {"aws:PrincipalOrgID": {OrganizationID}},
				"ForAnyValue:StringLike": {"aws:PrincipalOrgPaths": {OrganizationID + "/" + RootID + "/*" + ManagementOU + "/"}},
				"ArnLike":                {"aws:PrincipalArn": {RoleARN(p, "*", r.Name+"-*-"+EtcdBackupRoleSuffix)}},
			},
		},
		{
			Sid: "OnlyTheCentralPipelineDeletes", Effect: "Deny",
			Principal: &Principal{Any: true},
			Action: Strings{"s3:DeleteObject", "s3:DeleteObjectVersion", "s3:DeleteBucket", "s3:PutBucketPolicy", "s3:DeleteBucketPolicy",
				"s3:PutLifecycleConfiguration", "s3:PutBucketVersioning", "s3:PutBucketObjectLockConfiguration"},
			Resource: Strings{bucket, bucket + "/*"},
			Condition: map[string]map[string]Strings{"StringNotEquals": {"aws:PrincipalArn": {
				RoleARN(p, DRAccount, AccessRole),
			}}},
		},
		{
			Sid: "TLSOnly", Effect: "Deny",
			Principal: &Principal{Any: true},
			Action:    Strings{"s3:*"},
			Resource:  Strings{bucket, bucket + "/*"},
			Condition: map[string]map[string]Strings{"Bool": {"aws:SecureTransport": {"false"}}},
		},
	}}
}

// HealthRoleSuffix names a cluster's health reporter role,
// <region>-<cluster>-health.
const HealthRoleSuffix = "health"

// HealthReport is the object a cluster's report is, under its account's
// prefix of the region's health bucket (argohealth writes and reads it).
const HealthReport = "health.json"

// HealthBucketPolicy is the policy of the region's bucket of health
// reports in the management account: the health reporter role of each
// cluster of the region (an account in the region's management cluster OU,
// or the regional account) may put its report under its own account's
// prefix, and nothing else; no other principal of another account is
// admitted. The management account's own principals read it by their
// identity policies (rollout promote).
func HealthBucketPolicy(r Region) Document {
	p := r.Partition()
	bucket := "arn:" + p + ":s3:::" + r.HealthBucket
	report := Strings{bucket + "/" + PrincipalAccountVariable + "/" + HealthReport}
	roles := Strings{RoleARN(p, "*", r.Name+"-*-"+HealthRoleSuffix)}
	return Document{Version: "2012-10-17", ID: "regionctl-generated-health-bucket-" + r.Name, Statement: []Statement{
		{
			Sid: "ManagementClustersOfRegionReportTheirOwn", Effect: "Allow",
			Principal: &Principal{Any: true},
			Action:    Strings{"s3:PutObject"},
			Resource:  report,
			Condition: map[string]map[string]Strings{
				"StringEquals":           {"aws:PrincipalOrgID": {OrganizationID}},
				"ForAnyValue:StringLike": {"aws:PrincipalOrgPaths": {OrganizationID + "/" + RootID + "/*" + ManagementOU + "/"}},
				"ArnLike":                {"aws:PrincipalArn": roles},
			},
		},
		{
			Sid: "RegionalClusterReportsItsOwn", Effect: "Allow",
			Principal: &Principal{Any: true},
			Action:    Strings{"s3:PutObject"},
			Resource:  report,
			Condition: map[string]map[string]Strings{
				"StringEquals": {"aws:PrincipalAccount": {PipelineAccount}},
				"ArnLike":      {"aws:PrincipalArn": roles},
			},
		},
		{
			Sid: "TLSOnly", Effect: "Deny",
			Principal: &Principal{Any: true},
			Action:    Strings{"s3:*"},
			Resource:  Strings{bucket, bucket + "/*"},
			Condition: map[string]map[string]Strings{"Bool": {"aws:SecureTransport": {"false"}}},
		},
	}}
}

// CentralPipelinePolicy is the central pipeline's role in the management
// account of one partition: Organizations account management and the
// organisation's guardrails, the AccessRole of the accounts it makes, the
// central state buckets of regions, the minting and approver roles it
// bootstraps, and the StackSets that deploy the deploy roles. Its size
// does not grow with regions but for state buckets named otherwise than by
// default (CheckQuotas holds it under IAM's limit for every commercial
// region).
func CentralPipelinePolicy(partition string, regions []Region) Document {
	return Document{Version: "2012-10-17", ID: "regionctl-generated-central-pipeline-" + partition, Statement: append([]Statement{
		{
			Sid: "ManageAccounts", Effect: "Allow",
			Action: Strings{"organizations:CreateAccount", "organizations:CreateOrganizationalUnit", "organizations:DescribeCreateAccountStatus",
				"organizations:DescribeOrganization", "organizations:DescribeOrganizationalUnit", "organizations:ListAccounts",
				"organizations:ListCreateAccountStatus", "organizations:ListOrganizationalUnitsForParent", "organizations:ListParents",
				"organizations:ListRoots", "organizations:ListTagsForResource", "organizations:MoveAccount", "organizations:TagResource"},
			Resource: Strings{"*"},
		},
		{
			Sid: "Guardrails", Effect: "Allow",
			Action: Strings{"organizations:CreatePolicy", "organizations:UpdatePolicy", "organizations:DeletePolicy", "organizations:DescribePolicy",
				"organizations:AttachPolicy", "organizations:DetachPolicy", "organizations:ListPolicies", "organizations:ListPoliciesForTarget",
				"organizations:ListTargetsForPolicy", "organizations:EnablePolicyType", "organizations:EnableAWSServiceAccess",
				"organizations:ListAWSServiceAccessForOrganization", "iam:EnableOrganizationsRootCredentialsManagement",
				"iam:EnableOrganizationsRootSessions", "iam:ListOrganizationsFeatures", "cloudformation:ActivateOrganizationsAccess",
				"cloudformation:DescribeOrganizationsAccess"},
			Resource: Strings{"*"},
		},
		{
			// CloudFormation authorizes creating a StackSet on no
			// resource type.
			Sid: "CreateDeployRoleStackSets", Effect: "Allow",
			Action: Strings{"cloudformation:CreateStackSet"}, Resource: Strings{"*"},
		},
		{
			Sid: "DeployRoleStackSets", Effect: "Allow",
			Action: Strings{"cloudformation:UpdateStackSet", "cloudformation:DeleteStackSet",
				"cloudformation:DescribeStackSet", "cloudformation:DescribeStackSetOperation", "cloudformation:ListStackSetOperations",
				"cloudformation:CreateStackInstances", "cloudformation:DeleteStackInstances", "cloudformation:UpdateStackInstances",
				"cloudformation:DescribeStackInstance", "cloudformation:ListStackInstances", "cloudformation:TagResource", "cloudformation:UntagResource"},
			Resource: Strings{"arn:" + partition + ":cloudformation:*:*:stackset/" + DeployRoleStackSet("*") + ":*",
				"arn:" + partition + ":cloudformation:*:*:stackset-target/" + DeployRoleStackSet("*") + ":*/*"},
		},
		{
			Sid: "ReachAccounts", Effect: "Allow",
			Action: Strings{"sts:AssumeRole"}, Resource: Strings{RoleARN(partition, "*", AccessRole)},
		},
		{
			Sid: "MintingAndApproverRoles", Effect: "Allow",
			Action: Strings{"iam:CreateRole", "iam:DeleteRole", "iam:GetRole", "iam:TagRole", "iam:UntagRole", "iam:ListRoleTags",
				"iam:UpdateAssumeRolePolicy", "iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy", "iam:ListRolePolicies",
				"iam:ListAttachedRolePolicies", "iam:ListInstanceProfilesForRole"},
			Resource: Strings{RoleARN(partition, "*", MintingRoleName("*")), RoleARN(partition, "*", ApproverRoleName("*"))},
		},
	}, centralStateStatements(partition, regions)...)}
}

// centralStateStatements let the central pipeline find, create and use
// the regions' central state buckets and their health buckets, both in the
// management account (see ownedBuckets).
func centralStateStatements(partition string, regions []Region) []Statement {
	state := ownedBuckets(partition, regions, CentralStatePrefix, func(r Region) string { return r.CentralStateBucket },
		[3]string{"FindOrCreateCentralStateBuckets", "CentralStateOfRegions", "CentralState"})
	return append(state, ownedBuckets(partition, regions, HealthBucketPrefix, func(r Region) string { return r.HealthBucket },
		[3]string{"FindOrCreateHealthBuckets", "HealthBucketsOfRegions", "HealthBuckets"})...)
}

// ownedBuckets let the central pipeline find, create and use one bucket
// of each region in the management account: by the default name (prefix
// and more) under one pattern held to the management account, whatever
// the number of regions; a bucket named otherwise in config is named here.
// sids name the statements that find or create, use the patterned, and
// use the named.
func ownedBuckets(partition string, regions []Region, prefix string, bucket func(Region) string, sids [3]string) []Statement {
	var named []string
	patterned := false
	for _, r := range regions {
		b := bucket(r)
		if b == "" {
			continue
		}
		if strings.HasPrefix(b, prefix) {
			patterned = true
			continue
		}
		named = append(named, b)
	}
	sort.Strings(named)
	named = slices.Compact(named)
	var state []Statement
	own := map[string]map[string]Strings{"StringEquals": {"aws:ResourceAccount": {PrincipalAccountVariable}}}
	var creatable []string
	if patterned {
		creatable = append(creatable, "arn:"+partition+":s3:::"+prefix+"*")
	}
	for _, b := range named {
		creatable = append(creatable, "arn:"+partition+":s3:::"+b)
	}
	if len(creatable) > 0 {
		// A bucket not made yet has no owner to compare: finding it
		// (HeadBucket, s3:ListBucket) and creating it, which makes it the
		// caller's account's, are granted without the owner condition;
		// they give no access to a bucket's objects or settings.
		state = append(state, Statement{Sid: sids[0], Effect: "Allow", Action: Strings{"s3:CreateBucket", "s3:ListBucket"}, Resource: creatable})
	}
	if patterned {
		state = append(state, Statement{Sid: sids[1], Effect: "Allow", Action: Strings{"s3:*"},
			Resource: bucketARNs(partition, prefix+"*"), Condition: own})
	}
	if len(named) > 0 {
		state = append(state, Statement{Sid: sids[2], Effect: "Allow", Action: Strings{"s3:*"},
			Resource: bucketARNs(partition, named...), Condition: own})
	}
	return state
}

// HealthBucketPrefix begins the default name of a region's health bucket,
// regionctl-argocd-health-<environment>-<region> (schema/cluster.cue
// #Derived.health_bucket), in the management account.
const HealthBucketPrefix = "regionctl-argocd-health-"

// CentralStatePrefix begins the default name of a region's central state
// bucket, regionctl-tfstate-<region>-<regional cluster> (schema/cluster.cue
// #Derived.state_bucket_regional), in the management account.
const CentralStatePrefix = "regionctl-tfstate-"

// ServiceLinkedRoleUpkeep is what Terraform does to a service-linked role
// it made, besides creating it: read, tag, delete.
var ServiceLinkedRoleUpkeep = Strings{"iam:GetRole", "iam:TagRole", "iam:UntagRole", "iam:ListRoleTags",
	"iam:DeleteServiceLinkedRole", "iam:GetServiceLinkedRoleDeletionStatus"}
