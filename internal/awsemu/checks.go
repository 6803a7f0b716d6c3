package awsemu

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// check is one authorization AWS makes for a request: an action on a
// resource. A request passes when every one of its checks allows.
type check struct {
	Action          string
	Resource        string
	ResourceAccount string
	ResourcePolicy  *iam.Document
	TrustRequired   bool
	Context         map[string][]string
	// Caller overrides the request's principal (a web identity).
	Caller *iamjudge.Caller
	// Free: AWS answers it for anyone who signs (sts:GetCallerIdentity).
	Free bool
	// Refuse: the request is refused before any policy is read, with this
	// error code and message (Organizations' management-account rule, an
	// unknown OIDC provider, a bucket of another owner).
	Refuse, RefuseCode string
}

// env is what building checks may read.
type env struct {
	ctx  context.Context
	view *view
	p    *principal
	req  *request
	base map[string][]string // the context keys of every check
	// accounts are where buckets may live.
	accounts func() []string
}

func (e *env) context(kv map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range e.base {
		out[k] = v
	}
	for k, v := range kv {
		out[k] = v
	}
	return out
}

func (e *env) partition() string { return iam.Partition(e.req.Region) }

// checks names what AWS authorizes for req.
func checks(e *env) ([]check, error) {
	req := e.req
	if req.Operation == "" {
		return []check{{Action: req.Service + ":UnknownOperation", Resource: "*", Context: e.context(nil),
			Refuse: fmt.Sprintf("the IAM gate cannot name the %s operation of %s %s, so it cannot authorize it", req.Service, req.Method, req.Path), RefuseCode: "AccessDenied"}}, nil
	}
	switch req.Service {
	case "sts":
		return stsChecks(e)
	case "iam":
		return iamChecks(e)
	case "organizations":
		return orgChecks(e)
	case "s3":
		return s3Checks(e)
	case "ssm":
		name := req.str("Name")
		if name != "" && !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		res := "*"
		if name != "" {
			res = "arn:" + e.partition() + ":ssm:" + req.Region + ":" + e.p.Account + ":parameter" + name
		}
		return []check{{Action: "ssm:" + req.Operation, Resource: res, Context: e.context(nil)}}, nil
	case "eks":
		return eksChecks(e)
	case "ecs":
		return ecsChecks(e)
	case "iot":
		return iotChecks(e)
	case "secretsmanager":
		return secretsChecks(e)
	case "cloudformation":
		return cloudformationChecks(e)
	case "apigateway":
		p := strings.TrimPrefix(req.Path, "/v2")
		return []check{{Action: "apigateway:" + req.Method, Resource: "arn:" + e.partition() + ":apigateway:" + req.Region + "::" + p, Context: e.context(nil)}}, nil
	}
	return []check{{Action: req.Service + ":" + req.Operation, Resource: "*", Context: e.context(nil)}}, nil
}

func stsChecks(e *env) ([]check, error) {
	req := e.req
	switch req.Operation {
	case "GetCallerIdentity":
		return []check{{Action: "sts:GetCallerIdentity", Resource: "*", Free: true}}, nil
	case "AssumeRole", "AssumeRoleWithWebIdentity":
	default:
		return []check{{Action: "sts:" + req.Operation, Resource: "*", Context: e.context(nil)}}, nil
	}
	target := req.str("RoleArn")
	account := accountOf(target)
	role, err := e.view.role(e.ctx, target)
	if err != nil {
		return nil, err
	}
	action := "sts:" + req.Operation
	if role == nil {
		return []check{{Action: action, Resource: target, Context: e.context(nil), Refuse: "no role " + target + " exists", RefuseCode: "AccessDenied"}}, nil
	}
	ctx := map[string][]string{"aws:ResourceAccount": {account}}
	for k, v := range role.Tags {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
	if path, err := e.view.orgPath(e.ctx, account); err == nil && path != "" {
		ctx["aws:ResourceOrgPaths"] = []string{path}
		ctx["aws:ResourceOrgID"] = []string{path[:strings.Index(path, "/")]}
	}
	if req.Operation == "AssumeRoleWithWebIdentity" {
		claims, err := jwtClaims(req.str("WebIdentityToken"))
		if err != nil {
			return []check{{Action: action, Resource: target, Refuse: err.Error(), RefuseCode: "InvalidIdentityToken"}}, nil
		}
		issuer := strings.TrimPrefix(claims.Issuer, "https://")
		provider, err := e.view.oidcProvider(e.ctx, account, issuer)
		if err != nil {
			return nil, err
		}
		if provider == "" {
			return []check{{Action: action, Resource: target, Refuse: "No OpenIDConnect provider found in your account for " + claims.Issuer, RefuseCode: "InvalidIdentityToken"}}, nil
		}
		ctx[issuer+":sub"] = []string{claims.Subject}
		ctx[issuer+":aud"] = claims.Audience
		return []check{{Action: action, Resource: target, ResourceAccount: account, ResourcePolicy: role.Trust, TrustRequired: true,
			Caller: &iamjudge.Caller{Federated: provider, Account: account}, Context: ctx}}, nil
	}
	ctx["sts:RoleSessionName"] = []string{req.str("RoleSessionName")}
	if ext := req.str("ExternalId"); ext != "" {
		ctx["sts:ExternalId"] = []string{ext}
	}
	tags := tagsOf(req.Form, "Tags")
	tagContext(tags, ctx)
	out := []check{{Action: action, Resource: target, ResourceAccount: account, ResourcePolicy: role.Trust, TrustRequired: true, Context: e.context(ctx)}}
	if len(tags) > 0 {
		out = append(out, check{Action: "sts:TagSession", Resource: target, ResourceAccount: account, ResourcePolicy: role.Trust, TrustRequired: true, Context: e.context(ctx)})
	}
	return out, nil
}

// claims are the parts of a web identity token the gate reads. It does not
// verify the token's signature (no identity provider runs here).
type claims struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience []string `json:"-"`
	RawAud   any      `json:"aud"`
}

func jwtClaims(token string) (claims, error) {
	var c claims
	parts := strings.Split(token, ".")
	if len(parts) < 2 {
		return c, fmt.Errorf("the web identity token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return c, fmt.Errorf("the web identity token's claims: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("the web identity token's claims: %w", err)
	}
	switch a := c.RawAud.(type) {
	case string:
		c.Audience = []string{a}
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok {
				c.Audience = append(c.Audience, s)
			}
		}
	}
	return c, nil
}

func iamChecks(e *env) ([]check, error) {
	req := e.req
	p := e.partition()
	arn := func(kind, name string) string { return "arn:" + p + ":iam::" + e.p.Account + ":" + kind + "/" + name }
	res := "*"
	ctx := map[string][]string{}
	switch {
	case req.str("RoleName") != "":
		path := strings.TrimPrefix(req.str("Path"), "/")
		res = arn("role", path+req.str("RoleName"))
		// An existing role is authorized on its ARN, which holds its path
		// (a service-linked role's is aws-service-role/<service>/).
		if req.Operation != "CreateRole" {
			if path := e.view.rolePath(e.ctx, res); strings.Trim(path, "/") != "" {
				res = arn("role", strings.TrimPrefix(path, "/")+req.str("RoleName"))
			}
			req.role = res
		}
	case req.Operation == "CreatePolicy":
		res = arn("policy", strings.TrimPrefix(req.str("Path"), "/")+req.str("PolicyName"))
	case req.str("PolicyArn") != "":
		res = req.str("PolicyArn")
	case req.str("OpenIDConnectProviderArn") != "":
		res = req.str("OpenIDConnectProviderArn")
	case req.Operation == "CreateOpenIDConnectProvider":
		u, _ := url.Parse(req.str("Url"))
		if u != nil {
			res = arn("oidc-provider", u.Host+u.Path)
		}
	case req.str("InstanceProfileName") != "":
		res = arn("instance-profile", req.str("InstanceProfileName"))
	case req.str("UserName") != "":
		res = arn("user", req.str("UserName"))
	case req.Operation == "GetServiceLinkedRoleDeletionStatus":
		// Authorized on the role (Service Authorization Reference), which
		// the task's id names: task/<path><name>/<id> (IAM API Reference,
		// DeleteServiceLinkedRole).
		if id, ok := strings.CutPrefix(req.str("DeletionTaskId"), "task/"); ok && strings.Contains(id, "/") {
			res = arn("role", id[:strings.LastIndex(id, "/")])
		}
	case req.Operation == "CreateServiceLinkedRole":
		svc := req.str("AWSServiceName")
		res = arn("role", "aws-service-role/"+svc+"/")
		ctx["iam:AWSServiceName"] = []string{svc}
	}
	if b := req.str("PermissionsBoundary"); b != "" {
		ctx["iam:PermissionsBoundary"] = []string{b}
	}
	if req.str("RoleName") != "" && req.str("PolicyArn") != "" {
		ctx["iam:PolicyARN"] = []string{req.str("PolicyArn")}
	}
	tags := tagsOf(req.Form, "Tags")
	tagContext(tags, ctx)
	out := []check{{Action: "iam:" + req.Operation, Resource: res, Context: e.context(ctx)}}
	// Creating with tags also takes the permission to tag.
	if tagging := map[string]string{"CreateRole": "iam:TagRole", "CreatePolicy": "iam:TagPolicy",
		"CreateOpenIDConnectProvider": "iam:TagOpenIDConnectProvider", "CreateUser": "iam:TagUser"}[req.Operation]; tagging != "" && len(tags) > 0 {
		out = append(out, check{Action: tagging, Resource: res, Context: e.context(ctx)})
	}
	return out, nil
}

// orgWrites are the Organizations operations that only the management
// account (or a delegated administrator, which regionctl does not use)
// may call; DescribeOrganization is open to every member.
func orgMemberAllowed(op string) bool {
	return op == "DescribeOrganization" || op == "LeaveOrganization"
}

func orgChecks(e *env) ([]check, error) {
	req := e.req
	o, err := e.view.organization(e.ctx)
	if err != nil {
		return nil, err
	}
	action := "organizations:" + req.Operation
	if o != nil && e.p.Account != o.Management && !orgMemberAllowed(req.Operation) {
		return []check{{Action: action, Resource: "*", Context: e.context(nil), RefuseCode: "AccessDeniedException",
			Refuse: "You don't have permissions to access this resource. " + req.Operation + " can be called only from the organization's management account."}}, nil
	}
	ctx := map[string][]string{}
	tags := req.jsonTags("Tags")
	tagContext(tags, ctx)
	resource := func(id string) (check, error) {
		c := check{Action: action, Resource: "*", Context: e.context(ctx)}
		if o == nil || id == "" {
			return c, nil
		}
		base := "arn:" + e.partition() + ":organizations::" + o.Management + ":"
		switch {
		case strings.HasPrefix(id, "r-"):
			c.Resource = base + "root/" + o.ID + "/" + id
		case strings.HasPrefix(id, "ou-"):
			c.Resource = base + "ou/" + o.ID + "/" + id
		case regexp.MustCompile(`^\d{12}$`).MatchString(id):
			c.Resource = base + "account/" + o.ID + "/" + id
		default:
			return c, nil
		}
		rt, err := e.view.orgTags(e.ctx, id)
		if err != nil && !strings.HasPrefix(id, "r-") {
			return c, err
		}
		rc := e.context(ctx)
		for k, v := range rt {
			rc["aws:ResourceTag/"+k] = []string{v}
		}
		c.Context = rc
		return c, nil
	}
	var ids []string
	switch req.Operation {
	case "MoveAccount":
		ids = []string{req.str("AccountId"), req.str("SourceParentId"), req.str("DestinationParentId")}
	case "ListParents", "ListChildren":
		ids = []string{req.str("ChildId") + req.str("ParentId")}
	case "ListTagsForResource", "TagResource", "UntagResource":
		ids = []string{req.str("ResourceId")}
	case "DescribeAccount", "CloseAccount", "RemoveAccountFromOrganization":
		ids = []string{req.str("AccountId")}
	case "DescribeOrganizationalUnit", "UpdateOrganizationalUnit", "DeleteOrganizationalUnit":
		ids = []string{req.str("OrganizationalUnitId")}
	case "ListOrganizationalUnitsForParent", "ListAccountsForParent", "CreateOrganizationalUnit":
		ids = []string{req.str("ParentId")}
	default:
		ids = []string{""}
	}
	var out []check
	for _, id := range ids {
		c, err := resource(id)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if req.Operation == "CreateAccount" && len(tags) > 0 {
		out = append(out, check{Action: "organizations:TagResource", Resource: "*", Context: e.context(ctx)})
	}
	return out, nil
}

// s3Actions are the S3 operations whose IAM action is not s3:<operation>.
var s3Actions = map[string]string{
	"HeadBucket": "s3:ListBucket", "ListObjects": "s3:ListBucket", "ListObjectsV2": "s3:ListBucket",
	"ListObjectVersions": "s3:ListBucketVersions", "HeadObject": "s3:GetObject", "ListBuckets": "s3:ListAllMyBuckets",
	"GetBucketAccelerateConfiguration": "s3:GetAccelerateConfiguration", "PutBucketAccelerateConfiguration": "s3:PutAccelerateConfiguration",
	"GetBucketCors": "s3:GetBucketCORS", "PutBucketCors": "s3:PutBucketCORS", "DeleteBucketCors": "s3:PutBucketCORS",
	"GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration", "PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
	"GetBucketLifecycle": "s3:GetLifecycleConfiguration", "PutBucketLifecycle": "s3:PutLifecycleConfiguration",
	"DeleteBucketLifecycle": "s3:PutLifecycleConfiguration", "GetBucketReplication": "s3:GetReplicationConfiguration",
	"PutBucketReplication": "s3:PutReplicationConfiguration", "DeleteBucketReplication": "s3:PutReplicationConfiguration",
	"GetBucketEncryption": "s3:GetEncryptionConfiguration", "PutBucketEncryption": "s3:PutEncryptionConfiguration",
	"DeleteBucketEncryption": "s3:PutEncryptionConfiguration", "GetObjectLockConfiguration": "s3:GetBucketObjectLockConfiguration",
	"PutObjectLockConfiguration": "s3:PutBucketObjectLockConfiguration", "GetPublicAccessBlock": "s3:GetBucketPublicAccessBlock",
	"PutPublicAccessBlock": "s3:PutBucketPublicAccessBlock", "DeletePublicAccessBlock": "s3:PutBucketPublicAccessBlock",
	"GetBucketNotificationConfiguration": "s3:GetBucketNotification", "PutBucketNotificationConfiguration": "s3:PutBucketNotification",
	"DeleteObjects": "s3:DeleteObject", "CopyObject": "s3:PutObject", "CreateMultipartUpload": "s3:PutObject",
	"UploadPart": "s3:PutObject", "CompleteMultipartUpload": "s3:PutObject", "GetBucketTagging": "s3:GetBucketTagging",
	"DeleteBucketTagging": "s3:PutBucketTagging", "DeleteBucketOwnershipControls": "s3:PutBucketOwnershipControls",
	"GetObjectAttributes": "s3:GetObject", "DeleteBucketWebsite": "s3:DeleteBucketWebsite",
}

func s3Checks(e *env) ([]check, error) {
	req := e.req
	action := s3Actions[req.Operation]
	if action == "" {
		action = "s3:" + req.Operation
	}
	bucket, key := req.Labels["Bucket"], req.Labels["Key"]
	p := e.partition()
	if bucket == "" {
		return []check{{Action: action, Resource: "*", Context: e.context(nil)}}, nil
	}
	res := "arn:" + p + ":s3:::" + bucket
	if key != "" {
		res += "/" + key
	}
	b, err := e.view.bucket(e.ctx, bucket, e.accounts())
	if err != nil {
		return nil, err
	}
	c := check{Action: action, Resource: res, ResourceAccount: e.p.Account, Context: e.context(nil)}
	if b != nil {
		c.ResourceAccount, c.ResourcePolicy = b.Owner, b.Policy
		c.Context["aws:ResourceAccount"] = []string{b.Owner}
		if want := req.Header.Get("X-Amz-Expected-Bucket-Owner"); want != "" && want != b.Owner {
			c.Refuse, c.RefuseCode = "the bucket "+bucket+" is not owned by "+want+" (x-amz-expected-bucket-owner)", "AccessDenied"
		}
		if e.p.Anonymous && b.RestrictPublic {
			c.Refuse, c.RefuseCode = "the public access block of bucket "+bucket+" restricts it to its account (RestrictPublicBuckets)", "AccessDenied"
		}
		// The caller's place in the organisation, for a policy that
		// admits the accounts of an OU. Read only where a resource policy
		// of another account judges the request (it costs moto calls).
		if b.Policy != nil && !e.p.Anonymous && b.Owner != e.p.Account {
			// An account outside the organisation has no path: a policy
			// that asks for one does not admit it.
			if path, err := e.view.orgPath(e.ctx, e.p.Account); err == nil && path != "" {
				c.Context["aws:PrincipalOrgPaths"] = []string{path}
				c.Context["aws:PrincipalOrgID"] = []string{path[:strings.Index(path, "/")]}
			}
		}
	}
	return []check{c}, nil
}

// eksPassedRoles are the request fields through which EKS operations pass
// an IAM role to the service: AWS checks iam:PassRole on each.
var eksPassedRoles = map[string]string{"CreateCluster": "roleArn", "CreateNodegroup": "nodeRole", "CreateFargateProfile": "podExecutionRoleArn",
	"CreatePodIdentityAssociation": "roleArn", "UpdatePodIdentityAssociation": "roleArn", "CreateAddon": "serviceAccountRoleArn", "UpdateAddon": "serviceAccountRoleArn"}

// eksPassedTo is the service a passed role goes to (iam:PassedToService):
// EKS, except an association's role, which EKS Pod Identity's service
// principal assumes.
func eksPassedTo(operation string) string {
	if strings.HasSuffix(operation, "PodIdentityAssociation") {
		return PodIdentityService
	}
	return "eks.amazonaws.com"
}

// eksClusterOperations are the EKS operations whose resource is the
// cluster named in their path (the service authorization reference's
// "cluster" resource type); the others are authorized on "*" here.
var eksClusterOperations = map[string]bool{"DescribeCluster": true, "DeleteCluster": true, "UpdateClusterConfig": true, "UpdateClusterVersion": true,
	"ListNodegroups": true, "CreateNodegroup": true, "ListAddons": true, "CreateAddon": true, "ListFargateProfiles": true, "CreateFargateProfile": true,
	"ListUpdates": true, "DescribeUpdate": true, "AssociateEncryptionConfig": true, "AssociateIdentityProviderConfig": true,
	"ListIdentityProviderConfigs": true, "CreateAccessEntry": true, "ListAccessEntries": true,
	"CreatePodIdentityAssociation": true, "ListPodIdentityAssociations": true}

func eksChecks(e *env) ([]check, error) {
	req := e.req
	res := "*"
	name := req.Labels["name"]
	switch {
	case name != "" && eksClusterOperations[req.Operation]:
		res = "arn:" + e.partition() + ":eks:" + req.Region + ":" + e.p.Account + ":cluster/" + name
	case name != "" && req.Labels["associationId"] != "":
		res = associationARN(req.Region, e.p.Account, name, req.Labels["associationId"])
	case req.Labels["resourceArn"] != "":
		res = req.Labels["resourceArn"]
	}
	out := []check{{Action: "eks:" + req.Operation, Resource: res, Context: e.context(nil)}}
	if field := eksPassedRoles[req.Operation]; field != "" {
		if role, _ := req.JSON[field].(string); role != "" {
			out = append(out, check{Action: "iam:PassRole", Resource: role, Context: e.context(map[string][]string{"iam:PassedToService": {eksPassedTo(req.Operation)}})})
		}
	}
	return out, nil
}

// cloudformationChecks names the resource of a CloudFormation request: a
// StackSet (stackset/<name>:<id>; the gate does not know the id, which a
// pattern of the name matches alike), a stack, or none (CreateStackSet and
// the account-wide calls are authorized on no resource type).
func cloudformationChecks(e *env) ([]check, error) {
	req := e.req
	res := "*"
	base := "arn:" + e.partition() + ":cloudformation:" + req.Region + ":" + e.p.Account + ":"
	switch {
	case req.Operation == "CreateStackSet" || req.Operation == "ActivateOrganizationsAccess" || req.Operation == "DescribeOrganizationsAccess":
	case req.str("StackSetName") != "":
		res = base + "stackset/" + req.str("StackSetName") + ":" + stackSetID
	case req.str("StackName") != "":
		res = base + "stack/" + req.str("StackName") + "/" + stackSetID
	}
	return []check{{Action: "cloudformation:" + req.Operation, Resource: res, Context: e.context(nil)}}, nil
}

// stackSetID stands for the generated part of a StackSet's or a stack's
// ARN, which the gate does not know.
const stackSetID = "00000000-0000-0000-0000-000000000000"
