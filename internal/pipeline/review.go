package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/render/iam"
)

// A reviewed plan: `pipeline ... --plan` (Runner.PlanOnly) runs the same
// steps as an apply, with the same identities, but changes nothing: it
// finds the accounts instead of making them, plans each Terraform root, and
// keeps the plan next to the cluster's state, named by the identity of
// everything it was made from but the state (Terraform.InputID). A later
// apply of the same inputs applies exactly that plan, and Terraform refuses
// it when the state changed since.

// PlanSummary is what a Terraform plan proposes, as a reviewer reads it.
type PlanSummary struct {
	Cluster   string           `json:"cluster"`
	Root      string           `json:"terraform_root"`
	ID        string           `json:"plan_id"`
	Command   string           `json:"terraform_command"` // apply or destroy
	Commit    string           `json:"commit,omitempty"`
	RequestID string           `json:"request_id"`
	At        time.Time        `json:"at"`
	Add       int              `json:"add"`
	Change    int              `json:"change"`
	Destroy   int              `json:"destroy"`
	Resources []ResourceChange `json:"resources"`
	// New says the cluster's account does not exist yet: nothing could be
	// planned, and the first apply creates every resource of the root.
	New bool `json:"new_account,omitempty"`
	// Object is where the plan is kept (s3://bucket/key), and SHA256 the
	// hash of its bytes: what an approval binds.
	Object string `json:"object,omitempty"`
	SHA256 string `json:"plan_sha256,omitempty"`
}

func planHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ResourceChange is one resource a plan changes.
type ResourceChange struct {
	Address string `json:"address"`
	Action  string `json:"action"` // create, update, delete, replace
}

// Destroyed are the addresses a plan deletes or replaces.
func (s PlanSummary) Destroyed() []string {
	var out []string
	for _, r := range s.Resources {
		if r.Action == "delete" || r.Action == "replace" {
			out = append(out, r.Address)
		}
	}
	return out
}

// PlanResult is a saved Terraform plan and what it proposes.
type PlanResult struct {
	File    []byte
	Summary PlanSummary
}

// Count sets Add, Change and Destroy from Resources, as Terraform counts
// them (a replacement adds one and destroys one), and sorts Resources.
func (s *PlanSummary) Count() {
	s.Add, s.Change, s.Destroy = 0, 0, 0
	for _, r := range s.Resources {
		switch r.Action {
		case "create":
			s.Add++
		case "update":
			s.Change++
		case "delete":
			s.Destroy++
		case "replace":
			s.Add++
			s.Destroy++
		}
	}
	sort.Slice(s.Resources, func(i, j int) bool { return s.Resources[i].Address < s.Resources[j].Address })
	if s.Resources == nil {
		s.Resources = []ResourceChange{}
	}
}

func planFileOf(state Object, id string) Object {
	state.Key += ".regionctl-plan/" + id + ".tfplan"
	return state
}

func planSummaryOf(state Object, id string) Object {
	state.Key += ".regionctl-plan/" + id + ".json"
	return state
}

// Plans are the summaries a plan-only run made, by cluster and root.
func (r *Runner) Plans() []PlanSummary {
	r.plansMu.Lock()
	defer r.plansMu.Unlock()
	out := append([]PlanSummary(nil), r.plans...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].Root < out[j].Root
	})
	return out
}

func (r *Runner) keepPlan(s PlanSummary) {
	r.plansMu.Lock()
	defer r.plansMu.Unlock()
	r.plans = append(r.plans, s)
}

// planStep is a step of a plan-only run.
func (r *Runner) planStep(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	newAccount := st.Values["new_account"] == "true"
	switch s.Name {
	case "account":
		if s.Handoff != "" {
			return r.findRegionalAccount(ctx, p, s, st)
		}
		return r.findCentralAccount(ctx, s, st)
	case "assume-role":
		if newAccount {
			return "skipped: the account does not exist yet", nil
		}
		return r.assume(ctx, p, s, st)
	case "terraform", "bootstrap":
		if newAccount {
			root := strings.TrimPrefix(s.Root, "terraform/")
			r.keepPlan(PlanSummary{Cluster: s.Cluster, Root: root, Command: s.Command, Commit: r.Commit, RequestID: p.RequestID, At: r.now(), New: true, Resources: []ResourceChange{}})
			return "skipped: the account does not exist yet; its first apply creates every resource of " + root, nil
		}
		return r.planTerraform(ctx, p, s, st)
	}
	return "skipped: a plan changes nothing", nil
}

// findCentralAccount is the central account step of a plan: it finds the
// regional account (and the region's DR account and OU) without making
// anything.
func (r *Runner) findCentralAccount(ctx context.Context, s Step, st *clusterState) (string, error) {
	org, err := r.Cloud.Organization(ctx, Credentials{})
	if err != nil {
		return "", fmt.Errorf("reading the organisation: %w", err)
	}
	st.set("management_account_id", org.Management)
	st.set("organization_id", org.ID)
	st.set("root_id", org.RootID)
	st.set("management_ou_id", "")
	id, err := r.findTagged(ctx, Credentials{}, s.Account, s.AccountTags)
	if err != nil {
		return "", err
	}
	if id == "" {
		st.set("new_account", "true")
		return "the account " + s.Account + " does not exist yet: the pipeline creates it", nil
	}
	st.Account = id
	outcome := "found " + id
	if s.DRAccount != nil {
		dr, err := r.findTagged(ctx, Credentials{}, s.DRAccount.Name, s.DRAccount.Tags)
		if err != nil {
			return "", err
		}
		if dr == "" {
			st.set("new_account", "true") // the bootstrap cannot be planned without it
			return outcome + "; the DR account " + s.DRAccount.Name + " does not exist yet: the pipeline creates it", nil
		}
		st.set("dr_account_id", dr)
		outcome += "; DR account " + dr
	}
	if s.ManagementOU != "" {
		ou, err := r.Cloud.EnsureOU(ctx, Credentials{}, s.ManagementOU, false)
		if err != nil {
			return "", fmt.Errorf("the OU %s of the region's management clusters (the pipeline creates it on its first run): %w", s.ManagementOU, err)
		}
		st.set("management_ou_id", ou)
	}
	return outcome, nil
}

// findRegionalAccount is the regional account step of a plan: the
// handoff, then the cluster's account found through the minting role.
func (r *Runner) findRegionalAccount(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	h, err := r.readHandoff(ctx, p, s, st)
	if err != nil {
		return "", err
	}
	minting, err := r.assumeMinting(ctx, p, s, h)
	if err != nil {
		return "", err
	}
	id, err := r.findTagged(ctx, minting, s.Account, s.AccountTags)
	if err != nil {
		return "", err
	}
	if id == "" {
		st.set("new_account", "true")
		return "the account " + s.Account + " does not exist yet: the pipeline creates it", nil
	}
	st.Account = id
	return "found " + id, nil
}

// findTagged finds an account by name ("" when there is none); one whose
// tags do not name the same region, environment and cluster is refused, as
// the account step refuses to adopt it.
func (r *Runner) findTagged(ctx context.Context, creds Credentials, name string, want map[string]string) (string, error) {
	id, tags, err := r.Cloud.FindAccount(ctx, creds, name)
	if err != nil {
		return "", fmt.Errorf("finding the account %s: %w", name, err)
	}
	if id == "" {
		return "", nil
	}
	for _, k := range []string{iam.RegionTag, iam.EnvironmentTag, iam.ClusterTag} {
		if tags[k] != want[k] {
			return "", fmt.Errorf("the account %s (%s) has %s=%q, not %q: it is not this cluster's, and the pipeline would refuse to adopt it", name, id, k, tags[k], want[k])
		}
	}
	return id, nil
}

// planTerraform plans a root and keeps the plan next to the state.
func (r *Runner) planTerraform(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	job, state, _, err := r.terraformJob(ctx, s, st, false)
	if err != nil {
		return "", err
	}
	sum, _, err := r.publishPlan(ctx, p, s, job, state)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("plan %s of %s: %d to add, %d to change, %d to destroy", short12(sum.ID), job.Root, sum.Add, sum.Change, sum.Destroy), nil
}

// publishPlan plans job and keeps the plan and its summary next to the
// state, for the review and the apply that follows it.
func (r *Runner) publishPlan(ctx context.Context, p *Plan, s Step, job TerraformJob, state Object) (PlanSummary, []byte, error) {
	res, err := r.Terraform.Plan(ctx, job)
	if err != nil {
		return PlanSummary{}, nil, err
	}
	sum := res.Summary
	sum.Cluster, sum.Root, sum.Command, sum.Commit, sum.RequestID, sum.At = s.Cluster, job.Root, s.Command, r.Commit, p.RequestID, r.now()
	sum.Count()
	sum.Object, sum.SHA256 = planFileOf(state, sum.ID).String(), planHash(res.File)
	body, _ := json.Marshal(sum)
	if err := r.Cloud.Put(ctx, Credentials{}, planFileOf(state, sum.ID), res.File); err != nil {
		return PlanSummary{}, nil, fmt.Errorf("keeping the plan next to %s: %w", state, err)
	}
	if err := r.Cloud.Put(ctx, Credentials{}, planSummaryOf(state, sum.ID), body); err != nil {
		return PlanSummary{}, nil, fmt.Errorf("keeping the plan's summary next to %s: %w", state, err)
	}
	r.keepPlan(sum)
	return sum, res.File, nil
}

// reviewedPlan is the plan a plan-only run kept for exactly these inputs
// (nil when there is none).
func (r *Runner) reviewedPlan(ctx context.Context, job TerraformJob, state Object) (id string, plan []byte, err error) {
	if id, err = r.Terraform.InputID(job); err != nil {
		return "", nil, err
	}
	plan, err = r.Cloud.Get(ctx, Credentials{}, planFileOf(state, id))
	if errors.Is(err, ErrNotFound) {
		return id, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("reading the reviewed plan %s: %w", planFileOf(state, id), err)
	}
	return id, plan, nil
}

// forgetPlan removes a plan an apply used: it describes a state that is
// gone.
func (r *Runner) forgetPlan(ctx context.Context, state Object, id string) error {
	for _, o := range []Object{planFileOf(state, id), planSummaryOf(state, id)} {
		if err := r.Cloud.Delete(ctx, Credentials{}, o); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("removing the applied plan %s: %w", o, err)
		}
	}
	return nil
}

func approvalOf(state Object, id string) Object {
	state.Key += iam.ApprovalInfix + id
	return state
}

// approval is an approver's record that a reviewed plan may be applied.
// Only the region's approver roles can write one (the state buckets'
// policies deny it to every other principal).
type approval struct {
	PlanID string `json:"plan_id"`
	// PlanSHA256 is the hash of the plan's bytes the approver approved: a
	// plan made again from the same inputs (the same id) that would
	// change more is not approved by it.
	PlanSHA256 string    `json:"plan_sha256"`
	Cluster    string    `json:"cluster"`
	Approver   string    `json:"approver"`
	Reason     string    `json:"reason,omitempty"`
	At         time.Time `json:"at"`
}

// awaitApproval is the approval step of a run that needs one: without a
// reviewed plan of its inputs, it plans and publishes the plan (as a
// plan-only run would) and names it; then it waits, up to ApprovalWait,
// for an approver to approve it.
func (r *Runner) awaitApproval(ctx context.Context, p *Plan, s Step, job TerraformJob, state Object) error {
	id, reviewed, err := r.reviewedPlan(ctx, job, state)
	if err != nil {
		return err
	}
	if reviewed == nil {
		sum, file, err := r.publishPlan(ctx, p, s, job, state)
		if err != nil {
			return err
		}
		id, reviewed = sum.ID, file
		r.emit(Event{Cluster: s.Cluster, Step: s.Name, Status: "waiting", Detail: fmt.Sprintf("plan %s: %d to add, %d to change, %d to destroy; waits for an approver: regionctl pipeline approve --region %s --cluster %s --plan-id %s",
			short12(id), sum.Add, sum.Change, sum.Destroy, p.Region, s.Cluster[strings.LastIndex(s.Cluster, "/")+1:], id)})
	}
	deadline := r.now().Add(r.ApprovalWait)
	poll := r.Poll
	if poll <= 0 {
		poll = 30 * time.Second
	}
	for {
		err := r.checkApproved(ctx, p, s, state, id, reviewed)
		if err == nil || !errors.Is(err, errNotApproved) || !r.now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// errNotApproved is the error of a plan no approver approved yet.
var errNotApproved = errors.New("not approved")

// checkApproved refuses a run that needs an approval unless an approver
// approved the reviewed plan of exactly its inputs.
func (r *Runner) checkApproved(ctx context.Context, p *Plan, s Step, state Object, planID string, reviewed []byte) error {
	why := "its sector has approval: always"
	if s.Command == "destroy" {
		why = "it destroys the cluster"
	}
	name := s.Cluster[strings.LastIndex(s.Cluster, "/")+1:]
	if reviewed == nil {
		return fmt.Errorf("%s %s waits for an approved plan (%s), and no plan of these inputs was reviewed: run `regionctl pipeline %s --region %s --cluster %s --plan`, have an approver approve the plan it names, then run again",
			s.Cluster, s.Root, why, p.Pipeline, p.Region, name)
	}
	body, err := r.Cloud.Get(ctx, Credentials{}, approvalOf(state, planID))
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%s %s waits for an approver (%s): the reviewed plan %s is %w; an approver runs `regionctl pipeline approve --region %s --cluster %s --plan-id %s`",
			s.Cluster, s.Root, why, short12(planID), errNotApproved, p.Region, name, planID)
	}
	if err != nil {
		return fmt.Errorf("reading the approval of %s: %w", approvalOf(state, planID), err)
	}
	var a approval
	if err := json.Unmarshal(body, &a); err != nil || a.PlanID != planID || a.Cluster != s.Cluster {
		return fmt.Errorf("the approval %s is not one of plan %s of %s", approvalOf(state, planID), short12(planID), s.Cluster)
	}
	if got := planHash(reviewed); a.PlanSHA256 != got {
		return fmt.Errorf("%s %s waits for an approver (%s): the approval of plan %s by %s covers the plan bytes sha256:%s, and the plan to apply is sha256:%s (it was made again since): the approval is %w; an approver reads the plan again and runs `regionctl pipeline approve --region %s --cluster %s --plan-id %s`",
			s.Cluster, s.Root, why, short12(planID), a.Approver, short12(a.PlanSHA256), short12(got), errNotApproved, p.Region, name, planID)
	}
	return nil
}

// Approve records, as the runner's own identity (an approver role), that
// the reviewed plan id of cluster may be applied: it finds the plan's
// summary next to the state of one of the cluster's roots in p, and
// writes the approval beside it. It returns the summary approved.
//
// sha256, when not empty, is the hash of the plan the approver read (the
// summaries show it): a plan made again since, with other bytes, is
// refused rather than approved unread.
func (r *Runner) Approve(ctx context.Context, p *Plan, cluster, id, sha256, reason string) (PlanSummary, error) {
	me, err := r.Cloud.Caller(ctx, Credentials{})
	if err != nil {
		return PlanSummary{}, err
	}
	for _, s := range p.Steps {
		if s.Cluster != cluster || (s.Name != "terraform" && s.Name != "bootstrap") {
			continue
		}
		// The approver acts in the account that owns the state bucket.
		state := Object{Bucket: s.Backend["bucket"], Key: s.Backend["key"], Owner: me.Account}
		body, err := r.Cloud.Get(ctx, Credentials{}, planSummaryOf(state, id))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return PlanSummary{}, fmt.Errorf("reading the plan %s of %s: %w", short12(id), cluster, err)
		}
		var sum PlanSummary
		if err := json.Unmarshal(body, &sum); err != nil || sum.ID != id || sum.Cluster != cluster {
			return PlanSummary{}, fmt.Errorf("%s is not a summary of plan %s of %s", planSummaryOf(state, id), short12(id), cluster)
		}
		// The approval binds the hash of the plan's bytes the summary
		// describes; the apply runs the plan only when its bytes still have
		// that hash. The approver never reads the plan itself (a plan file
		// holds the values Terraform will write, secrets included).
		if sha256 != "" && sha256 != sum.SHA256 {
			return PlanSummary{}, fmt.Errorf("the plan %s of %s is sha256:%s now, not the sha256:%s you read: it was made again; read it again, then approve", short12(id), cluster, sum.SHA256, sha256)
		}
		rec, _ := json.Marshal(approval{PlanID: id, PlanSHA256: sum.SHA256, Cluster: cluster, Approver: me.ARN, Reason: reason, At: r.now()})
		if err := r.Cloud.Put(ctx, Credentials{}, approvalOf(state, id), rec); err != nil {
			return PlanSummary{}, fmt.Errorf("approving plan %s of %s: %w", short12(id), cluster, err)
		}
		return sum, nil
	}
	return PlanSummary{}, fmt.Errorf("no plan %s of %s is kept next to its state: run `regionctl pipeline %s --region %s --cluster %s --plan` and approve the plan it names",
		id, cluster, p.Pipeline, p.Region, cluster[strings.LastIndex(cluster, "/")+1:])
}
