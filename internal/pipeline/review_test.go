package pipeline_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

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

// approved makes p's clusters' accounts exist, plans p and approves each
// plan, as an approver would: the runs of p that wait for an approval may
// then go.
func approved(t *testing.T, c *fakeCloud, tf *fakeTerraform, p *pipeline.Plan) {
	t.Helper()
	for _, s := range p.Steps {
		if s.Name == "account" {
			if _, ok := c.accounts[s.Account]; !ok {
				if _, err := c.EnsureAccount(context.Background(), pipeline.Credentials{}, pipeline.AccountSpec{Name: s.Account, Tags: s.AccountTags}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	planner := runner(c, tf, &fakeRegistry{})
	planner.PlanOnly = true
	if _, err := planner.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for _, s := range planner.Plans() {
		if _, err := runner(c, tf, &fakeRegistry{}).Approve(context.Background(), p, s.Cluster, s.ID, "", "test"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestApprovalsGate: a run that needs an approval (a destroy, a sector
// with approval: always) plans, publishes its plan and refuses until an
// approver approves that plan, saying how; an approval of another plan
// does not count; approved, it applies that plan; a run told to wait takes
// the approval that comes while it waits.
func TestApprovalsGate(t *testing.T) {
	f := load(t, "../..")
	// us-east-1 is in sector-1, whose approval is always.
	p, err := pipeline.Regional(f, "us-east-1", "mc01", "https://api.flag", "r1")
	if err != nil {
		t.Fatal(err)
	}
	c, tf := newCloud(), &fakeTerraform{}
	c.params["/regionctl/regional-pipeline/us-east-1"] = `{"region":"us-east-1","management_account_id":"000000000001","minting_role_arn":"arn:aws:iam::000000000001:role/regionctl-minting-us-east-1"}`
	first := runner(c, tf, &fakeRegistry{})
	var waiting string
	first.Events = func(e pipeline.Event) {
		if e.Status == "waiting" {
			waiting = e.Detail
		}
	}
	_, err = first.Run(context.Background(), p)
	if len(tf.jobs) != 0 || len(first.Plans()) != 1 {
		t.Fatalf("a run that needs an approval applied %+v, planned %+v", tf.jobs, first.Plans())
	}
	id := first.Plans()[0].ID
	approve := "regionctl pipeline approve --region us-east-1 --cluster mc01 --plan-id " + id
	if err == nil || !strings.Contains(err.Error(), "(its sector has approval: always)") || !strings.Contains(err.Error(), "is not approved") || !strings.Contains(err.Error(), approve) {
		t.Fatalf("a run of an approval: always sector, unapproved: %v", err)
	}
	if !strings.Contains(waiting, "waits for an approver: "+approve) {
		t.Errorf("the run did not say what it waits for: %q", waiting)
	}
	// An approval of another plan, or of another cluster, is not this one's.
	key := "regionctl-regional-pipeline-us-east-1/management-cluster/us-east-1/mc01.tfstate.regionctl-approval/" + id
	c.objects[key] = []byte(`{"plan_id":"other","cluster":"us-east-1/mc01"}`)
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "is not one of plan") {
		t.Fatalf("an approval of another plan: %v", err)
	}
	delete(c.objects, key)
	if _, err := runner(c, tf, &fakeRegistry{}).Approve(context.Background(), p, "us-east-1/mc01", "0000", "", "x"); err == nil || !strings.Contains(err.Error(), "no plan 0000 of us-east-1/mc01") {
		t.Fatalf("approving a plan that does not exist: %v", err)
	}
	sum, err := runner(c, tf, &fakeRegistry{}).Approve(context.Background(), p, "us-east-1/mc01", id, "", "change 123")
	if err != nil || sum.ID != id {
		t.Fatalf("approve: %+v %v", sum, err)
	}
	if !strings.Contains(string(c.objects[key]), `"reason":"change 123"`) {
		t.Fatalf("approval %s", c.objects[key])
	}
	// The approval binds the plan's bytes: a plan made again from the same
	// inputs (the same id) that destroys more is not approved by it.
	kept := "regionctl-regional-pipeline-us-east-1/management-cluster/us-east-1/mc01.tfstate.regionctl-plan/" + id + ".tfplan"
	approved := c.objects[kept]
	c.objects[kept] = []byte("plan of us-east-1/mc01 that destroys everything")
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "it was made again since") || !strings.Contains(err.Error(), "sha256:"+sum.SHA256[:12]) || len(tf.jobs) != 0 {
		t.Fatalf("a plan made again after its approval: %v, %d applies", err, len(tf.jobs))
	}
	// Approving again binds the hash the summary describes (the approver
	// never reads the plan file, which holds secrets): the changed bytes
	// are still not applied.
	if _, err := runner(c, tf, &fakeRegistry{}).Approve(context.Background(), p, "us-east-1/mc01", id, "", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "it was made again since") || len(tf.jobs) != 0 {
		t.Fatalf("bytes the approved summary does not describe: %v, %d applies", err, len(tf.jobs))
	}
	c.objects[kept] = approved
	if _, err := runner(c, tf, &fakeRegistry{}).Approve(context.Background(), p, "us-east-1/mc01", id, strings.Repeat("0", 64), "x"); err == nil || !strings.Contains(err.Error(), "not the sha256:0000") {
		t.Fatalf("approving with the hash of another read: %v", err)
	}
	if sum.SHA256 != fmt.Sprintf("%x", sha256.Sum256(approved)) {
		t.Errorf("the summary's hash %s is not the plan's", sum.SHA256)
	}
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p); err != nil {
		t.Fatalf("an approved plan: %v", err)
	}
	if len(tf.jobs) != 1 || tf.jobs[0].SavedPlan == nil {
		t.Fatalf("the approved plan was not the one applied: %+v", tf.jobs)
	}
	// A run that waits takes the approval given while it waits.
	destroy, err := pipeline.Regional(f, "us-east-1", "mc01", "https://api.flag", "r3")
	if err != nil {
		t.Fatal(err)
	}
	for i := range destroy.Steps {
		if destroy.Steps[i].Name == "terraform" {
			destroy.Steps[i].Command = "destroy"
		}
	}
	waiter := runner(c, tf, &fakeRegistry{})
	waiter.ApprovalWait, waiter.Poll = time.Hour, time.Millisecond
	planned := make(chan string, 1)
	waiter.Events = func(e pipeline.Event) {
		if e.Status == "waiting" {
			planned <- e.Detail[strings.LastIndex(e.Detail, " ")+1:]
		}
	}
	go func() {
		id := <-planned
		time.Sleep(10 * time.Millisecond)
		if _, err := runner(c, tf, &fakeRegistry{}).Approve(context.Background(), destroy, "us-east-1/mc01", id, "", "retire"); err != nil {
			t.Error(err)
		}
	}()
	if _, err := waiter.Run(context.Background(), destroy); err != nil {
		t.Fatalf("a run approved while it waited: %v", err)
	}
	if j := tf.jobs[len(tf.jobs)-1]; !j.Destroy || j.SavedPlan == nil {
		t.Errorf("the destroy did not apply its approved plan: %+v", j)
	}

	// Stage (approval: destroys) applies without one.
	stage, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "r2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), stage); err != nil {
		t.Fatalf("a stage apply: %v", err)
	}
}
