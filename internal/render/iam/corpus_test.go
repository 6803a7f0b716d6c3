package iam_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/iamjudge/simulator"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// The corpus: requests generated from the rendered chain itself. Every
// principal of a region's chain (the regional pipeline, the minting role,
// the deploy role, a role the deploy role makes under the boundary) asks
// for every action its policies name, on each resource pattern they name,
// made concrete for its own region and accounts and for another region's,
// requested in its own region and in another, with and without the
// ExternalId, with its own region's tags and another's. Both judges decide
// each; they must agree.

// principalOf is one principal of region in's chain, as AWS sees it.
type corpusPrincipal struct {
	name     string
	caller   iamjudge.Caller
	identity []iam.Document
	boundary *iam.Document
	// tags are its session's principal tags.
	tags map[string]string
}

func corpusPrincipals(t *testing.T, w *world, in *installed) []corpusPrincipal {
	deploy := in.docs["management-cluster-deploy-role-policy.json"]
	if d, ok := in.docs[in.cluster+"-deploy-role-policy.json"]; ok { // a chain rendered before one policy served a region
		deploy = d
	}
	admin := iam.Document{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow", Action: iam.Strings{"*"}, Resource: iam.Strings{"*"}}}}
	node := session(in.mcAccount, in.name+"-"+in.cluster+"-node", "ec2")
	return []corpusPrincipal{
		{"regional pipeline", session(in.account, iam.PipelineRoleName(in.name), "tekton"), []iam.Document{*in.doc(t, "regional-pipeline-policy.json")}, nil, nil},
		{"minting role", session(w.management, iam.MintingRoleName(in.name), "r1"), []iam.Document{*in.doc(t, "minting-role-policy.json")}, nil, map[string]string{iam.RequestIDTag: "r1"}},
		{"deploy role", session(in.mcAccount, iam.DeployRoleName, "r1"), []iam.Document{deploy}, nil, map[string]string{iam.RequestIDTag: "r1"}},
		{"a role under the boundary", node, []iam.Document{admin}, in.doc(t, "management-cluster-boundary.json"), nil},
	}
}

// sampleActions are concrete actions for a wildcard of a policy.
var sampleActions = map[string][]string{
	"ec2:*": {"ec2:RunInstances"}, "eks:*": {"eks:CreateCluster"}, "elasticloadbalancing:*": {"elasticloadbalancing:CreateLoadBalancer"},
	"autoscaling:*": {"autoscaling:CreateAutoScalingGroup"}, "kms:*": {"kms:Decrypt", "kms:CreateGrant"}, "logs:*": {"logs:CreateLogGroup"},
	"secretsmanager:*": {"secretsmanager:GetSecretValue", "secretsmanager:PutResourcePolicy"}, "s3:*": {"s3:GetObject", "s3:PutObject", "s3:PutBucketPolicy"},
	"route53:*": {"route53:CreateHostedZone"}, "iam:*": {"iam:CreateRole", "iam:PutRolePolicy"}, "*": {"iam:CreateUser", "s3:GetObject", "sts:AssumeRole"},
	"account:*": {"account:PutAlternateContact"}, "organizations:*": {"organizations:LeaveOrganization"},
	"s3:*Object*": {"s3:GetObject", "s3:PutObject"}, "s3:ListBucket*": {"s3:ListBucket"},
	"s3:GetObject*": {"s3:GetObject"}, "s3:PutObject*": {"s3:PutObject"}, "s3:DeleteObject*": {"s3:DeleteObject"},
	"kms:GenerateDataKey*": {"kms:GenerateDataKey"}, "kms:ReEncrypt*": {"kms:ReEncryptFrom"},
}

var accountSegment = regexp.MustCompile(`^(arn:[^:]*:[^:]*:[^:]*:)([^:]*)(:.*)$`)

// concrete makes a resource pattern of a into one of the region to: its
// region, accounts, OU and buckets put for a's, and its wildcards filled.
func concrete(pattern string, w *world, a, to *installed, account string) string {
	if pattern == "*" {
		return "*"
	}
	r := pattern
	for _, p := range [][2]string{{a.centralBucket, to.centralBucket}, {a.mcBucket, to.mcBucket}, {a.etcdBucket, to.etcdBucket},
		{a.account, to.account}, {a.mcAccount, to.mcAccount}, {a.drAccount, to.drAccount}, {a.ou, to.ou}, {a.name, to.name}} {
		if p[0] != "" {
			r = strings.ReplaceAll(r, p[0], p[1])
		}
	}
	if m := accountSegment.FindStringSubmatch(r); m != nil && m[2] == "*" {
		r = m[1] + account + m[3]
	}
	r = strings.ReplaceAll(r, "${aws:PrincipalAccount}", account)
	r = strings.ReplaceAll(r, "*", "x1")
	return strings.ReplaceAll(r, "?", "x")
}

// owner finds who owns resource and its resource policy, in w.
func owner(t *testing.T, w *world, res, caller string) (string, *iam.Document) {
	for _, in := range w.regions {
		switch {
		case res == iam.RoleARN("aws", w.management, iam.MintingRoleName(in.name)):
			return w.management, in.doc(t, "minting-role-trust.json")
		case res == iam.RoleARN("aws", in.mcAccount, iam.DeployRoleName):
			return in.mcAccount, in.doc(t, "management-cluster-deploy-role-trust.json")
		case strings.HasPrefix(res, "arn:aws:s3:::"+in.mcBucket+"/") || res == "arn:aws:s3:::"+in.mcBucket:
			return in.account, in.doc(t, "management-cluster-state-bucket-policy.json")
		case strings.HasPrefix(res, "arn:aws:s3:::"+in.centralBucket+"/") || res == "arn:aws:s3:::"+in.centralBucket:
			return w.management, in.doc(t, "central-state-bucket-policy.json")
		case strings.HasPrefix(res, "arn:aws:s3:::"+in.etcdBucket+"/") || res == "arn:aws:s3:::"+in.etcdBucket:
			return in.drAccount, in.doc(t, "etcd-backup-bucket-policy.json")
		}
	}
	if m := accountSegment.FindStringSubmatch(res); m != nil && regexp.MustCompile(`^\d{12}$`).MatchString(m[2]) {
		return m[2], nil
	}
	return caller, nil
}

// levels are the organisation's levels over account (root, OUs, the
// account), with the region's guardrails on its OUs.
func levels(w *world, account, kind string) []iamjudge.OrgLevel {
	full := iam.Document{Version: "2012-10-17", ID: "FullAWSAccess", Statement: []iam.Statement{{Effect: "Allow", Action: iam.Strings{"*"}, Resource: iam.Strings{"*"}}}}
	if account == w.management {
		return nil
	}
	for _, in := range w.regions {
		var ou string
		switch account {
		case in.account:
			ou = "ou-ab12-regional" + in.name
		case in.mcAccount:
			ou = in.ou
		default:
			continue
		}
		var guard []iam.Document
		if d, ok := in.docs[map[string]string{"scp": "scp-guardrails.json", "rcp": "rcp-data-perimeter.json"}[kind]]; ok {
			guard = []iam.Document{d}
		}
		if kind == "scp" {
			return []iamjudge.OrgLevel{{ID: root, Policies: []iam.Document{full}}, {ID: ou, Policies: append([]iam.Document{full}, guard...)}, {ID: account, Policies: []iam.Document{full}}}
		}
		if len(guard) == 0 {
			return nil
		}
		return []iamjudge.OrgLevel{{ID: ou, Policies: guard}}
	}
	return nil
}

func corpus(t *testing.T, w *world) []probe {
	var out []probe
	regions := w.regions[:3]
	for _, a := range regions {
		for _, to := range regions {
			for _, pr := range corpusPrincipals(t, w, a) {
				for _, d := range append(append([]iam.Document{}, pr.identity...), derefAll(pr.boundary)...) {
					for _, s := range d.Statement {
						actions := []string(s.Action)
						if len(actions) == 0 {
							actions = []string{"s3:GetObject", "iam:CreateRole"} // a NotAction statement: one inside, one outside
						}
						for _, act := range actions {
							concreteActs := sampleActions[act]
							if concreteActs == nil {
								concreteActs = []string{act}
							}
							resources := []string(s.Resource)
							if len(resources) == 0 {
								resources = []string{"*"}
							}
							for _, ca := range concreteActs {
								for _, pat := range resources {
									out = append(out, corpusRequests(t, w, a, to, pr, ca, pat)...)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

func derefAll(d *iam.Document) []iam.Document {
	if d == nil {
		return nil
	}
	return []iam.Document{*d}
}

// corpusRequests are the requests of principal pr of a for action act on
// pattern, made concrete for region to.
func corpusRequests(t *testing.T, w *world, a, to *installed, pr corpusPrincipal, act, pattern string) []probe {
	var out []probe
	res := concrete(pattern, w, a, to, map[bool]string{true: to.mcAccount, false: to.account}[strings.HasPrefix(pr.caller.ARN, "arn:aws:sts::"+a.mcAccount)])
	account, policy := owner(t, w, res, pr.caller.Account)
	for _, requested := range []string{a.name, to.name, "us-east-1"} {
		variants := []map[string][]string{{}}
		switch {
		case act == "sts:AssumeRole":
			variants = []map[string][]string{{"sts:ExternalId": {iam.ExternalID(a.name)}}, {}, {"sts:ExternalId": {iam.ExternalID(to.name)}}}
		case act == "sts:TagSession":
			variants = []map[string][]string{{"aws:RequestTag/" + iam.RequestIDTag: {"r1"}, "aws:TagKeys": {iam.RequestIDTag}}, {"aws:RequestTag/owner": {"me"}, "aws:TagKeys": {"owner"}}}
		case act == "organizations:CreateAccount" || act == "organizations:TagResource" || act == "organizations:UntagResource" || act == "organizations:MoveAccount":
			variants = nil
			for _, tagged := range []*installed{a, to} {
				v := map[string][]string{
					"aws:RequestTag/" + iam.RegionTag: {tagged.name}, "aws:RequestTag/" + iam.EnvironmentTag: {tagged.env},
					"aws:TagKeys": {iam.EnvironmentTag, iam.RegionTag},
				}
				if strings.Contains(res, ":account/") {
					v["aws:ResourceTag/"+iam.RegionTag] = []string{to.name}
					v["aws:ResourceTag/"+iam.EnvironmentTag] = []string{to.env}
					v["aws:ResourceTag/"+iam.RequestIDTag] = []string{"r1"}
				}
				variants = append(variants, v)
			}
		}
		for i, v := range variants {
			ctx := map[string][]string{"aws:RequestedRegion": {requested}, "aws:PrincipalArn": {pr.caller.RoleARN}, "aws:PrincipalAccount": {pr.caller.Account}}
			if pr.caller.Account != w.management {
				ctx["aws:PrincipalOrgID"] = []string{org}
			}
			if account != "" && account != "*" {
				ctx["aws:ResourceAccount"] = []string{account}
				ctx["aws:ResourceOrgID"] = []string{org}
			}
			for k, val := range pr.tags {
				ctx["aws:PrincipalTag/"+k] = []string{val}
			}
			for k, val := range v {
				ctx[k] = val
			}
			az := iamjudge.Authorization{Request: iamjudge.Request{Caller: pr.caller, Action: act, Resource: res, Context: ctx},
				Identity: pr.identity, Boundary: pr.boundary, ResourcePolicy: policy, ResourceAccount: account,
				TrustRequired: strings.HasPrefix(act, "sts:AssumeRole") || act == "sts:TagSession",
				SCPs:          levels(w, pr.caller.Account, "scp"), RCPs: levels(w, account, "rcp")}
			if az.TrustRequired && policy == nil {
				continue // no role the chain makes: nothing to decide
			}
			out = append(out, probe{what: fmt.Sprintf("%s of %s: %s on %s requested in %s (variant %d)", pr.name, a.name, act, res, requested, i), a: az})
		}
	}
	return out
}

// TestCorpusBothJudgesAgree decides the corpus with both judges. With
// REGIONCTL_CORPUS_DEPLOY set to a deploy/ tree (say, one an earlier
// commit rendered), it judges that tree's documents instead, to compare
// chains; the agreement is reported either way.
func TestCorpusBothJudgesAgree(t *testing.T) {
	j := simulator.Require(t)
	w := install(t)
	cases := corpus(t, w)
	if len(cases) < 2000 {
		t.Fatalf("the corpus has %d requests, want at least 2,000", len(cases))
	}
	agreed, allowed, malformed := 0, 0, 0
	var disagreements []string
	for _, c := range cases {
		v, err := j.Compare(c.a)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if r := v.Theirs.Refused(); strings.HasPrefix(r, "no.resource.types") || strings.HasPrefix(r, "must.use.wildcard") || v.Theirs.Wildcard {
			// A statement's action with another of its resources, or
			// with "*" where it needs a resource: a request AWS never
			// sees; the documents' validation holds those.
			malformed++
			continue
		}
		if v.Ours.Decision == iamjudge.Allow {
			allowed++
		}
		if v.Agree() || simulator.Settled(c.a, v) != "" {
			agreed++
			continue
		}
		disagreements = append(disagreements, c.what+": "+v.String())
	}
	slices.Sort(disagreements)
	for _, d := range disagreements {
		if os.Getenv("REGIONCTL_CORPUS_DEPLOY") != "" {
			t.Log(d)
		} else {
			t.Error(d)
		}
	}
	n := len(cases) - malformed
	t.Logf("corpus: %d requests (%d allowed by iamjudge; %d more pair an action with a resource it never authorizes on and are left out); the judges agree on %d (%.1f%%)",
		n, allowed, malformed, agreed, 100*float64(agreed)/float64(n))
	if n < 2000 {
		t.Errorf("the corpus has %d requests AWS would decide, want at least 2,000", n)
	}
}
