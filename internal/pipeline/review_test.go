package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// TestPlanChangesNothingAndIsApplied: a plan-only run finds accounts
// without making them, plans the root and keeps the plan next to its
// state; the apply of the same inputs applies exactly that plan and
// forgets it; a plan Terraform finds stale is refused, saying what to do;
// an apply of other inputs plans anew.
func TestPlanChangesNothingAndIsApplied(t *testing.T) {
	f := load(t, "../..")
	plan := func(id string) *pipeline.Plan {
		p, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, tf := newCloud(), &fakeTerraform{plan: []pipeline.ResourceChange{
		{Address: "module.cluster.aws_eks_cluster.this", Action: "replace"}, {Address: "aws_s3_bucket.oidc", Action: "delete"}, {Address: "aws_iam_role.x", Action: "create"}}}
	planner := runner(c, tf, &fakeRegistry{})
	planner.PlanOnly = true

	// A cluster whose account does not exist yet: nothing to plan, nothing made.
	if _, err := planner.Run(context.Background(), plan("p0")); err != nil {
		t.Fatal(err)
	}
	if len(c.accounts) != 0 || len(tf.plans) != 0 || len(tf.jobs) != 0 {
		t.Fatalf("a plan made accounts %v, planned %d, applied %d", c.accounts, len(tf.plans), len(tf.jobs))
	}
	if s := planner.Plans(); len(s) != 1 || !s[0].New || s[0].Cluster != "eu-west-1/mc01" {
		t.Fatalf("plans of a new cluster: %+v", s)
	}

	// Made by an apply, then planned: the plan is kept next to the state.
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), plan("a1")); err != nil {
		t.Fatal(err)
	}
	planner = runner(c, tf, &fakeRegistry{})
	planner.PlanOnly = true
	calls := len(c.calls)
	if _, err := planner.Run(context.Background(), plan("p1")); err != nil {
		t.Fatal(err)
	}
	for _, call := range c.calls[calls:] {
		if strings.HasPrefix(call, "account ") || strings.HasPrefix(call, "role ") || strings.HasPrefix(call, "trust ") || strings.HasPrefix(call, "tag ") {
			t.Errorf("a plan changed something: %s", call)
		}
	}
	sums := planner.Plans()
	if len(sums) != 1 || sums[0].Add != 2 || sums[0].Change != 0 || sums[0].Destroy != 2 || strings.Join(sums[0].Destroyed(), " ") != "aws_s3_bucket.oidc module.cluster.aws_eks_cluster.this" {
		t.Fatalf("summary %+v", sums)
	}
	key := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-plan/" + sums[0].ID
	if string(c.objects[key+".tfplan"]) != "plan of eu-west-1/mc01 "+sums[0].ID || !strings.Contains(string(c.objects[key+".json"]), `"destroy":2`) {
		t.Fatalf("the plan is not kept at %s: %v", key, keys(c.objects))
	}

	// The apply of the same inputs applies that plan, then forgets it.
	applied := len(tf.jobs)
	results, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), plan("a2"))
	if err != nil {
		t.Fatal(err)
	}
	if j := tf.jobs[applied]; string(j.SavedPlan) != "plan of eu-west-1/mc01 "+sums[0].ID {
		t.Errorf("the apply did not use the reviewed plan: %q", j.SavedPlan)
	}
	if !strings.Contains(outcome(results, "terraform"), "the reviewed plan "+sums[0].ID[:12]) {
		t.Errorf("outcome %q", outcome(results, "terraform"))
	}
	if _, ok := c.objects[key+".tfplan"]; ok {
		t.Error("an applied plan was kept")
	}

	// A plan whose state changed since is refused by Terraform, and the
	// run says what to do.
	if _, err := planner.Run(context.Background(), plan("p2")); err != nil {
		t.Fatal(err)
	}
	tf.stale = true
	_, err = runner(c, tf, &fakeRegistry{}).Run(context.Background(), plan("a3"))
	if err == nil || !strings.Contains(err.Error(), "no longer matches its state") || !strings.Contains(err.Error(), "regionctl pipeline regional --plan") {
		t.Fatalf("a stale reviewed plan: %v", err)
	}
	tf.stale = false

	// Other inputs (the cluster destroyed now) plan anew: no saved plan.
	destroy, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "a4")
	if err != nil {
		t.Fatal(err)
	}
	for i := range destroy.Steps {
		if destroy.Steps[i].Name == "terraform" {
			destroy.Steps[i].Command = "destroy"
		}
	}
	applied = len(tf.jobs)
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), destroy); err != nil {
		t.Fatal(err)
	}
	if j := tf.jobs[applied]; j.SavedPlan != nil || !j.Destroy {
		t.Errorf("a destroy used a plan of an apply: %+v", j)
	}
}

func outcome(results []pipeline.StepResult, step string) string {
	for _, r := range results {
		if r.Step == step {
			return r.Outcome
		}
	}
	return ""
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
