package iam_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/iamjudge/simulator"
	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/schema"
)

// world is the example fleet's rendered documents installed the way the
// pipelines install them: one management account, an account per region,
// an account per management cluster, each region's management cluster OU.
type world struct {
	management string
	regions    []*installed
	// central is the central pipeline's policy (of the aws partition).
	central iam.Document
}

type installed struct {
	name, env, account, ou, mcAccount string
	drAccount, etcdBucket             string
	healthBucket                      string
	mcBucket, centralBucket           string
	oidcBucket                        string                  // its first management cluster's
	docs                              map[string]iam.Document // by file name under iam/
	cluster                           string                  // its first management cluster
}

const (
	org  = "o-exampleorg1"
	root = "r-ab12"
)

func install(t *testing.T) *world {
	t.Helper()
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(os.DirFS("../../.."), "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	charts, err := render.ReadCharts(os.DirFS("../../.."))
	if err != nil {
		t.Fatal(err)
	}
	out, diags := render.Render(f, render.Options{Renderer: "test", Charts: charts})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	files := out.ByPath()
	if dir := os.Getenv("REGIONCTL_CORPUS_DEPLOY"); dir != "" {
		// The documents of a tree rendered before, to judge its chain.
		files = map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			b, err := os.ReadFile(p)
			files[filepath.ToSlash(rel)] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	w := &world{management: "000000000001"}
	central, err := iampolicy.Parse(files[render.CentralPolicyPath("aws")])
	if err != nil {
		t.Fatalf("%s: %v", render.CentralPolicyPath("aws"), err)
	}
	w.central = central
	for i, r := range f.Regions {
		in := &installed{name: r.Name, env: r.Sector.Environment, account: fmt.Sprintf("%012d", 100000000001+i),
			ou: fmt.Sprintf("ou-ab12-%08d", i), mcAccount: fmt.Sprintf("%012d", 200000000001+i), drAccount: fmt.Sprintf("%012d", 300000000001+i),
			docs: map[string]iam.Document{}}
		dir := render.RegionDir(in.env, r.Name) + "/iam/"
		values := map[string]string{"pipeline_account_id": in.account, "management_account_id": w.management, "organization_id": org,
			"root_id": root, "management_ou_id": in.ou, "oidc_provider": "oidc.eks." + r.Name + ".amazonaws.com/id/" + r.Name,
			"dr_account_id": in.drAccount, "platform_api_id": "a1b2c3"}
		for p, b := range files {
			if !strings.HasPrefix(p, dir) {
				continue
			}
			filled := iampolicy.Substitute(b, values)
			if left := iampolicy.Placeholders(filled); len(left) > 0 {
				t.Fatalf("%s: placeholders left: %v", p, left)
			}
			d, err := iampolicy.Parse(filled)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			in.docs[strings.TrimPrefix(p, dir)] = d
		}
		for _, cl := range f.Clusters {
			if cl.Region == r && cl.Type == "management" && in.cluster == "" {
				in.cluster = cl.Name
				in.mcBucket = cl.Effective.Lookup("state_bucket").Str
				in.oidcBucket = cl.Effective.Lookup("hypershift", "oidc_bucket").Str
			}
			if cl.Region == r && cl.Type == "regional" {
				in.centralBucket = cl.Effective.Lookup("state_bucket").Str
				in.etcdBucket = cl.Effective.Lookup("etcd_backup", "bucket").Str
				in.healthBucket = cl.Effective.Lookup("argocd", "health_bucket").Str
			}
		}
		if in.cluster == "" {
			t.Fatalf("%s has no management cluster", r.Name)
		}
		w.regions = append(w.regions, in)
	}
	if len(w.regions) < 6 {
		t.Fatalf("only %d regions", len(w.regions))
	}
	return w
}

func (in *installed) doc(t *testing.T, name string) *iam.Document {
	t.Helper()
	d, ok := in.docs[name]
	if !ok {
		t.Fatalf("%s has no %s", in.name, name)
	}
	return &d
}

// judge decides a as both judges do: iamjudge, and the IAM simulator where
// it is installed (simulator.Require says when it must be). They must
// agree on allow or deny; the decision returned is iamjudge's.
func judge(t *testing.T, what string, a iamjudge.Authorization) iamjudge.Verdict {
	t.Helper()
	j, err := simulator.Shared()
	if err != nil {
		if simulator.Required() {
			t.Fatalf("the second IAM judge: %v", err)
		}
		return iamjudge.Authorize(a)
	}
	v, err := j.Compare(a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	judged.Add(1)
	if !v.Agree() {
		t.Errorf("the judges disagree on %q (%s on %s): %s", what, a.Action, a.Resource, v)
	}
	return v.Ours
}

// judged counts the decisions both judges made in this package's tests.
var judged atomic.Int64

func TestMain(m *testing.M) {
	code := m.Run()
	if n := judged.Load(); n > 0 {
		fmt.Printf("both IAM judges decided %d requests alike\n", n)
	}
	os.Exit(code)
}

func session(account, role, name string) iamjudge.Caller {
	return iamjudge.Caller{ARN: "arn:aws:sts::" + account + ":assumed-role/" + role + "/" + name, RoleARN: iam.RoleARN("aws", account, role), Account: account}
}

// probe is one request of region a's identity against region b's (or its
// own) resource, with who owns the resource and what its policy is.
type probe struct {
	what string
	a    iamjudge.Authorization
}

// pipelineProbes are what a compromised regional pipeline of a tries
// against in (its own region when in == a).
func pipelineProbes(t *testing.T, w *world, a, in *installed) []probe {
	caller := session(a.account, iam.PipelineRoleName(a.name), "tekton")
	identity := []iam.Document{*a.doc(t, "regional-pipeline-policy.json")}
	req := func(action, resource string, ctx map[string][]string) iamjudge.Request {
		c := map[string][]string{"aws:RequestedRegion": {a.name}, "aws:PrincipalArn": {caller.RoleARN}}
		for k, v := range ctx {
			c[k] = v
		}
		return iamjudge.Request{Caller: caller, Action: action, Resource: resource, Context: c}
	}
	tags := map[string][]string{"sts:ExternalId": {iam.ExternalID(a.name)}, "aws:RequestTag/" + iam.RequestIDTag: {"r1"}, "aws:TagKeys": {iam.RequestIDTag}}
	deployTags := map[string][]string{"sts:ExternalId": {iam.ExternalID(a.name)}, "aws:ResourceTag/" + iam.RegionTag: {in.name}}
	object := func(bucket, key string) string { return "arn:aws:s3:::" + bucket + "/" + key }
	return []probe{
		{"assume the minting role", iamjudge.Authorization{Request: req("sts:AssumeRole", iam.RoleARN("aws", w.management, iam.MintingRoleName(in.name)), tags),
			Identity: identity, ResourceAccount: w.management, ResourcePolicy: in.doc(t, "minting-role-trust.json"), TrustRequired: true}},
		{"tag the minting role's session", iamjudge.Authorization{Request: req("sts:TagSession", iam.RoleARN("aws", w.management, iam.MintingRoleName(in.name)), tags),
			Identity: identity, ResourceAccount: w.management, ResourcePolicy: in.doc(t, "minting-role-trust.json"), TrustRequired: true}},
		{"assume a management cluster's deploy role", iamjudge.Authorization{Request: req("sts:AssumeRole", iam.RoleARN("aws", in.mcAccount, iam.DeployRoleName), deployTags),
			Identity: identity, ResourceAccount: in.mcAccount, ResourcePolicy: in.doc(t, "management-cluster-deploy-role-trust.json"), TrustRequired: true}},
		{"write management cluster state", iamjudge.Authorization{Request: req("s3:PutObject", object(in.mcBucket, "management-cluster/x.tfstate"), nil),
			Identity: identity, ResourceAccount: in.account, ResourcePolicy: in.doc(t, "management-cluster-state-bucket-policy.json")}},
		{"read the handoff parameter", iamjudge.Authorization{Request: req("ssm:GetParameter", "arn:aws:ssm:"+in.name+":"+in.account+":parameter"+iam.ParameterName(in.name), nil),
			Identity: identity, ResourceAccount: in.account}},
		{"register with the platform API", iamjudge.Authorization{Request: req("execute-api:Invoke", "arn:aws:execute-api:"+in.name+":"+in.account+":a1b2c3/$default/POST/api/v0/management_clusters", nil),
			Identity: identity, ResourceAccount: in.account}},
		{"make a Maestro agent's IoT policy", iamjudge.Authorization{Request: req("iot:CreatePolicy", "arn:aws:iot:"+in.name+":"+in.account+":policy/"+in.name+"-maestro-agent-mc01", nil),
			Identity: identity, ResourceAccount: in.account}},
		{"attach it to the agent's certificate", iamjudge.Authorization{Request: req("iot:AttachPolicy", "arn:aws:iot:"+in.name+":"+in.account+":cert/0a1b2c", nil),
			Identity: identity, ResourceAccount: in.account}},
	}
}

// TestRegionIsolation proves, for every ordered pair of regions of the
// example fleet, that each request the regional pipeline of A needs is
// allowed against A's own resources and denied against B's, with the
// documents as rendered and AWS's evaluation (identity, trust, bucket
// policies, cross-account rules). The IAM gate's end-to-end tests
// (internal/e2e) repeat the essential ones against the emulator.
func TestRegionIsolation(t *testing.T) {
	w := install(t)
	pairs := 0
	for _, a := range w.regions {
		for _, p := range pipelineProbes(t, w, a, a) {
			if v := judge(t, p.what, p.a); v.Decision != iamjudge.Allow {
				t.Errorf("%s's pipeline may not %s in its own region: %s", a.name, p.what, v.Reason)
			}
		}
		for _, b := range w.regions {
			if a == b {
				continue
			}
			pairs++
			for _, p := range pipelineProbes(t, w, a, b) {
				if v := judge(t, p.what, p.a); v.Decision == iamjudge.Allow {
					t.Errorf("%s's pipeline may %s of %s (%s)", a.name, p.what, b.name, v.Reason)
				}
			}
		}
		// Its own resources, requested from another region, are refused.
		for _, p := range pipelineProbes(t, w, a, a) {
			p.a.Context["aws:RequestedRegion"] = []string{"us-west-1"}
			if v := judge(t, p.what, p.a); v.Decision == iamjudge.Allow {
				t.Errorf("%s's pipeline may %s from us-west-1", a.name, p.what)
			}
		}
	}
	t.Logf("%d ordered pairs of regions checked", pairs)

	// Its region's broker: the server's policy, which admits to every
	// consumer's topics, is not one it may touch, and its thing (to which
	// the server's policy binds the server's certificate) takes no
	// certificate of the pipeline's.
	a := w.regions[0]
	caller := session(a.account, iam.PipelineRoleName(a.name), "tekton")
	ctx := func() map[string][]string { return map[string][]string{"aws:RequestedRegion": {a.name}} }
	server := "arn:aws:iot:" + a.name + ":" + a.account + ":policy/" + a.name + "-maestro"
	pipeline := []iam.Document{*a.doc(t, "regional-pipeline-policy.json")}
	for _, action := range []string{"iot:CreatePolicyVersion", "iot:DeletePolicy", "iot:SetDefaultPolicyVersion"} {
		v := judge(t, action+" of the server's policy", iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: action, Resource: server, Context: ctx()},
			Identity: pipeline, ResourceAccount: a.account})
		if v.Decision == iamjudge.Allow {
			t.Errorf("%s's pipeline may %s the Maestro server's policy", a.name, action)
		}
	}
	// iot:AttachThingPrincipal authorizes on no resource type.
	if v := judge(t, "attach a certificate to the server's thing", iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: "iot:AttachThingPrincipal", Resource: "*", Context: ctx()},
		Identity: pipeline, ResourceAccount: a.account}); v.Decision == iamjudge.Allow {
		t.Errorf("%s's pipeline may attach its certificate to the Maestro server's thing", a.name)
	}
	// Nothing of the central pipeline's state of its region: the regional
	// cluster's holds the Maestro server's private key.
	for _, key := range []string{"regional-cluster/" + a.name + "/regional.tfstate", "central-bootstrap/" + a.name + ".tfstate"} {
		if v := judge(t, "read "+key, iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: "s3:GetObject", Resource: "arn:aws:s3:::" + a.centralBucket + "/" + key,
			Context: map[string][]string{"aws:RequestedRegion": {a.name}, "aws:PrincipalArn": {caller.RoleARN}}},
			Identity: pipeline, ResourceAccount: w.management, ResourcePolicy: a.doc(t, "central-state-bucket-policy.json")}); v.Decision == iamjudge.Allow {
			t.Errorf("%s's pipeline may read %s of the central state", a.name, key)
		}
	}
	if v := judge(t, "read the server's MQTT secret", iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: "secretsmanager:GetSecretValue",
		Resource: "arn:aws:secretsmanager:" + a.name + ":" + a.account + ":secret:" + a.name + "-maestro-server-mqtt-AbCdEf", Context: ctx()},
		Identity: pipeline, ResourceAccount: a.account}); v.Decision == iamjudge.Allow {
		t.Errorf("%s's pipeline may read the Maestro server's credentials", a.name)
	}
}

// TestMintingRoleIsolation shows what a region's minting role may do in
// the management account: accounts of its own region only, tagged on
// their creation, moved from the root into its OU once, and no account
// reached at all.
func TestMintingRoleIsolation(t *testing.T) {
	w := install(t)
	a, b := w.regions[0], w.regions[1]
	caller := session(w.management, iam.MintingRoleName(a.name), "r1")
	identity := []iam.Document{*a.doc(t, "minting-role-policy.json")}
	orgARN := func(kind, id string) string {
		return "arn:aws:organizations::" + w.management + ":" + kind + "/" + org + "/" + id
	}
	tags := func(region, env string, kv ...string) map[string]string {
		m := map[string]string{iam.RegionTag: region, iam.EnvironmentTag: env}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	req := func(action, resource string, have, want map[string]string) iamjudge.Authorization {
		ctx := map[string][]string{"aws:PrincipalTag/" + iam.RequestIDTag: {"r1"}, "aws:RequestedRegion": {"us-east-1"}}
		for k, v := range have {
			ctx["aws:ResourceTag/"+k] = []string{v}
		}
		for k, v := range want {
			ctx["aws:RequestTag/"+k] = []string{v}
			ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], k)
		}
		slices.Sort(ctx["aws:TagKeys"])
		return iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: action, Resource: resource, Context: ctx}, Identity: identity}
	}
	own := tags(a.name, a.env, iam.ClusterTag, a.cluster, iam.RequestIDTag, "r1")
	accountA, accountB, loose := orgARN("account", a.mcAccount), orgARN("account", b.mcAccount), orgARN("account", "999999999999")
	access := func(ou string) iamjudge.Authorization {
		ctx := map[string][]string{"aws:ResourceOrgPaths": {org + "/" + root + "/ou-ab12-platform/" + ou + "/"}, "sts:RoleSessionName": {"r1"}}
		trust := &iam.Document{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow", Principal: &iam.Principal{AWS: iam.Strings{iam.AccountRoot("aws", w.management)}}, Action: iam.Strings{"sts:AssumeRole"}}}}
		return iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: "sts:AssumeRole", Resource: iam.RoleARN("aws", a.mcAccount, iam.AccessRole), Context: ctx},
			Identity: identity, ResourceAccount: a.mcAccount, ResourcePolicy: trust, TrustRequired: true}
	}
	for _, tt := range []struct {
		what string
		a    iamjudge.Authorization
		want iamjudge.Decision
	}{
		{"create an account of its region", req("organizations:CreateAccount", "*", nil, own), iamjudge.Allow},
		{"tag it on that request", req("organizations:TagResource", "*", nil, own), iamjudge.Allow},
		{"create an account of another region", req("organizations:CreateAccount", "*", nil, tags(b.name, a.env, iam.ClusterTag, "x", iam.RequestIDTag, "r1")), iamjudge.ImplicitDeny},
		{"create an account of another environment", req("organizations:CreateAccount", "*", nil, tags(a.name, "other", iam.ClusterTag, "x", iam.RequestIDTag, "r1")), iamjudge.ImplicitDeny},
		{"create an account with an extra tag", req("organizations:CreateAccount", "*", nil, tags(a.name, a.env, iam.ClusterTag, "x", "owner", "me")), iamjudge.ImplicitDeny},
		{"retag another region's account as its own", req("organizations:TagResource", accountB, tags(b.name, b.env, iam.ClusterTag, b.cluster), own), iamjudge.ExplicitDeny},
		{"tag an untagged account of the root as its own", req("organizations:TagResource", loose, nil, own), iamjudge.ExplicitDeny},
		{"tag the organisation's root", req("organizations:TagResource", orgARN("root", root), nil, own), iamjudge.ExplicitDeny},
		{"tag another region's OU", req("organizations:TagResource", orgARN("ou", b.ou), nil, own), iamjudge.ExplicitDeny},
		{"untag another region's account", req("organizations:UntagResource", accountB, tags(b.name, b.env), nil), iamjudge.ExplicitDeny},
		{"mark its own account placed", req("organizations:TagResource", accountA, own, tags(a.name, a.env, iam.SealedTag, "true")), iamjudge.Allow},
		{"mark its own account unplaced", req("organizations:TagResource", accountA, own, tags(a.name, a.env, iam.SealedTag, "false")), iamjudge.ImplicitDeny},
		{"move the account its run made", req("organizations:MoveAccount", accountA, own, nil), iamjudge.Allow},
		{"move an account of its region another run made", req("organizations:MoveAccount", accountA, tags(a.name, a.env, iam.RequestIDTag, "r0"), nil), iamjudge.ImplicitDeny},
		{"move an account of its region once placed", req("organizations:MoveAccount", accountA, tags(a.name, a.env, iam.RequestIDTag, "r1", iam.SealedTag, "true"), nil), iamjudge.ExplicitDeny},
		{"move an account of another region", req("organizations:MoveAccount", accountB, tags(b.name, b.env, iam.RequestIDTag, "r1"), nil), iamjudge.ImplicitDeny},
		{"move an untagged account of the root", req("organizations:MoveAccount", loose, nil, nil), iamjudge.ImplicitDeny},
		{"move from the root", req("organizations:MoveAccount", orgARN("root", root), nil, nil), iamjudge.Allow},
		{"move into its region's OU", req("organizations:MoveAccount", orgARN("ou", a.ou), nil, nil), iamjudge.Allow},
		{"move into another region's OU", req("organizations:MoveAccount", orgARN("ou", b.ou), nil, nil), iamjudge.ImplicitDeny},
		{"assume the AccessRole of a new account of its OU", access(a.ou), iamjudge.ImplicitDeny},
	} {
		if v := judge(t, tt.what, tt.a); v.Decision != tt.want {
			t.Errorf("%s's minting role: %s: %v (%s), want %v", a.name, tt.what, v.Decision, v.Reason, tt.want)
		}
	}
}

// TestDeployRoleIsolation shows what ManagementClusterDeployRole of a
// management cluster account may do: its region's services, its own
// account's OIDC buckets, IAM named for its region only, with the
// boundary, and nothing on the chain itself.
func TestDeployRoleIsolation(t *testing.T) {
	w := install(t)
	a, b := w.regions[0], w.regions[1]
	caller := session(a.mcAccount, iam.DeployRoleName, "r1")
	identity := []iam.Document{*a.doc(t, "management-cluster-deploy-role-policy.json")}
	req := func(action, resource, region string, kv ...string) iamjudge.Authorization {
		ctx := map[string][]string{"aws:RequestedRegion": {region}, "aws:PrincipalAccount": {a.mcAccount}}
		for i := 0; i+1 < len(kv); i += 2 {
			ctx[kv[i]] = []string{kv[i+1]}
		}
		return iamjudge.Authorization{Request: iamjudge.Request{Caller: caller, Action: action, Resource: resource, Context: ctx}, Identity: identity}
	}
	own := iam.RoleARN("aws", a.mcAccount, a.name+"-"+a.cluster+"-node")
	boundary := "arn:aws:iam::" + a.mcAccount + ":policy/" + iam.BoundaryName
	ecsARN := func(res string) string { return "arn:aws:ecs:" + a.name + ":" + a.mcAccount + ":" + res }
	boot := a.name + "-" + a.cluster + "-bootstrap"
	bootDef, bootCluster := ecsARN("task-definition/"+boot+":3"), ecsARN("cluster/"+boot)
	for _, tt := range []struct {
		what string
		a    iamjudge.Authorization
		want iamjudge.Decision
	}{
		{"run instances in its region", req("ec2:RunInstances", "*", a.name), iamjudge.Allow},
		{"run instances in another region", req("ec2:RunInstances", "*", b.name), iamjudge.ExplicitDeny},
		{"create its cluster's role with the boundary", req("iam:CreateRole", own, "us-east-1", "iam:PermissionsBoundary", boundary), iamjudge.Allow},
		{"create its cluster's role without the boundary", req("iam:CreateRole", own, "us-east-1"), iamjudge.ImplicitDeny},
		{"create another cluster's role", req("iam:CreateRole", iam.RoleARN("aws", a.mcAccount, b.name+"-"+a.cluster+"-node"), "us-east-1", "iam:PermissionsBoundary", boundary), iamjudge.ImplicitDeny},
		{"attach AdministratorAccess", req("iam:AttachRolePolicy", own, "us-east-1", "iam:PolicyARN", "arn:aws:iam::aws:policy/AdministratorAccess"), iamjudge.ImplicitDeny},
		{"attach the EKS cluster policy", req("iam:AttachRolePolicy", own, "us-east-1", "iam:PolicyARN", "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"), iamjudge.Allow},
		{"pass its role to EKS", req("iam:PassRole", own, "us-east-1", "iam:PassedToService", "eks.amazonaws.com"), iamjudge.Allow},
		{"pass its role to Lambda", req("iam:PassRole", own, "us-east-1", "iam:PassedToService", "lambda.amazonaws.com"), iamjudge.ImplicitDeny},
		{"widen its own policy", req("iam:PutRolePolicy", iam.RoleARN("aws", a.mcAccount, iam.DeployRoleName), "us-east-1"), iamjudge.ExplicitDeny},
		{"change the boundary", req("iam:CreatePolicyVersion", boundary, "us-east-1"), iamjudge.ExplicitDeny},
		{"create its cluster's OIDC bucket", req("s3:CreateBucket", "arn:aws:s3:::"+a.oidcBucket, a.name), iamjudge.Allow},
		{"write to its cluster's OIDC bucket", req("s3:PutObject", "arn:aws:s3:::"+a.oidcBucket+"/keys.json", a.name, "aws:ResourceAccount", a.mcAccount), iamjudge.Allow},
		{"write to a bucket of that name in another account", req("s3:PutObject", "arn:aws:s3:::"+a.oidcBucket+"/keys.json", a.name, "aws:ResourceAccount", "999999999999"), iamjudge.ImplicitDeny},
		{"use a bucket not named like its clusters'", req("s3:PutObject", "arn:aws:s3:::hypershift-oidc-x/"+a.cluster, a.name, "aws:ResourceAccount", a.mcAccount), iamjudge.ImplicitDeny},
		{"create its DNS zone (Route 53 is signed for us-east-1)", req("route53:CreateHostedZone", "*", "us-east-1"), iamjudge.Allow},
		{"create a DNS zone signed for its own region", req("route53:CreateHostedZone", "*", a.name), iamjudge.ExplicitDeny},
		{"delete a Route 53 health check", req("route53:DeleteHealthCheck", "*", "us-east-1"), iamjudge.ImplicitDeny},
		// The bootstrap task: its own task definition, in its own ECS
		// cluster, passing its own two roles to ECS tasks and nothing else.
		{"run its bootstrap task", req("ecs:RunTask", bootDef, a.name, "ecs:cluster", bootCluster), iamjudge.Allow},
		{"run its bootstrap task in another ECS cluster", req("ecs:RunTask", bootDef, a.name, "ecs:cluster", ecsARN("cluster/default")), iamjudge.ImplicitDeny},
		{"run another task definition", req("ecs:RunTask", ecsARN("task-definition/debug:1"), a.name, "ecs:cluster", bootCluster), iamjudge.ImplicitDeny},
		{"run another region's bootstrap task", req("ecs:RunTask", ecsARN("task-definition/"+b.name+"-mc99-bootstrap:1"), a.name, "ecs:cluster", ecsARN("cluster/"+b.name+"-mc99-bootstrap")), iamjudge.ImplicitDeny},
		{"watch its bootstrap task", req("ecs:DescribeTasks", ecsARN("task/"+boot+"/0123"), a.name, "ecs:cluster", bootCluster), iamjudge.Allow},
		{"pass the bootstrap role to ECS tasks", req("iam:PassRole", iam.RoleARN("aws", a.mcAccount, boot), "us-east-1", "iam:PassedToService", "ecs-tasks.amazonaws.com"), iamjudge.Allow},
		{"pass the bootstrap execution role to ECS tasks", req("iam:PassRole", iam.RoleARN("aws", a.mcAccount, boot+"-ecs"), "us-east-1", "iam:PassedToService", "ecs-tasks.amazonaws.com"), iamjudge.Allow},
		{"pass another role of its cluster to ECS tasks", req("iam:PassRole", own, "us-east-1", "iam:PassedToService", "ecs-tasks.amazonaws.com"), iamjudge.ImplicitDeny},
		{"pass the deploy role to ECS tasks", req("iam:PassRole", iam.RoleARN("aws", a.mcAccount, iam.DeployRoleName), "us-east-1", "iam:PassedToService", "ecs-tasks.amazonaws.com"), iamjudge.ExplicitDeny},
		{"pass the bootstrap role to Lambda", req("iam:PassRole", iam.RoleARN("aws", a.mcAccount, boot), "us-east-1", "iam:PassedToService", "lambda.amazonaws.com"), iamjudge.ImplicitDeny},
	} {
		if v := judge(t, tt.what, tt.a); v.Decision != tt.want {
			t.Errorf("%s/%s deploy role: %s: %v (%s), want %v", a.name, a.cluster, tt.what, v.Decision, v.Reason, tt.want)
		}
	}
}

// TestIsolationCatchesLeaks mutates each kind of document the way a careless
// edit would and shows the render-time rule refuses it.
func TestIsolationCatchesLeaks(t *testing.T) {
	r := iam.Region{Name: "us-east-1", Environment: "production", TektonNamespace: "pipelines", ManagementStateBucket: "mc-state-us-east-1",
		CentralStateBucket: "central-us-east-1", EtcdBackupBucket: "etcd-us-east-1", HealthBucket: "health-us-east-1", Clusters: []iam.ManagementCluster{{Name: "mc01", OIDCBucket: "oidc-us-east-1-mc01"}},
		OIDCBuckets: "oidc-us-east-1-*"}
	if p := iam.CheckIsolation(r, iam.RegionDocuments(r)); len(p) > 0 {
		t.Fatalf("the rendered documents break the rules: %v", p)
	}
	stmt := func(d *iam.Document, sid string) *iam.Statement {
		for i := range d.Statement {
			if d.Statement[i].Sid == sid {
				return &d.Statement[i]
			}
		}
		t.Fatalf("no statement %s", sid)
		return nil
	}
	for _, tt := range []struct {
		what   string
		mutate func(*iam.Documents)
	}{
		{"an unscoped role beside a scoped one", func(d *iam.Documents) {
			s := stmt(&d.Pipeline, "AssumeMintingRoleOfRegion")
			s.Resource = append(s.Resource, "arn:aws:iam::*:role/*")
		}},
		{"a scoped IoT action on every resource of the region", func(d *iam.Documents) {
			s := stmt(&d.Pipeline, "MaestroAgentCertificatesOfRegion")
			s.Action = append(s.Action, "iot:AttachPolicy")
		}},
		{"a resourceless action in every region", func(d *iam.Documents) {
			stmt(&d.Pipeline, "MaestroAgentCertificatesOfRegion").Condition = nil
		}},
		{"agent policies of any name", func(d *iam.Documents) {
			stmt(&d.Pipeline, "MaestroAgentPoliciesOfRegion").Resource = iam.Strings{"arn:aws:iot:us-east-1:${pipeline_account_id}:policy/*"}
		}},
		{"backups readable by the management clusters", func(d *iam.Documents) {
			s := stmt(&d.EtcdBackupBucketPolicy, "ManagementClustersOfRegionAddTheirOwn")
			s.Action = append(s.Action, "s3:GetObject")
		}},
		{"backups written under any prefix", func(d *iam.Documents) {
			stmt(&d.EtcdBackupBucketPolicy, "ManagementClustersOfRegionAddTheirOwn").Resource = iam.Strings{"arn:aws:s3:::etcd-us-east-1/*"}
		}},
		{"backups written by any account of the organisation", func(d *iam.Documents) {
			delete(stmt(&d.EtcdBackupBucketPolicy, "ManagementClustersOfRegionAddTheirOwn").Condition, "ForAnyValue:StringLike")
		}},
		{"backups deletable", func(d *iam.Documents) {
			d.EtcdBackupBucketPolicy.Statement = slices.DeleteFunc(d.EtcdBackupBucketPolicy.Statement, func(s iam.Statement) bool { return s.Sid == "OnlyTheCentralPipelineDeletes" })
		}},
		{"health reports readable by the clusters", func(d *iam.Documents) {
			s := stmt(&d.HealthBucketPolicy, "ManagementClustersOfRegionReportTheirOwn")
			s.Action = append(s.Action, "s3:GetObject")
		}},
		{"health reports written under another account's prefix", func(d *iam.Documents) {
			stmt(&d.HealthBucketPolicy, "RegionalClusterReportsItsOwn").Resource = iam.Strings{"arn:aws:s3:::health-us-east-1/*"}
		}},
		{"health reports written by any account of the organisation", func(d *iam.Documents) {
			delete(stmt(&d.HealthBucketPolicy, "ManagementClustersOfRegionReportTheirOwn").Condition, "ForAnyValue:StringLike")
		}},
		{"health reports written by another region's reporters", func(d *iam.Documents) {
			stmt(&d.HealthBucketPolicy, "RegionalClusterReportsItsOwn").Condition["ArnLike"]["aws:PrincipalArn"] = iam.Strings{"arn:aws:iam::*:role/*-health"}
		}},
		{"health reports written by any role of the regional account", func(d *iam.Documents) {
			delete(stmt(&d.HealthBucketPolicy, "RegionalClusterReportsItsOwn").Condition, "ArnLike")
		}},
		{"approvals writable by the pipeline", func(d *iam.Documents) {
			d.ManagementStateBucketPolicy.Statement = slices.DeleteFunc(d.ManagementStateBucketPolicy.Statement, func(s iam.Statement) bool { return s.Sid == "OnlyApproversApprove" })
		}},
		{"central approvals writable by the central pipeline", func(d *iam.Documents) {
			stmt(&d.CentralStateBucketPolicy, "OnlyApproversApprove").Condition["StringNotEquals"]["aws:PrincipalArn"] = iam.Strings{"arn:aws:iam::${management_account_id}:role/regionctl-central-pipeline"}
		}},
		{"an approver that may write states", func(d *iam.Documents) {
			stmt(&d.Approver, "ApprovePlans").Resource = iam.Strings{"arn:aws:s3:::mc-state-us-east-1/*"}
		}},
		{"the region deny dropped", func(d *iam.Documents) {
			d.Pipeline.Statement = slices.DeleteFunc(d.Pipeline.Statement, func(s iam.Statement) bool { return s.Sid == "DenyOutsideRegion" })
		}},
		{"the deploy role trust without ExternalId", func(d *iam.Documents) { d.DeployTrust.Statement[0].Condition = nil }},
		{"the minting trust of another principal", func(d *iam.Documents) {
			d.MintingTrust.Statement[0].Principal.AWS = iam.Strings{"arn:aws:iam::${pipeline_account_id}:root"}
		}},
		{"account creation without the region tag", func(d *iam.Documents) { stmt(&d.Minting, "CreateAccountsOfRegion").Condition = nil }},
		{"tagging any resource of the organisation (the cross-region retag)", func(d *iam.Documents) {
			d.Minting.Statement = slices.DeleteFunc(d.Minting.Statement, func(s iam.Statement) bool { return s.Sid == "DenyTaggingOutsideRegion" })
		}},
		{"tagging with a key of its own choosing", func(d *iam.Documents) {
			stmt(&d.Minting, "TagAccountsOfRegion").Condition["ForAllValues:StringEquals"]["aws:TagKeys"] = iam.Strings{"owner"}
		}},
		{"moving any account of the region (a placed one out of its OU)", func(d *iam.Documents) {
			delete(stmt(&d.Minting, "MoveAccountOfThisRun").Condition, "Null")
		}},
		{"moving an account of the region another run made", func(d *iam.Documents) {
			delete(stmt(&d.Minting, "MoveAccountOfThisRun").Condition["StringEquals"], "aws:ResourceTag/"+iam.RequestIDTag)
		}},
		{"the minting role reaching a new account's AccessRole", func(d *iam.Documents) {
			d.Minting.Statement = append(d.Minting.Statement, iam.Statement{Sid: "Bootstrap", Effect: "Allow", Action: iam.Strings{"sts:AssumeRole"},
				Resource: iam.Strings{"arn:aws:iam::*:role/" + iam.AccessRole}})
		}},
		{"deploy role IAM on every role", func(d *iam.Documents) {
			stmt(&d.Deploy, "ManageClusterRoles").Resource = iam.Strings{"arn:aws:iam::*:role/*"}
		}},
		{"deploy role roles without the boundary", func(d *iam.Documents) {
			stmt(&d.Deploy, "CreateClusterRolesWithBoundary").Condition = nil
		}},
		{"deploy role DNS outside its global region", func(d *iam.Documents) {
			d.Deploy.Statement = slices.DeleteFunc(d.Deploy.Statement, func(s iam.Statement) bool { return s.Sid == "DenyDNSOutsideItsGlobalRegion" })
		}},
		{"deploy role DNS in any region", func(d *iam.Documents) {
			stmt(&d.Deploy, "ClusterDNSZones").Condition = nil
		}},
		{"guardrails that spare the root user", func(d *iam.Documents) {
			d.GuardrailSCP.Statement = slices.DeleteFunc(d.GuardrailSCP.Statement, func(s iam.Statement) bool { return s.Sid == "DenyTheRootUser" })
		}},
		{"guardrails that let an account leave", func(d *iam.Documents) {
			d.GuardrailSCP.Statement = slices.DeleteFunc(d.GuardrailSCP.Statement, func(s iam.Statement) bool { return s.Sid == "DenyLeavingTheOrganization" })
		}},
		{"guardrails in every region", func(d *iam.Documents) {
			stmt(&d.GuardrailSCP, "DenyOtherRegions").Condition = nil
		}},
		{"a data perimeter without keys", func(d *iam.Documents) {
			s := stmt(&d.DataPerimeterRCP, "OnlyTheOrganization")
			s.Action = slices.DeleteFunc(s.Action, func(a string) bool { return a == "kms:*" })
		}},
		{"a boundary that allows IAM", func(d *iam.Documents) {
			d.Boundary.Statement = slices.DeleteFunc(d.Boundary.Statement, func(s iam.Statement) bool { return s.Sid == "DenyIdentityChanges" })
		}},
	} {
		d := iam.RegionDocuments(r)
		tt.mutate(&d)
		if p := iam.CheckIsolation(r, d); len(p) == 0 {
			t.Errorf("CheckIsolation accepted %s", tt.what)
		}
	}
}

// TestPartitionComesFromTheRegion: every ARN of a GovCloud or China
// region's documents is of that region's partition.
func TestPartitionComesFromTheRegion(t *testing.T) {
	for region, partition := range map[string]string{"us-gov-west-1": "aws-us-gov", "cn-north-1": "aws-cn", "eu-west-1": "aws",
		"us-iso-east-1": "aws-iso", "us-isob-east-1": "aws-iso-b", "eu-isoe-west-1": "aws-iso-e", "us-isof-south-1": "aws-iso-f", "eusc-de-east-1": "aws-eusc"} {
		r := iam.Region{Name: region, Environment: "production", TektonNamespace: "p", ManagementStateBucket: "mc-" + region,
			CentralStateBucket: "central-" + region, Clusters: []iam.ManagementCluster{{Name: "mc01", OIDCBucket: "oidc-" + region}}, OIDCBuckets: "oidc-*"}
		d := iam.RegionDocuments(r)
		docs := []iam.Document{d.PipelineTrust, d.Pipeline, d.MintingTrust, d.Minting, d.DeployTrust, d.Boundary, d.Deploy, d.GuardrailSCP, d.DataPerimeterRCP,
			d.ManagementStateBucketPolicy, d.CentralStateBucketPolicy, iam.CentralPipelinePolicy(partition, []iam.Region{r})}
		n := 0
		for _, doc := range docs {
			b, _ := json.Marshal(doc)
			for _, arn := range regexp.MustCompile(`arn:[a-z-]*:`).FindAllString(string(b), -1) {
				n++
				if arn != "arn:"+partition+":" {
					t.Errorf("%s: %s in %s", region, arn, doc.ID)
				}
			}
		}
		if n < 20 {
			t.Errorf("%s: only %d ARNs", region, n)
		}
	}
}

// TestEtcdBackupIsolation: the snapshot bucket of a region's DR account, as
// rendered and installed, takes snapshots from the etcd-backup role of each
// of the region's management cluster accounts under that account's prefix,
// and from nothing else; and no one but the DR account's AccessRole
// deletes one.
func TestEtcdBackupIsolation(t *testing.T) {
	w := install(t)
	a, b := w.regions[0], w.regions[1]
	policy := a.doc(t, "etcd-backup-bucket-policy.json")
	object := func(key string) string { return "arn:aws:s3:::" + a.etcdBucket + "/" + key }
	// The etcd-backup role's own policy, as modules/hypershift writes it.
	role := func(in *installed) (iamjudge.Caller, []iam.Document) {
		name := in.name + "-" + in.cluster + "-" + iam.EtcdBackupRoleSuffix
		return session(in.mcAccount, name, "etcd-backup"), []iam.Document{{Version: "2012-10-17", Statement: []iam.Statement{{
			Effect: "Allow", Action: iam.Strings{"s3:PutObject"}, Resource: iam.Strings{"arn:aws:s3:::" + a.etcdBucket + "/" + in.mcAccount + "/*"},
		}}}}
	}
	// Every caller here may do anything its own account lets it: the
	// bucket's policy alone must keep it out.
	admin := []iam.Document{{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow", Action: iam.Strings{"*"}, Resource: iam.Strings{"*"}}}}}
	orgPath := func(in *installed) string { return org + "/" + root + "/ou-ab12-platform/" + in.ou + "/" }
	req := func(c iamjudge.Caller, identity []iam.Document, path, action, key string) iamjudge.Authorization {
		ctx := map[string][]string{"aws:RequestedRegion": {a.name}, "aws:PrincipalArn": {c.RoleARN}, "aws:PrincipalAccount": {c.Account}}
		if path != "" {
			ctx["aws:PrincipalOrgPaths"] = []string{path}
			ctx["aws:PrincipalOrgID"] = []string{org}
		}
		return iamjudge.Authorization{Request: iamjudge.Request{Caller: c, Action: action, Resource: object(key), Context: ctx},
			Identity: identity, ResourceAccount: a.drAccount, ResourcePolicy: policy}
	}
	own, ownIdentity := role(a)
	other, otherIdentity := role(b)
	operator := session(a.mcAccount, a.name+"-"+a.cluster+"-hypershift", "operator")
	pipeline := session(a.account, iam.PipelineRoleName(a.name), "tekton")
	access := session(a.drAccount, iam.AccessRole, "central")
	for _, tt := range []struct {
		what string
		a    iamjudge.Authorization
		want iamjudge.Decision
	}{
		{"its etcd-backup role adds a snapshot under its account", req(own, ownIdentity, orgPath(a), "s3:PutObject", a.mcAccount+"/etcd.db"), iamjudge.Allow},
		{"its etcd-backup role writes under another account", req(own, admin, orgPath(a), "s3:PutObject", b.mcAccount+"/etcd.db"), iamjudge.ImplicitDeny},
		{"its etcd-backup role reads a snapshot", req(own, admin, orgPath(a), "s3:GetObject", a.mcAccount+"/etcd.db"), iamjudge.ImplicitDeny},
		{"its etcd-backup role deletes a snapshot", req(own, admin, orgPath(a), "s3:DeleteObject", a.mcAccount+"/etcd.db"), iamjudge.ExplicitDeny},
		{"another role of its account adds a snapshot", req(operator, admin, orgPath(a), "s3:PutObject", a.mcAccount+"/etcd.db"), iamjudge.ImplicitDeny},
		{"another region's etcd-backup role adds one", req(other, otherIdentity, orgPath(b), "s3:PutObject", b.mcAccount+"/etcd.db"), iamjudge.ImplicitDeny},
		{"an account outside the organisation adds one", req(own, ownIdentity, "", "s3:PutObject", a.mcAccount+"/etcd.db"), iamjudge.ImplicitDeny},
		{"the regional pipeline adds one", req(pipeline, admin, org+"/"+root+"/ou-ab12-platform/ou-ab12-regional/", "s3:PutObject", a.account+"/etcd.db"), iamjudge.ImplicitDeny},
		{"the regional pipeline deletes one", req(pipeline, admin, "", "s3:DeleteObject", a.mcAccount+"/etcd.db"), iamjudge.ExplicitDeny},
		{"the DR account's AccessRole deletes one", req(access, admin, "", "s3:DeleteObject", a.mcAccount+"/etcd.db"), iamjudge.Allow},
	} {
		if v := judge(t, tt.what, tt.a); v.Decision != tt.want {
			t.Errorf("%s: %s: %v (%s), want %v", a.name, tt.what, v.Decision, v.Reason, tt.want)
		}
	}
}

// TestHealthBucketIsolation: the health bucket of a region, in the
// management account, as rendered and installed, takes each cluster's
// report from its reporter role (a management cluster account of the
// region's OU, or the regional account) under that account's prefix, and
// nothing else from any other account: not another key, not a read, not
// another role, not another region's reporter.
func TestHealthBucketIsolation(t *testing.T) {
	w := install(t)
	a, b := w.regions[0], w.regions[1]
	policy := a.doc(t, "health-bucket-policy.json")
	object := func(key string) string { return "arn:aws:s3:::" + a.healthBucket + "/" + key }
	// Every caller here may do anything its own account lets it: the
	// bucket's policy alone must keep it out of the management account.
	admin := []iam.Document{{Version: "2012-10-17", Statement: []iam.Statement{{Effect: "Allow", Action: iam.Strings{"*"}, Resource: iam.Strings{"*"}}}}}
	orgPath := func(in *installed) string { return org + "/" + root + "/ou-ab12-platform/" + in.ou + "/" }
	regionalPath := org + "/" + root + "/ou-ab12-platform/ou-ab12-regional/"
	req := func(c iamjudge.Caller, path, action, key string) iamjudge.Authorization {
		ctx := map[string][]string{"aws:RequestedRegion": {a.name}, "aws:PrincipalArn": {c.RoleARN}, "aws:PrincipalAccount": {c.Account},
			"aws:SecureTransport": {"true"}}
		if path != "" {
			ctx["aws:PrincipalOrgPaths"] = []string{path}
			ctx["aws:PrincipalOrgID"] = []string{org}
		}
		return iamjudge.Authorization{Request: iamjudge.Request{Caller: c, Action: action, Resource: object(key), Context: ctx},
			Identity: admin, ResourceAccount: w.management, ResourcePolicy: policy}
	}
	reporter := func(account, cluster string, in *installed) iamjudge.Caller {
		return session(account, in.name+"-"+cluster+"-"+iam.HealthRoleSuffix, "argocd-health-reporter")
	}
	mc, regional := reporter(a.mcAccount, a.cluster, a), reporter(a.account, "regional", a)
	otherRegion := reporter(b.mcAccount, b.cluster, b)
	operator := session(a.mcAccount, a.name+"-"+a.cluster+"-hypershift", "operator")
	pipeline := session(a.account, iam.PipelineRoleName(a.name), "tekton")
	for _, tt := range []struct {
		what string
		a    iamjudge.Authorization
		want iamjudge.Decision
	}{
		{"a management cluster's reporter puts its report", req(mc, orgPath(a), "s3:PutObject", a.mcAccount+"/health.json"), iamjudge.Allow},
		{"the regional cluster's reporter puts its report", req(regional, regionalPath, "s3:PutObject", a.account+"/health.json"), iamjudge.Allow},
		{"a reporter puts another account's report", req(mc, orgPath(a), "s3:PutObject", a.account+"/health.json"), iamjudge.ImplicitDeny},
		{"a reporter puts another key of its prefix", req(mc, orgPath(a), "s3:PutObject", a.mcAccount+"/other.json"), iamjudge.ImplicitDeny},
		{"a reporter reads its report", req(mc, orgPath(a), "s3:GetObject", a.mcAccount+"/health.json"), iamjudge.ImplicitDeny},
		{"another role of its account puts its report", req(operator, orgPath(a), "s3:PutObject", a.mcAccount+"/health.json"), iamjudge.ImplicitDeny},
		{"the regional pipeline puts the regional account's report", req(pipeline, regionalPath, "s3:PutObject", a.account+"/health.json"), iamjudge.ImplicitDeny},
		{"another region's reporter puts its report here", req(otherRegion, orgPath(b), "s3:PutObject", b.mcAccount+"/health.json"), iamjudge.ImplicitDeny},
		{"a reporter outside the organisation", req(mc, "", "s3:PutObject", a.mcAccount+"/health.json"), iamjudge.ImplicitDeny},
	} {
		if v := judge(t, tt.what, tt.a); v.Decision != tt.want {
			t.Errorf("%s: %s: %v (%s), want %v", a.name, tt.what, v.Decision, v.Reason, tt.want)
		}
	}
}

// kindOf is what kind of policy each rendered file under iam/ is, for the
// second judge's syntax rules.
func kindOf(name string) simulator.Kind {
	switch {
	case strings.HasSuffix(name, "-trust.json"):
		return simulator.Trust
	case strings.HasSuffix(name, "bucket-policy.json"):
		return simulator.Resource
	case strings.HasSuffix(name, "boundary.json"):
		return simulator.Boundary
	case strings.HasSuffix(name, "session-policy.json"):
		return simulator.Session
	case strings.HasPrefix(name, "scp-"):
		return simulator.SCP
	case strings.HasPrefix(name, "rcp-"):
		return simulator.RCP
	}
	return simulator.Identity
}

// TestRenderedDocumentsAreValidForAWS holds every IAM document render
// writes, with its ids filled in as the pipelines fill them, to the
// second judge: its syntax for the document's kind, and every action,
// resource and condition key against AWS's service authorization data.
func TestRenderedDocumentsAreValidForAWS(t *testing.T) {
	j := simulator.Require(t)
	w := install(t)
	checked := 0
	for _, in := range w.regions {
		for _, name := range slices.Sorted(maps.Keys(in.docs)) {
			b, err := json.Marshal(in.docs[name])
			if err != nil {
				t.Fatal(err)
			}
			problems, err := j.Validate(kindOf(name), b)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("%s/iam/%s: %s", in.name, name, p)
			}
			checked++
		}
	}
	central, err := json.Marshal(w.central)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := j.Validate(simulator.Identity, central)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("central pipeline policy: %s", p)
	}
	t.Logf("%d documents held to the service data", checked+1)
}
