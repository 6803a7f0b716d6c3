package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// Runner carries out a Plan against AWS, Terraform and the platform API.
// Every step is idempotent: a re-run after a failure resumes and creates
// nothing twice.
type Runner struct {
	Cloud     Cloud
	Terraform Terraform
	Registry  Registry
	Dir       string    // the repository root; a step's files are relative to it
	Log       io.Writer // where Terraform's output goes, prefixed by cluster
	Events    func(Event)
	Now       func() time.Time
	Host      string
	PID       int
	// Process names the process space PID counts in (a machine's boot and
	// its PID namespace); "" when unknown. A lease left by a PID of the
	// same Process that is no longer Alive is a killed run's. Hostnames
	// do not name it: containers on different machines can share one.
	Process string
	Alive   func(pid int) bool // whether a process of this Process still runs
	// RunID names this run in its leases: random, unless set. Only a lease
	// with this run's RunID is this run's.
	RunID   string
	runOnce sync.Once
	// LeaseTTL is how long a run's lease of a state lasts without its
	// heartbeat (default 10 minutes); LeaseWait how long a run waits for
	// another's lease to end or expire (0: it does not wait).
	LeaseTTL, LeaseWait time.Duration
	// Commit is the commit being deployed ("" when unknown), and History
	// tells whether one commit is an ancestor of another, so that a run
	// never applies an older commit over a newer one already applied.
	Commit  string
	History History
	// StateDir, when set, keeps what each cluster's steps learned (its
	// account id, the assumed role's credentials) between processes, so
	// that a step run alone (--step, one Tekton Task per step) finds what
	// the steps before it left.
	StateDir string
	// Parallel is how many clusters run at once (1 or less: one at a time).
	// Events and Log must then be safe for concurrent use.
	Parallel int
	// PlanOnly makes the run change nothing: accounts are found, not
	// made, and each root is planned, the plan kept next to its state for
	// the apply that follows a review (review.go).
	PlanOnly bool
	// ApprovalWait is how long a run that needs an approval waits for one
	// after publishing its plan (0: it refuses at once, naming the command
	// that approves). Poll is how often it looks (default 30s), and how
	// often the argocd step asks after its bootstrap task (default 10s).
	ApprovalWait, Poll time.Duration
	// DeployRoleWait bounds the wait for AWS CloudFormation to deploy the
	// deploy role into an account just placed in its region's OU
	// (default 10 minutes).
	DeployRoleWait time.Duration
	// Tree checks that the repository's deploy/ is exactly what its config
	// renders; Run calls it before anything else and refuses to run
	// without it, or when it fails: a pipeline applies only what the
	// config of its commit renders, never a file edited by hand.
	Tree func() error

	plansMu sync.Mutex
	plans   []PlanSummary
}

// DriftError is a run refused before its first step: deploy/ is not what
// the config renders, or nothing checked.
type DriftError struct{ Err error }

func (e *DriftError) Error() string {
	return "refusing to run: " + e.Err.Error()
}
func (e *DriftError) Unwrap() error { return e.Err }

// Event reports a step starting or ending.
type Event struct {
	Cluster string
	Step    string
	Status  string // start, ok, failed, skipped
	Detail  string
	Elapsed time.Duration
}

// StepResult is the outcome of one step.
type StepResult struct {
	Cluster string        `json:"cluster"`
	Step    string        `json:"step"`
	Outcome string        `json:"outcome"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// StepError is a step that failed.
type StepError struct {
	Cluster, Step string
	Err           error
}

func (e *StepError) Error() string { return fmt.Sprintf("%s %s: %v", e.Cluster, e.Step, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }

// clusterState is what earlier steps of one cluster leave to later ones:
// ids AWS gave (account, organisation, OU, the pipeline's own account),
// the role the assume-role step checked, Terraform's outputs. It holds no
// credentials: each step acts with the runner's own identity, and
// Terraform assumes the checked role itself.
type clusterState struct {
	Account string            `json:"account"`
	Values  map[string]string `json:"values,omitempty"`
	Outputs map[string]string `json:"outputs,omitempty"`
}

func (st *clusterState) set(k, v string) {
	if st.Values == nil {
		st.Values = map[string]string{}
	}
	st.Values[k] = v
}

// resolve fills the ${name} placeholders of a planned value from what the
// steps before learned; one it cannot fill is an error naming it.
func (st *clusterState) resolve(v string) (string, error) {
	var missing []string
	out := placeholder.ReplaceAllStringFunc(v, func(m string) string {
		name := m[2 : len(m)-1]
		var val string
		known := false
		switch {
		case name == "account_id":
			val = st.Account
		case strings.HasPrefix(name, "output."):
			// An output Terraform gave is known even when empty (the
			// platform API's endpoint before its zone is delegated).
			val, known = st.Outputs[strings.TrimPrefix(name, "output.")]
		default:
			val = st.Values[name]
		}
		if val == "" && !known {
			missing = append(missing, name)
		}
		return val
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s is not known yet (the step that learns it did not run before this one)", strings.Join(missing, ", "))
	}
	return out, nil
}

var placeholder = regexp.MustCompile(`\$\{[a-z_.]+\}`)

func (r *Runner) statePath(cluster string) string {
	return filepath.Join(r.StateDir, filepath.FromSlash(cluster), "step-state.json")
}

func (r *Runner) loadState(cluster string) *clusterState {
	st := &clusterState{}
	if r.StateDir != "" {
		if b, err := os.ReadFile(r.statePath(cluster)); err == nil {
			_ = json.Unmarshal(b, st) // an unreadable state is as if none: the steps redo their work
		}
	}
	return st
}

// saveState writes the state atomically; it holds credentials, so only its
// owner may read it.
func (r *Runner) saveState(cluster string, st *clusterState) error {
	if r.StateDir == "" {
		return nil
	}
	path := r.statePath(cluster)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Run carries out the steps of p. Each cluster's steps run in order and
// stop at its first failure. With Parallel above 1, up to that many
// clusters run at once and a failure stops only its own cluster;
// otherwise the run stops at the first failure.
func (r *Runner) Run(ctx context.Context, p *Plan) ([]StepResult, error) {
	if r.Tree == nil {
		return nil, &DriftError{Err: errors.New("nothing checks deploy/ against the config")}
	}
	if err := r.Tree(); err != nil {
		return nil, &DriftError{Err: err}
	}
	var order []string
	steps := map[string][]Step{}
	for _, s := range p.Steps {
		if steps[s.Cluster] == nil {
			order = append(order, s.Cluster)
		}
		steps[s.Cluster] = append(steps[s.Cluster], s)
	}
	results := make([][]StepResult, len(order))
	errs := make([]error, len(order))
	if r.Parallel <= 1 {
		var all []StepResult
		for i, c := range order {
			results[i], errs[i] = r.runCluster(ctx, p, steps[c])
			all = append(all, results[i]...)
			if errs[i] != nil {
				return all, errs[i]
			}
		}
		return all, nil
	}
	par.Workers(r.Parallel, len(order), func(_, i int) {
		results[i], errs[i] = r.runCluster(ctx, p, steps[order[i]])
	})
	var all []StepResult
	for _, rs := range results {
		all = append(all, rs...)
	}
	return all, errors.Join(errs...)
}

// runCluster carries out one cluster's steps in order.
func (r *Runner) runCluster(ctx context.Context, p *Plan, steps []Step) ([]StepResult, error) {
	var results []StepResult
	st := r.loadState(steps[0].Cluster)
	for _, s := range steps {
		start := r.now()
		r.emit(Event{Cluster: s.Cluster, Step: s.Name, Status: "start"})
		outcome, err := r.step(ctx, p, s, st)
		elapsed := r.now().Sub(start)
		if err != nil {
			r.emit(Event{Cluster: s.Cluster, Step: s.Name, Status: "failed", Detail: err.Error(), Elapsed: elapsed})
			return results, &StepError{Cluster: s.Cluster, Step: s.Name, Err: err}
		}
		if err := r.saveState(s.Cluster, st); err != nil {
			return results, &StepError{Cluster: s.Cluster, Step: s.Name, Err: fmt.Errorf("saving the step state: %w", err)}
		}
		status := "ok"
		if s.Name == "none" {
			status = "skipped"
		}
		r.emit(Event{Cluster: s.Cluster, Step: s.Name, Status: status, Detail: outcome, Elapsed: elapsed})
		results = append(results, StepResult{Cluster: s.Cluster, Step: s.Name, Outcome: outcome, Elapsed: elapsed})
	}
	return results, nil
}

func (r *Runner) step(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	if r.PlanOnly {
		return r.planStep(ctx, p, s, st)
	}
	switch s.Name {
	case "account":
		if s.Handoff != "" {
			return r.regionalAccount(ctx, p, s, st)
		}
		return r.centralAccount(ctx, s, st)
	case "assume-role":
		return r.assume(ctx, p, s, st)
	case "terraform", "bootstrap":
		return r.terraform(ctx, p, s, st)
	case "register":
		return r.register(ctx, p, s, st)
	case "argocd":
		return r.argocd(ctx, p, s, st)
	case "check-destroyed":
		return r.checkDestroyed(ctx, s)
	case "none":
		return s.Action, nil
	}
	return "", fmt.Errorf("unknown step %q", s.Name)
}

// assume assumes the step's role with the runner's own identity, checks
// the identity it gives is of the cluster's account, and records the role
// for Terraform to act through. Terraform never runs in a cluster account
// with the pipeline's own identity.
func (r *Runner) assume(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	if st.Account == "" {
		return "", errors.New("no account: the account step did not run before this one")
	}
	arn, creds, err := r.assumeStepRole(ctx, p, s, st)
	if err != nil {
		return "", err
	}
	id, err := r.Cloud.Caller(ctx, creds)
	if err != nil {
		return "", fmt.Errorf("checking the identity of %s: %w", arn, err)
	}
	if id.Account != st.Account {
		return "", fmt.Errorf("assuming %s gave an identity of account %s, not %s", arn, id.Account, st.Account)
	}
	st.set("assumed_role_arn", arn)
	return "assumed " + arn + " as " + s.SessionName, nil
}

// assumeStepRole assumes the step's role (its ARN filled in from what the
// steps before learned) with its ExternalId and session name, and the
// run's request id as session tag where the step says so.
func (r *Runner) assumeStepRole(ctx context.Context, p *Plan, s Step, st *clusterState) (string, Credentials, error) {
	arn, err := st.resolve(s.RoleARN)
	if err != nil {
		return "", Credentials{}, err
	}
	req := AssumeRequest{RoleARN: arn, ExternalID: s.ExternalID, SessionName: s.SessionName}
	if s.SessionTags {
		req.Tags = map[string]string{iam.RequestIDTag: p.RequestID}
	}
	creds, err := r.Cloud.AssumeRole(ctx, req)
	return arn, creds, err
}

// terraformJob is the Terraform job of a step, with its state object; it
// makes sure the state bucket exists (creating the central pipeline's own
// when create allows) and belongs to the account it must.
func (r *Runner) terraformJob(ctx context.Context, s Step, st *clusterState, create bool) (job TerraformJob, state Object, created bool, err error) {
	if st.Values["assumed_role_arn"] == "" {
		return job, state, false, errors.New("no assumed role: the assume-role step did not run before this one, and Terraform never runs in a cluster account with the pipeline's own identity")
	}
	bucket, key, region := s.Backend["bucket"], s.Backend["key"], s.Backend["region"]
	owner, err := st.resolve(s.BucketOwner)
	if err != nil {
		return job, state, false, fmt.Errorf("the owner of the state bucket: %w", err)
	}
	vars := map[string]string{}
	for k, v := range s.Vars {
		if vars[k], err = st.resolve(v); err != nil {
			return job, state, false, fmt.Errorf("terraform variable %s: %w", k, err)
		}
	}
	if s.CreateBucket && create {
		if created, err = r.Cloud.EnsureBucket(ctx, Credentials{}, bucket, region, owner); err != nil {
			return job, state, false, fmt.Errorf("ensuring the state bucket %s: %w", bucket, err)
		}
	} else if err := r.Cloud.CheckBucket(ctx, Credentials{}, bucket, owner); err != nil {
		return job, state, false, fmt.Errorf("the state bucket %s (made by the central pipeline's bootstrap): %w", bucket, err)
	}
	state = Object{Bucket: bucket, Key: key, Owner: owner}
	job = TerraformJob{Cluster: s.Cluster, Root: strings.TrimPrefix(s.Root, "terraform/"), VarFile: filepath.Join(r.Dir, s.VarFile),
		Vars: vars, Backend: s.Backend, Region: region, Destroy: s.Command == "destroy", Log: r.Log}
	if s.Documents != "" {
		job.Documents = filepath.Join(r.Dir, s.Documents)
	}
	return job, state, created, nil
}

func (r *Runner) terraform(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	job, state, created, err := r.terraformJob(ctx, s, st, true)
	if err != nil {
		return "", err
	}
	if s.Approval {
		// Plan (unless a review did), publish the plan, and wait for an
		// approver, before taking the state.
		if err := r.awaitApproval(ctx, p, s, job, state); err != nil {
			return "", err
		}
	}
	stale, tag, err := r.acquire(ctx, p, s, state)
	if err != nil {
		return "", err
	}
	// The run's work stops when its lease is lost (fenced), so that a run
	// that took the lease over never applies beside it.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	release := r.heartbeat(ctx, p, state, tag, cancel)
	defer release()
	if err := r.checkOrder(ctx, state); err != nil {
		return "", err
	}
	planID, reviewed, err := r.reviewedPlan(ctx, job, state)
	if err != nil {
		return "", err
	}
	if s.Approval {
		// Again, under the lease: what is applied is what was approved.
		if err := r.checkApproved(ctx, p, s, state, planID, reviewed); err != nil {
			return "", err
		}
	}
	job.SavedPlan = reviewed
	out, err := r.runLocked(ctx, job, state.String(), stale)
	if err != nil {
		if reviewed != nil && errors.Is(err, ErrStalePlan) {
			return "", fmt.Errorf("the reviewed plan %s of %s no longer matches its state, which changed since the review: plan it again (regionctl pipeline %s --plan) and review that: %w",
				short12(planID), s.Cluster, p.Pipeline, err)
		}
		return "", err
	}
	if reviewed != nil {
		if err := r.forgetPlan(ctx, state, planID); err != nil {
			return "", err
		}
	}
	if err := r.recordApplied(ctx, p, state); err != nil {
		return "", err
	}
	if err := r.recordDestroyed(ctx, p, state, job.Destroy); err != nil {
		return "", err
	}
	st.Outputs = out
	outcome := s.Command + " of " + s.Root + " done"
	if reviewed != nil {
		outcome += " (the reviewed plan " + short12(planID) + ")"
	}
	if created {
		outcome += "; state bucket " + state.Bucket + " created"
	}
	if stale {
		outcome += "; took over from a killed run"
	}
	return outcome, nil
}

// runLocked runs job under the run's lease. A lock Terraform finds on the
// state (named state) is released, and the run made again, only when it
// is a killed run's of this host (stale: the lease was taken over from
// it); anyone else's stops the run. When the lease is lost, its cause
// comes back rather than Terraform's error.
func (r *Runner) runLocked(ctx context.Context, job TerraformJob, state string, stale bool) (map[string]string, error) {
	out, err := r.Terraform.Run(ctx, job)
	if cause := context.Cause(ctx); err != nil && cause != nil && cause != context.Canceled {
		return nil, cause
	}
	var locked *LockedError
	if !errors.As(err, &locked) {
		return out, err
	}
	if !stale {
		return nil, &LockHeldError{State: state, Holder: "a Terraform run outside regionctl (lock ID " + locked.ID + ")"}
	}
	// The lock belongs to a run of this host that was killed: release it.
	if err := r.Terraform.ForceUnlock(ctx, job, locked.ID); err != nil {
		return nil, fmt.Errorf("releasing the lock %s of a killed run: %w", locked.ID, err)
	}
	return r.Terraform.Run(ctx, job)
}

func (r *Runner) register(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	endpoint := s.Endpoint
	if endpoint == "" {
		endpoint = st.Values["platform_api_endpoint"]
		if endpoint == "" {
			return "", fmt.Errorf("the central pipeline's handoff %s names no platform API endpoint: the regional root serves the API only once its zone is delegated (the regional apply's output platform_api_delegation names the NS records the parent domain needs; then set platform_api.zone_delegated: true), and the central pipeline of %s must have run since; or pass --api-endpoint", iam.ParameterName(p.Region), p.Region)
		}
	}
	name := s.Cluster[strings.LastIndex(s.Cluster, "/")+1:]
	outcome, err := r.Registry.Register(ctx, Registration{Endpoint: endpoint, Name: name, Labels: s.Labels, Region: p.Region, RequestID: p.RequestID})
	if err != nil {
		return "", err
	}
	return outcome + " at " + endpoint, nil
}

func (r *Runner) emit(e Event) {
	if r.Events != nil {
		r.Events(e)
	}
}

// poll is how often a run looks again at what it waits for.
func (r *Runner) poll() time.Duration {
	if r.Poll > 0 {
		return r.Poll
	}
	return 30 * time.Second
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
