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
	Deploy                      Document // the same in each management cluster account
	ManagementStateBucketPolicy Document
	CentralStateBucketPolicy    Document
	EtcdBackupBucketPolicy      Document
	HealthBucketPolicy          Document
	// The organisation's guardrails on the region's OUs.
	GuardrailSCP, DataPerimeterRCP Document
	// The approver roles: of the management clusters' states (regional
	// account) and of the regional cluster's (management account).
	ApproverTrust, Approver, CentralApprover Document
}

// RegionDocuments builds every document of region r.
func RegionDocuments(r Region) Documents {
	d := Documents{
		PipelineTrust: PipelineTrust(r), Pipeline: PipelinePolicy(r),
		MintingTrust: MintingTrust(r), Minting: MintingPolicy(r),
		DeployTrust: DeployRoleTrust(r), Boundary: Boundary(r), Deploy: DeployRolePolicy(r),
		GuardrailSCP: GuardrailSCP(r), DataPerimeterRCP: DataPerimeterRCP(r),
		ManagementStateBucketPolicy: ManagementStateBucketPolicy(r),
		CentralStateBucketPolicy:    CentralStateBucketPolicy(r),
		EtcdBackupBucketPolicy:      EtcdBackupBucketPolicy(r),
		HealthBucketPolicy:          HealthBucketPolicy(r),
		ApproverTrust:               ApproverTrust(r),
		Approver:                    ApproverPolicy(r, r.ManagementStateBucket),
		CentralApprover:             ApproverPolicy(r, r.CentralStateBucket),
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
//   - the minting role creates only accounts tagged with the region, tags
//     only on that request or what is tagged for the region already, moves
//     only the account of its own run that no run placed yet, from the root
//     into the region's OU only, and assumes no role at all;
//   - the deploy role acts in its region only, and on IAM only for
//     identities named for its region, created with the boundary;
//   - the boundary allows no IAM, Organizations or role chaining;
//   - the guardrails deny the root user, leaving the organisation, other
//     regions, and changes to the chain, and admit no principal from
//     outside the organisation;
//   - the etcd snapshot bucket admits only the etcd-backup roles of the
//     region's management cluster accounts, to add objects under their own
//     account's prefix, and denies deletion to all but the DR account's
//     AccessRole;
//   - the health bucket admits only the health reporter roles of the
//     region's accounts, each to put its report under its own account's
//     prefix.
func CheckIsolation(r Region, d Documents) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	problems = append(problems, checkRegionalPipeline(r, d.Pipeline)...)

	// Who may assume the roles of the chain.
	for _, t := range []struct {
		name string
		doc  Document
	}{{"deploy role trust", d.DeployTrust}, {"minting role trust", d.MintingTrust}} {
		problems = append(problems, checkPipelineTrust(t.name, t.doc, r)...)
	}

	// The minting role.
	problems = append(problems, checkMinting(r, d.Minting)...)

	// The deploy role, the same in each management cluster account.
	problems = append(problems, CheckDeployRole(r, d.Deploy)...)
	problems = append(problems, checkGuardrails(r, d.GuardrailSCP, d.DataPerimeterRCP)...)

	problems = append(problems, checkEtcdBackup(r, d.EtcdBackupBucketPolicy)...)
	problems = append(problems, checkHealthBucket(r, d.HealthBucketPolicy)...)

	problems = append(problems, checkApprovals(r, d)...)

	// The boundary of what the deploy role creates.
	if !denies(d.Boundary, "iam:CreateRole") || !denies(d.Boundary, "sts:AssumeRole") || !denies(d.Boundary, "organizations:CreateAccount") {
		add("management cluster boundary: IAM, Organizations and role chaining must be denied")
	}
	return problems
}

// checkRegionalPipeline holds the regional pipeline's own policy of r to
// r: every resource it is allowed is r's by name or by its region tag, or
// one of the actions AWS types no resource for, in r only.
func checkRegionalPipeline(r Region, policy Document) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for i, s := range policy.Statement {
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
	if !deniesOutside(policy, r.Name, Strings{"sts:GetCallerIdentity"}) {
		add("regional pipeline policy: no Deny of every action requested outside %s", r.Name)
	}
	return problems
}

// checkApprovals: only the approver roles write approvals, and they write
// nothing else.
func checkApprovals(r Region, d Documents) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
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
	return problems
}

func checkPipelineTrust(name string, t Document, r Region) []string {
	var problems []string
	assume, tag := 0, 0
	want := RoleARN(r.Partition(), PipelineAccount, PipelineRoleName(r.Name))
	for i, s := range t.Statement {
		if s.Effect != "Allow" {
			continue
		}
		n := fmt.Sprintf("%s statement %d (%s)", name, i, s.Sid)
		if s.Principal == nil || s.Principal.Any || len(s.Principal.Service) > 0 || len(s.Principal.Federated) > 0 || !slices.Equal(s.Principal.AWS, Strings{want}) {
			problems = append(problems, fmt.Sprintf("%s: must trust exactly %s", n, want))
		}
		for _, a := range s.Action {
			switch a {
			case "sts:AssumeRole":
				assume++
				if !slices.Equal(s.Condition["StringEquals"]["sts:ExternalId"], Strings{ExternalID(r.Name)}) {
					problems = append(problems, fmt.Sprintf("%s: must require sts:ExternalId = %s", n, ExternalID(r.Name)))
				}
			case "sts:TagSession":
				tag++
				if !slices.Equal(s.Condition["ForAllValues:StringEquals"]["aws:TagKeys"], sessionTagKeys) {
					problems = append(problems, n+": allows session tags without limiting their keys to "+strings.Join(sessionTagKeys, ", "))
				}
			default:
				problems = append(problems, fmt.Sprintf("%s: may allow only sts:AssumeRole and sts:TagSession, not %s", n, a))
			}
		}
	}
	if assume != 1 || tag > 1 {
		problems = append(problems, fmt.Sprintf("%s allows sts:AssumeRole in %d statements and sts:TagSession in %d, want 1 and at most 1", name, assume, tag))
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

// CheckDeployRole enforces the rules on the deploy role policy of r's
// management cluster accounts: its region's services only, and IAM only
// for identities named for its region, created with the boundary.
func CheckDeployRole(r Region, doc Document) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for i, s := range doc.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("deploy role policy statement %d (%s)", i, s.Sid)
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
			case roleOfRegion(res, r.Name+"-"):
			case strings.Contains(res, ":oidc-provider/oidc.eks."+r.Name+".amazonaws.com/"):
			case strings.Contains(res, ":role/aws-service-role/") && s.Condition["StringEquals"]["iam:AWSServiceName"] != nil:
			// A service-linked role is the account's (the cluster's alone),
			// and its trust and permissions are AWS's: reading, tagging and
			// deleting it change no one's rights.
			case strings.Contains(res, ":role/aws-service-role/") && onlyUpkeep(s.Action):
			default:
				add("%s: IAM resource %s is not named for %s", name, res, r.Name)
			}
		}
		if slices.Contains(s.Action, "iam:CreateRole") && s.Condition["ArnLike"]["iam:PermissionsBoundary"] == nil {
			add("%s: roles are created without requiring the %s boundary", name, BoundaryName)
		}
	}
	if !deniesOutside(doc, r.Name, Strings{"iam:*", "route53:*", "sts:GetCallerIdentity"}) {
		add("deploy role policy: no Deny of every non-IAM action requested outside %s", r.Name)
	}
	if !deniesDNSOutside(doc, GlobalRegion(r.Partition())) {
		add("deploy role policy: no Deny of route53:* requested outside %s", GlobalRegion(r.Partition()))
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

// checkHealthBucket holds every Allow of the health bucket's policy to
// the reporter roles of the region's accounts (its management cluster OU,
// or its regional account), putting their own report.
func checkHealthBucket(r Region, d Document) []string {
	var problems []string
	p := r.Partition()
	report := "arn:" + p + ":s3:::" + r.HealthBucket + "/" + PrincipalAccountVariable + "/" + HealthReport
	ou := Strings{OrganizationID + "/" + RootID + "/*" + ManagementOU + "/"}
	roles := Strings{RoleARN(p, "*", r.Name+"-*-"+HealthRoleSuffix)}
	for i, s := range d.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("health bucket policy statement %d (%s)", i, s.Sid)
		if len(s.NotAction) > 0 || len(s.NotResource) > 0 || s.Principal == nil || !slices.Equal(s.Action, Strings{"s3:PutObject"}) || !slices.Equal(s.Resource, Strings{report}) {
			problems = append(problems, fmt.Sprintf("%s: a cluster may only put its own report, %s", name, report))
			continue
		}
		inOU := slices.Equal(s.Condition["ForAnyValue:StringLike"]["aws:PrincipalOrgPaths"], ou) && slices.Equal(s.Condition["StringEquals"]["aws:PrincipalOrgID"], Strings{OrganizationID})
		regional := slices.Equal(s.Condition["StringEquals"]["aws:PrincipalAccount"], Strings{PipelineAccount})
		if !slices.Equal(s.Condition["ArnLike"]["aws:PrincipalArn"], roles) || !(inOU || regional) {
			problems = append(problems, fmt.Sprintf("%s: must admit only %v of accounts in %v or of the regional account", name, roles, ou))
		}
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

// roleOfRegion says res names roles whose names start with the region's
// prefix (a wildcard may follow it, never stand before it).
func roleOfRegion(res, prefix string) bool {
	_, name, ok := strings.Cut(res, ":role/")
	return ok && strings.HasPrefix(name, prefix)
}

// checkMinting enforces the rules on the minting role of r.
func checkMinting(r Region, d Document) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	tagKeys := append(append(Strings{}, AccountTagKeys...), SealedTag)
	for i, s := range d.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("minting role policy statement %d (%s)", i, s.Sid)
		if len(s.NotAction) > 0 || len(s.NotResource) > 0 {
			add("%s: an Allow with NotAction or NotResource grants too much", name)
			continue
		}
		eq := s.Condition["StringEquals"]
		requestTagged := slices.Equal(eq["aws:RequestTag/"+RegionTag], Strings{r.Name}) && slices.Equal(eq["aws:RequestTag/"+EnvironmentTag], Strings{r.Environment})
		resourceTagged := slices.Equal(eq["aws:ResourceTag/"+RegionTag], Strings{r.Name}) && slices.Equal(eq["aws:ResourceTag/"+EnvironmentTag], Strings{r.Environment})
		thisRun := slices.Equal(eq["aws:ResourceTag/"+RequestIDTag], Strings{"${aws:PrincipalTag/" + RequestIDTag + "}"})
		unplaced := slices.Equal(s.Condition["Null"]["aws:ResourceTag/"+SealedTag], Strings{"true"})
		keys := s.Condition["ForAllValues:StringEquals"]["aws:TagKeys"]
		for _, a := range s.Action {
			if strings.HasPrefix(a, "sts:") {
				add("%s: %s: the minting role reaches no account (the deploy role arrives through %s)", name, a, DeployRoleStackSet(r.Name))
				continue
			}
			for _, res := range s.Resource {
				ok := false
				switch {
				case slices.Contains(orgReads, a) && res == "*":
					ok = true
				case a == "organizations:CreateAccount":
					ok = requestTagged && slices.Equal(keys, AccountTagKeys)
				case a == "organizations:TagResource":
					ok = requestTagged && len(keys) > 0 && !slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(tagKeys, k) })
				case a == "organizations:MoveAccount" && strings.Contains(res, ":account/"):
					ok = resourceTagged && thisRun && unplaced
				case a == "organizations:MoveAccount":
					ok = strings.HasSuffix(res, ":ou/"+OrganizationID+"/"+ManagementOU) || strings.HasSuffix(res, ":root/"+OrganizationID+"/"+RootID)
				}
				if !ok {
					add("%s: %s on %s is not limited to %s's own accounts and OU", name, a, res, r.Name)
				}
			}
		}
	}
	if !deniesTaggingOutside(d, r.Name, RegionTag, r.Name) || !deniesTaggingOutside(d, r.Name, EnvironmentTag, r.Environment) {
		add("minting role policy: no Deny of tagging what is not tagged for %s (%s) already", r.Name, r.Environment)
	}
	return problems
}

// deniesTaggingOutside says whether d denies organizations:TagResource on
// every resource of the organisation whose tag key is not value.
func deniesTaggingOutside(d Document, r, key, value string) bool {
	for _, s := range d.Statement {
		if s.Effect == "Deny" && slices.Contains(s.Action, "organizations:TagResource") && len(s.Condition) == 1 &&
			!slices.ContainsFunc(OrganizationResources(Partition(r)), func(res string) bool { return !slices.Contains(s.Resource, res) }) &&
			slices.Equal(s.Condition["StringNotEquals"]["aws:ResourceTag/"+key], Strings{value}) {
			return true
		}
	}
	return false
}

// checkGuardrails enforces what the SCP and RCP of r's OUs must deny.
func checkGuardrails(r Region, scp, rcp Document) []string {
	var problems []string
	has := func(d Document, ok func(Statement) bool) bool { return slices.ContainsFunc(d.Statement, ok) }
	if !has(scp, func(s Statement) bool {
		return s.Effect == "Deny" && slices.Equal(s.Action, Strings{"*"}) && slices.Equal(s.Condition["ArnLike"]["aws:PrincipalArn"], Strings{"arn:" + r.Partition() + ":iam::*:root"})
	}) {
		problems = append(problems, "guardrail SCP: no Deny of everything to the root user")
	}
	if !has(scp, func(s Statement) bool {
		return s.Effect == "Deny" && slices.Contains(s.Action, "organizations:LeaveOrganization") && len(s.Condition) == 0
	}) {
		problems = append(problems, "guardrail SCP: no Deny of leaving the organisation")
	}
	if !deniesOutside(scp, r.Name, globalServices) {
		problems = append(problems, fmt.Sprintf("guardrail SCP: no Deny of every regional service requested outside %s", r.Name))
	}
	for _, a := range []string{"s3:*", "sts:AssumeRole", "kms:*", "secretsmanager:*"} {
		if !has(rcp, func(s Statement) bool {
			return s.Effect == "Deny" && s.Principal != nil && s.Principal.Any && slices.Contains(s.Action, a) &&
				slices.Equal(s.Condition["StringNotEqualsIfExists"]["aws:PrincipalOrgID"], Strings{OrganizationID})
		}) {
			problems = append(problems, "data perimeter RCP: "+a+" is not denied to principals outside the organisation")
		}
	}
	return problems
}

// onlyUpkeep reports whether actions are only ServiceLinkedRoleUpkeep.
func onlyUpkeep(actions Strings) bool {
	for _, a := range actions {
		if !slices.Contains(ServiceLinkedRoleUpkeep, a) {
			return false
		}
	}
	return len(actions) > 0
}
