package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

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
	Alive     func(pid int) bool // whether a process of this host still runs
	// StateDir, when set, keeps what each cluster's steps learned (its
	// account id, the assumed role's credentials) between processes, so
	// that a step run alone (--step, one Tekton Task per step) finds what
	// the steps before it left.
	StateDir string
	// Parallel is how many clusters run at once (1 or less: one at a time).
	// Events and Log must then be safe for concurrent use.
	Parallel int
}

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

// clusterState is what earlier steps of one cluster leave to later ones.
type clusterState struct {
	Account string            `json:"account"`
	Creds   Credentials       `json:"credentials"`
	Outputs map[string]string `json:"outputs,omitempty"`
}

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
	sem := make(chan struct{}, r.Parallel)
	var wg sync.WaitGroup
	for i, c := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = r.runCluster(ctx, p, steps[c])
		}()
	}
	wg.Wait()
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
	switch s.Name {
	case "account":
		return r.account(ctx, p, s, st)
	case "assume-role":
		if st.Account == "" {
			return "", errors.New("no account: the account step did not run before this one")
		}
		creds, err := r.Cloud.AssumeRole(ctx, AssumeRequest{RoleARN: withAccount(s.RoleARN, st.Account), ExternalID: s.ExternalID,
			SessionName: s.SessionName, Tags: map[string]string{"regionctl:request-id": p.RequestID}})
		if err != nil {
			return "", err
		}
		st.Creds = creds
		return "assumed " + withAccount(s.RoleARN, st.Account) + " as " + s.SessionName, nil
	case "terraform", "bootstrap":
		return r.terraform(ctx, p, s, st)
	case "register":
		return r.register(ctx, p, s)
	case "none":
		return s.Action, nil
	}
	return "", fmt.Errorf("unknown step %q", s.Name)
}

func withAccount(arn, account string) string {
	return strings.ReplaceAll(arn, "${account_id}", account)
}

func (r *Runner) account(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	acc, err := r.Cloud.EnsureAccount(ctx, AccountSpec{Name: s.Account, Email: s.Email, OU: s.OU, Tags: s.AccountTags})
	if err != nil {
		return "", err
	}
	st.Account = acc.ID
	outcome := "found " + acc.ID
	if acc.Created {
		outcome = "created " + acc.ID
	}
	if acc.Moved {
		outcome += ", moved to " + s.OU
	}
	if s.DeployRoleTrust == "" {
		return outcome, nil
	}
	trust, err := os.ReadFile(filepath.Join(r.Dir, s.DeployRoleTrust))
	if err != nil {
		return "", fmt.Errorf("reading the deploy role's trust policy (run regionctl render): %w", err)
	}
	pipelineAccount, err := r.Cloud.AssumeRole(ctx, AssumeRequest{RoleARN: withAccount(s.BootstrapRole, acc.ID), SessionName: session(p.RequestID),
		Tags: map[string]string{"regionctl:request-id": p.RequestID}})
	if err != nil {
		return "", fmt.Errorf("assuming %s to ensure %s: %w", withAccount(s.BootstrapRole, acc.ID), iam.DeployRoleName, err)
	}
	caller, err := r.Cloud.CallerAccount(ctx, Credentials{})
	if err != nil {
		return "", fmt.Errorf("finding the pipeline's own account: %w", err)
	}
	created, err := r.Cloud.EnsureRole(ctx, pipelineAccount, RoleSpec{Name: iam.DeployRoleName,
		TrustJSON: strings.ReplaceAll(string(trust), "${pipeline_account_id}", caller),
		Tags:      map[string]string{"regionctl:region": p.Region, "regionctl:request-id": p.RequestID},
		Policies:  []string{"arn:aws:iam::aws:policy/AdministratorAccess"}})
	if err != nil {
		return "", fmt.Errorf("ensuring %s in %s: %w", iam.DeployRoleName, acc.ID, err)
	}
	if created {
		outcome += ", " + iam.DeployRoleName + " created"
	}
	return outcome, nil
}

// lease is the record a run leaves next to a state object while it runs
// Terraform on it, so that another run can name it.
type lease struct {
	RequestID string    `json:"request_id"`
	Pipeline  string    `json:"pipeline"`
	Cluster   string    `json:"cluster"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Started   time.Time `json:"started"`
}

func (l lease) String() string {
	return fmt.Sprintf("regionctl run %s (%s pipeline, pid %d on %s, since %s)", l.RequestID, l.Pipeline, l.PID, l.Host, l.Started.UTC().Format(time.RFC3339))
}

// LockHeldError says another run holds a cluster's state.
type LockHeldError struct {
	State  string
	Holder string
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("the state %s is locked by %s; wait for it to finish (a run on another host that died needs `terraform force-unlock` and deleting %s.regionctl-run)", e.State, e.Holder, e.State)
}

func (r *Runner) terraform(ctx context.Context, p *Plan, s Step, st *clusterState) (string, error) {
	bucket, key, region := s.Backend["bucket"], s.Backend["key"], s.Backend["region"]
	created, err := r.Cloud.EnsureBucket(ctx, st.Creds, bucket, region)
	if err != nil {
		return "", fmt.Errorf("ensuring the state bucket %s: %w", bucket, err)
	}
	state := "s3://" + bucket + "/" + key
	stale, err := r.acquire(ctx, p, s, st.Creds, state)
	if err != nil {
		return "", err
	}
	defer func() {
		// Released even when the step failed or was cancelled: the lease
		// names a live run, and this one is ending.
		_ = r.Cloud.Delete(context.WithoutCancel(ctx), st.Creds, bucket, key+".regionctl-run")
	}()
	job := TerraformJob{Cluster: s.Cluster, Root: strings.TrimPrefix(s.Root, "terraform/"), VarFile: filepath.Join(r.Dir, s.VarFile),
		Backend: s.Backend, Region: region, Creds: st.Creds, Destroy: s.Command == "destroy", Log: r.Log}
	out, err := r.Terraform.Run(ctx, job)
	var locked *LockedError
	if errors.As(err, &locked) {
		if !stale {
			return "", &LockHeldError{State: state, Holder: "a Terraform run outside regionctl (lock ID " + locked.ID + ")"}
		}
		// The lock belongs to a run of this host that was killed: release it.
		if err := r.Terraform.ForceUnlock(ctx, job, locked.ID); err != nil {
			return "", fmt.Errorf("releasing the lock %s of a killed run: %w", locked.ID, err)
		}
		out, err = r.Terraform.Run(ctx, job)
	}
	if err != nil {
		return "", err
	}
	st.Outputs = out
	outcome := s.Command + " of " + s.Root + " done"
	if created {
		outcome += "; state bucket " + bucket + " created"
	}
	if stale {
		outcome += "; took over from a killed run"
	}
	return outcome, nil
}

// acquire takes the run lease of a state object. A lease left by a run of
// this host whose process is gone is taken over (stale is true).
func (r *Runner) acquire(ctx context.Context, p *Plan, s Step, creds Credentials, state string) (stale bool, err error) {
	bucket, key := s.Backend["bucket"], s.Backend["key"]+".regionctl-run"
	mine, _ := json.Marshal(lease{RequestID: p.RequestID, Pipeline: p.Pipeline, Cluster: s.Cluster, Host: r.Host, PID: r.PID, Started: r.now()})
	for attempt := 0; attempt < 2; attempt++ {
		err := r.Cloud.PutIfAbsent(ctx, creds, bucket, key, mine)
		if err == nil {
			return stale, nil
		}
		if !errors.Is(err, ErrExists) {
			return false, fmt.Errorf("taking the run lease %s: %w", state, err)
		}
		body, err := r.Cloud.Get(ctx, creds, bucket, key)
		if errors.Is(err, ErrNotFound) {
			continue // released between the two calls
		}
		if err != nil {
			return false, fmt.Errorf("reading the run lease of %s: %w", state, err)
		}
		var held lease
		if json.Unmarshal(body, &held) != nil {
			return false, &LockHeldError{State: state, Holder: "an unreadable lease " + key}
		}
		if held.Host != r.Host || r.Alive == nil || r.Alive(held.PID) {
			return false, &LockHeldError{State: state, Holder: held.String()}
		}
		if err := r.Cloud.Delete(ctx, creds, bucket, key); err != nil {
			return false, err
		}
		stale = true
	}
	return false, &LockHeldError{State: state, Holder: "a run that took it while this one was taking over"}
}

func (r *Runner) register(ctx context.Context, p *Plan, s Step) (string, error) {
	endpoint := s.Endpoint
	if endpoint == "" {
		var err error
		if endpoint, err = r.endpointFromState(ctx, s.EndpointState); err != nil {
			return "", err
		}
	}
	name := s.Cluster[strings.LastIndex(s.Cluster, "/")+1:]
	outcome, err := r.Registry.Register(ctx, Registration{Endpoint: endpoint, Name: name, Labels: s.Labels, Region: p.Region, RequestID: p.RequestID})
	if err != nil {
		return "", err
	}
	return outcome + " at " + endpoint, nil
}

// endpointFromState reads platform_api_endpoint from the regional
// cluster's Terraform state object.
func (r *Runner) endpointFromState(ctx context.Context, b map[string]string) (string, error) {
	where := "s3://" + b["bucket"] + "/" + b["key"]
	body, err := r.Cloud.Get(ctx, Credentials{}, b["bucket"], b["key"])
	if err != nil {
		return "", fmt.Errorf("reading the platform API endpoint from the regional cluster's state %s (run the central pipeline first, or pass --api-endpoint): %w", where, err)
	}
	var state struct {
		Outputs map[string]struct {
			Value any `json:"value"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(body, &state); err != nil {
		return "", fmt.Errorf("reading %s: %w", where, err)
	}
	v, ok := state.Outputs["platform_api_endpoint"].Value.(string)
	if !ok || v == "" {
		return "", fmt.Errorf("the regional cluster's state %s has no platform_api_endpoint output; pass --api-endpoint", where)
	}
	return v, nil
}

func (r *Runner) emit(e Event) {
	if r.Events != nil {
		r.Events(e)
	}
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
