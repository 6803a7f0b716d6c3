package iam

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Documents are the IAM documents of one region.
type Documents struct {
	PipelineTrust, Pipeline     Document
	MintingTrust, Minting       Document
	DeployTrust, Boundary       Document
	Deploy                      map[string]Document // by management cluster
	SealedTrust                 Document
	ManagementStateBucketPolicy Document
	CentralStateBucketPolicy    Document
	BootstrapSession            Document
	EtcdBackupBucketPolicy      Document
	// The approver roles: of the management clusters' states (regional
	// account) and of the regional cluster's (management account).
	ApproverTrust, Approver, CentralApprover Document
}

// RegionDocuments builds every document of region r.
func RegionDocuments(r Region) Documents {
	d := Documents{
		PipelineTrust: PipelineTrust(r), Pipeline: PipelinePolicy(r),
		MintingTrust: MintingTrust(r), Minting: MintingPolicy(r),
		DeployTrust: DeployRoleTrust(r), Boundary: Boundary(r),
		Deploy:      map[string]Document{},
		SealedTrust: SealedTrust(r), BootstrapSession: BootstrapSessionPolicy(r),
		ManagementStateBucketPolicy: ManagementStateBucketPolicy(r),
		CentralStateBucketPolicy:    CentralStateBucketPolicy(r),
		EtcdBackupBucketPolicy:      EtcdBackupBucketPolicy(r),
		ApproverTrust:               ApproverTrust(r),
		Approver:                    ApproverPolicy(r, r.ManagementStateBucket),
		CentralApprover:             ApproverPolicy(r, r.CentralStateBucket),
	}
	for _, c := range r.Clusters {
		d.Deploy[c.Name] = DeployRolePolicy(r, c)
	}
	return d
}

// CheckIsolation enforces the isolation rules of DESIGN.md §5 on a region's
// documents. Every resource of every Allow is judged on its own, so one
// unscoped resource beside scoped ones is caught:
//
//   - the regional pipeline's own policy allows only resources that name its
//     region (or its region's buckets), or that a regionctl:region resource
//     tag condition limits to its region (or "*" for ResourcelessActions
//     requested in its region), IoT policies only of its Maestro agents,
//     and denies every request made outside its region;
//   - the deploy role and the minting role trust exactly the region's
//     pipeline role, with the region's ExternalId, and no session tag but
//     the request id;
//   - the minting role creates only accounts tagged with the region, moves
//     only accounts tagged with the region, only into the region's OU, and
//     reaches AccessRole only in accounts of that OU;
//   - the deploy role acts in its region only, and on IAM only for
//     identities named for its cluster, created with the boundary;
//   - the boundary allows no IAM, Organizations or role chaining;
//   - the etcd snapshot bucket admits only the etcd-backup roles of the
//     region's management cluster accounts, to add objects under their own
//     account's prefix, and denies deletion to all but the DR account's
//     AccessRole.
func CheckIsolation(r Region, d Documents) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// The regional pipeline's own permissions.
	for i, s := range d.Pipeline.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("regional pipeline policy statement %d (%s)", i, s.Sid)
		if len(s.NotAction) > 0 || len(s.NotResource) > 0 {
			add("%s: an Allow with NotAction or NotResource grants too much", name)
			continue
		}
		tagged := slices.Equal(s.Condition["StringEquals"]["aws:ResourceTag/"+RegionTag], Strings{r.Name})
		// Actions AWS types no resource for are allowed on "*", in the
		// region only.
		resourceless := slices.Equal(s.Condition["StringEquals"]["aws:RequestedRegion"], Strings{r.Name}) &&
			!slices.ContainsFunc(s.Action, func(a string) bool { return !slices.Contains(ResourcelessActions, a) })
		for _, res := range s.Resource {
			if res == "*" && resourceless {
				continue
			}
			if strings.Contains(res, ":iot:") && strings.Contains(res, ":policy/") && !strings.Contains(res, ":policy/"+MaestroAgentPolicyPrefix(r.Name)) {
				add("%s: IoT policy %s is not one of %s's Maestro agents (%s*): the server's policy admits to every consumer's topics", name, res, r.Name, MaestroAgentPolicyPrefix(r.Name))
			}
			if !tagged && !namesRegion(res, r.Name) && !isBucketOf(res, r) {
				add("%s: resource %s is not limited to %s (by name or a %s resource tag condition)", name, res, r.Name, RegionTag)
			}
		}
	}
	if !deniesOutside(d.Pipeline, r.Name, Strings{"sts:GetCallerIdentity"}) {
		add("regional pipeline policy: no Deny of every action requested outside %s", r.Name)
	}

	// Who may assume the roles of the chain.
	for _, t := range []struct {
		name string
		doc  Document
	}{{"deploy role trust", d.DeployTrust}, {"minting role trust", d.MintingTrust}} {
		problems = append(problems, checkPipelineTrust(t.name, t.doc, r)...)
	}

	// The minting role.
	for i, s := range d.Minting.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("minting role policy statement %d (%s)", i, s.Sid)
		if len(s.NotAction) > 0 || len(s.NotResource) > 0 {
			add("%s: an Allow with NotAction or NotResource grants too much", name)
			continue
		}
		requestTagged := slices.Equal(s.Condition["StringEquals"]["aws:RequestTag/"+RegionTag], Strings{r.Name})
		resourceTagged := slices.Equal(s.Condition["StringEquals"]["aws:ResourceTag/"+RegionTag], Strings{r.Name})
		inOU := slices.ContainsFunc(s.Condition["ForAnyValue:StringLike"]["aws:ResourceOrgPaths"], func(p string) bool {
			return strings.HasSuffix(p, ManagementOU+"/")
		})
		for _, a := range s.Action {
			for _, res := range s.Resource {
				ok := false
				switch {
				case slices.Contains(orgReads, a) && res == "*":
					ok = true
				case (a == "organizations:CreateAccount" || a == "organizations:TagResource") && requestTagged:
					ok = slices.Equal(s.Condition["ForAllValues:StringEquals"]["aws:TagKeys"], AccountTagKeys)
				case (a == "organizations:MoveAccount" || a == "organizations:TagResource") && strings.Contains(res, ":account/"):
					ok = resourceTagged
				case a == "organizations:MoveAccount":
					ok = strings.HasSuffix(res, "/"+ManagementOU) || strings.HasSuffix(res, ":root/"+OrganizationID+"/"+RootID)
				case a == "sts:AssumeRole" && strings.HasSuffix(res, ":role/"+AccessRole):
					ok = inOU
				}
				if !ok {
					add("%s: %s on %s is not limited to %s's accounts and OU", name, a, res, r.Name)
				}
			}
		}
	}

	// The deploy role of each management cluster.
	for _, c := range r.Clusters {
		doc, ok := d.Deploy[c.Name]
		if !ok {
			add("management cluster %s has no deploy role policy", c.Name)
			continue
		}
		problems = append(problems, CheckDeployRole(r, c, doc)...)
	}

	problems = append(problems, checkEtcdBackup(r, d.EtcdBackupBucketPolicy)...)

	// Approvals: only the approver roles write them, and they write
	// nothing else.
	for _, b := range []struct {
		name, bucket, approver string
		doc                    Document
	}{
		{"management cluster state bucket policy", r.ManagementStateBucket, RoleARN(r.Partition(), PipelineAccount, ApproverRoleName(r.Name)), d.ManagementStateBucketPolicy},
		{"central state bucket policy", r.CentralStateBucket, RoleARN(r.Partition(), ManagementAccount, ApproverRoleName(r.Name)), d.CentralStateBucketPolicy},
	} {
		if !deniesApprovals(b.doc, "arn:"+r.Partition()+":s3:::"+b.bucket+"/*"+ApprovalInfix+"*", b.approver) {
			add("%s: no Deny of writing approvals for every principal but %s", b.name, b.approver)
		}
	}
	for _, a := range []struct {
		name string
		doc  Document
	}{{"approver policy", d.Approver}, {"central approver policy", d.CentralApprover}} {
		for i, s := range a.doc.Statement {
			if s.Effect != "Allow" {
				continue
			}
			for _, act := range s.Action {
				for _, res := range s.Resource {
					if !(act == "s3:PutObject" && strings.Contains(res, "/*"+ApprovalInfix)) && !(act == "s3:GetObject" && strings.Contains(res, "/*"+PlanInfix) && strings.HasSuffix(res, ".json")) {
						add("%s statement %d (%s): %s on %s is more than approving plans", a.name, i, s.Sid, act, res)
					}
				}
			}
		}
	}

	// The boundary of what the deploy role creates.
	if !denies(d.Boundary, "iam:CreateRole") || !denies(d.Boundary, "sts:AssumeRole") || !denies(d.Boundary, "organizations:CreateAccount") {
		add("management cluster boundary: IAM, Organizations and role chaining must be denied")
	}
	return problems
}

// orgReads are the Organizations reads the minting role needs on every
// account and OU: they change nothing and AWS scopes none of them further.
var orgReads = []string{"organizations:ListAccounts", "organizations:ListCreateAccountStatus", "organizations:DescribeCreateAccountStatus",
	"organizations:DescribeOrganization", "organizations:ListRoots", "organizations:ListOrganizationalUnitsForParent",
	"organizations:ListParents", "organizations:ListTagsForResource"}

func checkPipelineTrust(name string, t Document, r Region) []string {
	var problems []string
	allows := 0
	for i, s := range t.Statement {
		if s.Effect != "Allow" {
			continue
		}
		allows++
		n := fmt.Sprintf("%s statement %d (%s)", name, i, s.Sid)
		want := RoleARN(r.Partition(), PipelineAccount, PipelineRoleName(r.Name))
		if s.Principal == nil || s.Principal.Any || len(s.Principal.Service) > 0 || len(s.Principal.Federated) > 0 || !slices.Equal(s.Principal.AWS, Strings{want}) {
			problems = append(problems, fmt.Sprintf("%s: must trust exactly %s", n, want))
		}
		if !slices.Equal(s.Condition["StringEquals"]["sts:ExternalId"], Strings{ExternalID(r.Name)}) {
			problems = append(problems, fmt.Sprintf("%s: must require sts:ExternalId = %s", n, ExternalID(r.Name)))
		}
		for _, a := range s.Action {
			if a != "sts:AssumeRole" && a != "sts:TagSession" {
				problems = append(problems, fmt.Sprintf("%s: may allow only sts:AssumeRole and sts:TagSession, not %s", n, a))
			}
		}
		if slices.Contains(s.Action, "sts:TagSession") && s.Condition["ForAllValues:StringEquals"]["aws:TagKeys"] == nil {
			problems = append(problems, n+": allows session tags without limiting their keys")
		}
	}
	if allows != 1 {
		problems = append(problems, fmt.Sprintf("%s has %d Allow statements, want exactly 1", name, allows))
	}
	return problems
}

// namesRegion says whether an ARN names region as a whole word (not
// us-east-1 inside us-east-12).
func namesRegion(res, region string) bool {
	for i := 0; ; {
		j := strings.Index(res[i:], region)
		if j < 0 {
			return false
		}
		end := i + j + len(region)
		if end == len(res) || res[end] < '0' || res[end] > '9' {
			return true
		}
		i = end
	}
}

func isBucketOf(res string, r Region) bool {
	for _, b := range []string{r.ManagementStateBucket, r.CentralStateBucket} {
		if b == "" {
			continue
		}
		if bucket := strings.TrimPrefix(res, "arn:"+r.Partition()+":s3:::"); bucket == b || strings.HasPrefix(bucket, b+"/") {
			return true
		}
	}
	return false
}

func hasIAM(actions Strings) bool {
	return slices.ContainsFunc(actions, func(a string) bool { return strings.HasPrefix(a, "iam:") })
}

// deniesOutside says whether doc denies every action but except when
// aws:RequestedRegion is not region.
func deniesOutside(doc Document, region string, except Strings) bool {
	for _, s := range doc.Statement {
		if s.Effect == "Deny" && slices.Equal(s.Resource, Strings{"*"}) && len(s.Action) == 0 &&
			slices.Equal(s.Condition["StringNotEquals"]["aws:RequestedRegion"], Strings{region}) && len(s.Condition) == 1 {
			extra := false
			for _, a := range s.NotAction {
				extra = extra || !slices.Contains(except, a)
			}
			if !extra {
				return true
			}
		}
	}
	return false
}

// denies says whether doc has a Deny of action on every resource with no
// condition (so it holds wherever the request is made). It reads the
// statements' shape only: deciding requests is internal/iamjudge's.
func denies(doc Document, action string) bool {
	for _, s := range doc.Statement {
		if s.Effect != "Deny" || len(s.Condition) > 0 || !slices.Contains(s.Resource, "*") {
			continue
		}
		for _, a := range s.Action {
			if ok, _ := path.Match(strings.ToLower(a), strings.ToLower(action)); ok {
				return true
			}
		}
	}
	return false
}

// CheckDeployRole enforces the rules on the deploy role policy of
// management cluster c of r: its region's services only, and IAM only for
// identities named for its cluster, created with the boundary.
func CheckDeployRole(r Region, c ManagementCluster, doc Document) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for i, s := range doc.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("deploy role policy of %s statement %d (%s)", c.Name, i, s.Sid)
		if len(s.NotAction) > 0 || len(s.NotResource) > 0 {
			add("%s: an Allow with NotAction or NotResource grants too much", name)
			continue
		}
		if slices.Equal(s.Condition["StringEquals"]["aws:RequestedRegion"], Strings{r.Name}) && !hasIAM(s.Action) {
			continue
		}
		// Route 53 is global: held to the partition's global region, in
		// an account that is the cluster's alone.
		if slices.Equal(s.Condition["StringEquals"]["aws:RequestedRegion"], Strings{GlobalRegion(r.Partition())}) && onlyDNS(s.Action) {
			continue
		}
		for _, a := range s.Action {
			if !strings.HasPrefix(a, "iam:") {
				add("%s: %s is not conditioned on aws:RequestedRegion = %s", name, a, r.Name)
			}
		}
		for _, res := range s.Resource {
			switch {
			case strings.HasSuffix(res, ":role/"+r.Name+"-"+c.Name+"-*"):
			case roleOfCluster(res, r.Name+"-"+c.Name+"-"):
			case strings.Contains(res, ":oidc-provider/oidc.eks."+r.Name+".amazonaws.com/"):
			case strings.Contains(res, ":role/aws-service-role/") && s.Condition["StringEquals"]["iam:AWSServiceName"] != nil:
			default:
				add("%s: IAM resource %s is not named for %s/%s", name, res, r.Name, c.Name)
			}
		}
		if slices.Contains(s.Action, "iam:CreateRole") && s.Condition["ArnLike"]["iam:PermissionsBoundary"] == nil {
			add("%s: roles are created without requiring the %s boundary", name, BoundaryName)
		}
	}
	if !deniesOutside(doc, r.Name, Strings{"iam:*", "route53:*", "sts:GetCallerIdentity"}) {
		add("deploy role policy of %s: no Deny of every non-IAM action requested outside %s", c.Name, r.Name)
	}
	if !deniesDNSOutside(doc, GlobalRegion(r.Partition())) {
		add("deploy role policy of %s: no Deny of route53:* requested outside %s", c.Name, GlobalRegion(r.Partition()))
	}
	return problems
}

// onlyDNS says whether every action is a Route 53 one.
func onlyDNS(actions Strings) bool {
	return len(actions) > 0 && !slices.ContainsFunc(actions, func(a string) bool { return !strings.HasPrefix(a, "route53:") })
}

// deniesDNSOutside says whether doc denies every Route 53 action when
// aws:RequestedRegion is not global: a deploy role exempt from the regional
// Deny for Route 53 must still be held to it.
func deniesDNSOutside(doc Document, global string) bool {
	for _, s := range doc.Statement {
		if s.Effect == "Deny" && slices.Equal(s.Resource, Strings{"*"}) && slices.Equal(s.Action, Strings{"route53:*"}) &&
			slices.Equal(s.Condition["StringNotEquals"]["aws:RequestedRegion"], Strings{global}) && len(s.Condition) == 1 {
			return true
		}
	}
	return false
}

func checkEtcdBackup(r Region, d Document) []string {
	var problems []string
	p := r.Partition()
	bucket := "arn:" + p + ":s3:::" + r.EtcdBackupBucket
	ou := Strings{OrganizationID + "/" + RootID + "/*" + ManagementOU + "/"}
	roles := Strings{RoleARN(p, "*", r.Name+"-*-"+EtcdBackupRoleSuffix)}
	for i, s := range d.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("etcd backup bucket policy statement %d (%s)", i, s.Sid)
		if len(s.NotAction) > 0 || len(s.NotResource) > 0 || s.Principal == nil {
			problems = append(problems, name+": an Allow must name its actions, resources and principals")
			continue
		}
		if !slices.Equal(s.Condition["ForAnyValue:StringLike"]["aws:PrincipalOrgPaths"], ou) || !slices.Equal(s.Condition["ArnLike"]["aws:PrincipalArn"], roles) {
			problems = append(problems, fmt.Sprintf("%s: must admit only %v of accounts in %v", name, roles, ou))
		}
		for _, a := range s.Action {
			if a != "s3:PutObject" {
				problems = append(problems, fmt.Sprintf("%s: a management cluster may only add snapshots, not %s", name, a))
			}
		}
		for _, res := range s.Resource {
			if res != bucket+"/"+PrincipalAccountVariable+"/*" {
				problems = append(problems, fmt.Sprintf("%s: resource %s is not the caller's own prefix of %s", name, res, r.EtcdBackupBucket))
			}
		}
	}
	if !deniesDeletion(d, bucket, RoleARN(p, DRAccount, AccessRole)) {
		problems = append(problems, "etcd backup bucket policy: no Deny of deleting snapshots for every principal but the DR account's "+AccessRole)
	}
	return problems
}

// deniesDeletion says whether d denies deleting objects and their versions
// in bucket to every principal but except.
func deniesDeletion(d Document, bucket, except string) bool {
	for _, s := range d.Statement {
		if s.Effect != "Deny" || s.Principal == nil || !s.Principal.Any || !slices.Contains(s.Resource, bucket+"/*") ||
			!slices.Contains(s.Action, "s3:DeleteObject") || !slices.Contains(s.Action, "s3:DeleteObjectVersion") {
			continue
		}
		if len(s.Condition) == 1 && slices.Equal(s.Condition["StringNotEquals"]["aws:PrincipalArn"], Strings{except}) {
			return true
		}
	}
	return false
}

// deniesApprovals says whether d denies writing the approvals (objects
// approvals) to every principal but approver.
func deniesApprovals(d Document, approvals, approver string) bool {
	for _, s := range d.Statement {
		if s.Effect == "Deny" && s.Principal != nil && s.Principal.Any && slices.Contains(s.Action, "s3:PutObject") &&
			slices.Contains(s.Resource, approvals) && len(s.Condition) == 1 &&
			slices.Equal(s.Condition["StringNotEquals"]["aws:PrincipalArn"], Strings{approver}) {
			return true
		}
	}
	return false
}

// roleOfCluster says res names one role (no wildcard in its name) whose
// name starts with the cluster's prefix.
func roleOfCluster(res, prefix string) bool {
	_, name, ok := strings.Cut(res, ":role/")
	return ok && strings.HasPrefix(name, prefix) && !strings.ContainsAny(name, "*?")
}
