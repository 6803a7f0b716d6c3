package iam_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/schema"
)

// regionDocs are a region's rendered documents with account ids filled in
// the way terraform/central-bootstrap fills them.
type regionDocs struct {
	name, account string
	policy, trust iam.Document
}

func renderedRegions(t *testing.T) []regionDocs {
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(os.DirFS("../../.."), "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out, diags := render.Render(f, render.Options{Version: "test"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	files := out.ByPath()
	var regions []regionDocs
	for i, r := range f.Regions {
		dir := render.RegionDir(r.Sector.Environment, r.Name) + "/iam/"
		account := fmt.Sprintf("%012d", 100000000001+i)
		policy, err := iam.Parse(files[dir+"regional-pipeline-policy.json"])
		if err != nil {
			t.Fatal(err)
		}
		trustJSON := strings.ReplaceAll(string(files[dir+"management-cluster-deploy-role-trust.json"]), iam.AccountIDPlaceholder, account)
		trust, err := iam.Parse([]byte(trustJSON))
		if err != nil {
			t.Fatal(err)
		}
		regions = append(regions, regionDocs{r.Name, account, policy, trust})
	}
	if len(regions) < 6 {
		t.Fatalf("only %d regions", len(regions))
	}
	return regions
}

// probes are requests the pipeline of region `of` might make against the
// resources of region `in`: one per action its policy allows (wildcards
// stand for any action of the service), each aimed at in's resources.
func probes(of regionDocs, in regionDocs) []iam.Request {
	var out []iam.Request
	ctx := func(kv ...string) map[string][]string {
		m := map[string][]string{"aws:RequestedRegion": {in.name}}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = []string{kv[i+1]}
		}
		return m
	}
	for _, s := range of.policy.Statement {
		if s.Effect != "Allow" {
			continue
		}
		for _, a := range s.Action {
			action := strings.Replace(a, "*", "DeleteEverything", 1)
			svc, _, _ := strings.Cut(action, ":")
			switch {
			case svc == "iam":
				// IAM is served from us-east-1 whatever the caller's region.
				for _, res := range []string{
					"arn:aws:iam::" + in.account + ":role/" + in.name + "-mc01-cluster",
					"arn:aws:iam::" + in.account + ":oidc-provider/oidc.eks." + in.name + ".amazonaws.com/id/EXAMPLE",
				} {
					out = append(out, iam.Request{Action: action, Resource: res, Context: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}})
				}
			case action == "organizations:CreateAccount":
				out = append(out, iam.Request{Action: action, Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"us-east-1"}, "aws:RequestTag/" + iam.RegionTag: {in.name}}})
			case slices.Contains(iam.GlobalReadOnly, action):
				// Account-wide reads, no region's resource: checked apart.
			case svc == "sts" && strings.HasPrefix(action, "sts:AssumeRole") || action == "sts:TagSession":
				out = append(out, iam.Request{Action: action, Resource: "arn:aws:iam::" + in.account + ":role/" + iam.DeployRoleName, Context: ctx("aws:ResourceTag/"+iam.RegionTag, in.name)})
			case svc == "s3":
				out = append(out, iam.Request{Action: action, Resource: "arn:aws:s3:::" + iam.StateBucket(in.name) + "/state.tfstate", Context: ctx()})
			default:
				out = append(out, iam.Request{Action: action, Resource: fmt.Sprintf("arn:aws:%s:%s:%s:thing/x", svc, in.name, in.account), Context: ctx()})
			}
		}
	}
	return out
}

// TestRegionIsolation proves, for every ordered pair of regions of the
// example fleet, that region A's pipeline is denied every action against
// region B and cannot assume B's deploy role with or without B's ExternalId,
// while the same requests against its own region are allowed.
func TestRegionIsolation(t *testing.T) {
	regions := renderedRegions(t)
	pairs := 0
	for _, a := range regions {
		own := probes(a, a)
		if len(own) < 10 {
			t.Fatalf("%s: only %d probes", a.name, len(own))
		}
		for _, req := range own {
			if got := iam.Evaluate(req, a.policy); got != iam.Allow {
				t.Errorf("%s's pipeline is not allowed %s on %s in its own region: %v", a.name, req.Action, req.Resource, got)
			}
		}
		for _, b := range regions {
			if a.name == b.name {
				continue
			}
			pairs++
			for _, req := range probes(a, b) {
				if got := iam.Evaluate(req, a.policy); got == iam.Allow {
					t.Errorf("%s's pipeline is allowed %s on %s of %s", a.name, req.Action, req.Resource, b.name)
				}
			}
			// Central state is out of reach from every region.
			for _, res := range []string{"arn:aws:s3:::regionctl-central-state/terraform.tfstate", "arn:aws:iam::000000000001:role/regionctl-central-pipeline"} {
				for _, action := range []string{"s3:GetObject", "s3:PutObject", "sts:AssumeRole"} {
					req := iam.Request{Action: action, Resource: res, Context: map[string][]string{"aws:RequestedRegion": {a.name}, "aws:ResourceTag/" + iam.RegionTag: {a.name}}}
					if got := iam.Evaluate(req, a.policy); got == iam.Allow {
						t.Errorf("%s's pipeline may %s %s", a.name, action, res)
					}
				}
			}
			// B's deploy role trusts neither A's pipeline role, whatever
			// ExternalId it presents, nor anyone without B's ExternalId.
			aRole := "arn:aws:iam::" + a.account + ":role/" + iam.PipelineRoleName(a.name)
			bRole := "arn:aws:iam::" + b.account + ":role/" + iam.PipelineRoleName(b.name)
			for _, ext := range [][]string{nil, {iam.ExternalID(b.name)}, {iam.ExternalID(a.name)}} {
				req := iam.Request{Principal: aRole, Action: "sts:AssumeRole", Context: map[string][]string{}}
				if ext != nil {
					req.Context["sts:ExternalId"] = ext
				}
				if got := iam.Evaluate(req, b.trust); got == iam.Allow {
					t.Errorf("%s's deploy role trusts %s's pipeline with ExternalId %v", b.name, a.name, ext)
				}
			}
			if got := iam.Evaluate(iam.Request{Principal: bRole, Action: "sts:AssumeRole", Context: map[string][]string{"sts:ExternalId": {iam.ExternalID(a.name)}}}, b.trust); got == iam.Allow {
				t.Errorf("%s's deploy role accepts another region's ExternalId", b.name)
			}
		}
		bRole := "arn:aws:iam::" + a.account + ":role/" + iam.PipelineRoleName(a.name)
		if got := iam.Evaluate(iam.Request{Principal: bRole, Action: "sts:AssumeRole", Context: map[string][]string{"sts:ExternalId": {iam.ExternalID(a.name)}}}, a.trust); got != iam.Allow {
			t.Errorf("%s's deploy role does not trust its own pipeline: %v", a.name, got)
		}
		if got := iam.Evaluate(iam.Request{Principal: bRole, Action: "sts:AssumeRole"}, a.trust); got == iam.Allow {
			t.Errorf("%s's deploy role trusts its pipeline without ExternalId", a.name)
		}
		// The only actions allowed whatever the region are the listed
		// account-wide reads.
		for _, action := range iam.GlobalReadOnly {
			if got := iam.Evaluate(iam.Request{Action: action, Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}}, a.policy); got != iam.Allow {
				t.Errorf("%s: %s: %v", a.name, action, got)
			}
		}
	}
	t.Logf("%d ordered pairs of regions checked", pairs)
}

// TestIsolationCatchesLeaks shows the checks fail on a leaky policy: drop the
// region condition of the provisioning statement and both the render-time
// rule and the evaluation object.
func TestIsolationCatchesLeaks(t *testing.T) {
	leaky := iam.PipelinePolicy("us-east-1")
	leaky.Statement[0].Condition = nil
	leaky.Statement = slices.DeleteFunc(leaky.Statement, func(s iam.Statement) bool { return s.Sid == "DenyOutsideRegion" })
	if len(iam.CheckIsolation("us-east-1", leaky, iam.DeployRoleTrust("us-east-1"))) == 0 {
		t.Error("CheckIsolation accepted a policy without region condition")
	}
	req := iam.Request{Action: "ec2:RunInstances", Resource: "*", Context: map[string][]string{"aws:RequestedRegion": {"eu-west-1"}}}
	if iam.Evaluate(req, leaky) != iam.Allow {
		t.Error("the leak is not visible to Evaluate")
	}
	trust := iam.DeployRoleTrust("us-east-1")
	trust.Statement[0].Condition = nil
	if len(iam.CheckIsolation("us-east-1", iam.PipelinePolicy("us-east-1"), trust)) == 0 {
		t.Error("CheckIsolation accepted a trust without ExternalId")
	}
}
