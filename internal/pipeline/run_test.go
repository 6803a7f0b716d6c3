package pipeline_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// fakeCloud is an in-memory AWS: accounts by name, the handoff parameter,
// objects by bucket/key, and the deploy roles AWS CloudFormation has not
// deployed yet. The runner's own identity is the regional pipeline of
// account 999999999999.
type fakeCloud struct {
	mu       sync.Mutex
	calls    []string
	accounts map[string]string
	objects  map[string][]byte
	params   map[string]string
	tags     map[string]map[string]string
	// deployRoleIn is how many more times assuming a deploy role is
	// denied before it is there (-1: never).
	deployRoleIn int
	// tasks are the bootstrap tasks started; taskExit is the exit code
	// they stop with (nil: stopped before the container ran), after
	// taskPolls descriptions.
	tasks     []pipeline.TaskRun
	taskCreds []string
	taskExit  *int
	taskPolls int
	described int
}

func (c *fakeCloud) RunTask(_ context.Context, creds pipeline.Credentials, run pipeline.TaskRun) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log("run task %s in %s as %s", run.TaskDefinition, run.Cluster, who(creds))
	c.tasks = append(c.tasks, run)
	c.taskCreds = append(c.taskCreds, who(creds))
	return fmt.Sprintf("arn:aws:ecs:%s:1:task/%s/t%d", run.Region, run.Cluster, len(c.tasks)), nil
}

func (c *fakeCloud) DescribeTask(_ context.Context, _ pipeline.Credentials, _, _, _ string) (pipeline.TaskStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.described++
	if c.described <= c.taskPolls {
		return pipeline.TaskStatus{LastStatus: "RUNNING"}, nil
	}
	return pipeline.TaskStatus{LastStatus: "STOPPED", ExitCode: c.taskExit, Reason: "Essential container in task exited"}, nil
}

func (c *fakeCloud) FindAccount(_ context.Context, _ pipeline.Credentials, name string) (string, map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.accounts[name]
	return id, c.tags[id], nil
}

func (c *fakeCloud) TagAccount(_ context.Context, creds pipeline.Credentials, id string, tags map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log("tag %s %v as %s", id, tags, who(creds))
	if c.tags[id] == nil {
		c.tags[id] = map[string]string{}
	}
	for k, v := range tags {
		c.tags[id][k] = v
	}
	return nil
}

func newCloud() *fakeCloud {
	return &fakeCloud{taskExit: new(int), accounts: map[string]string{}, objects: map[string][]byte{}, tags: map[string]map[string]string{},
		params: map[string]string{"/regionctl/regional-pipeline/eu-west-1": `{"region":"eu-west-1","management_account_id":"000000000001","minting_role_arn":"arn:aws:iam::000000000001:role/regionctl-minting-eu-west-1","organization_id":"o-1","management_ou_id":"ou-1"}`,
			"/regionctl/regional-pipeline/ap-northeast-1": `{"region":"ap-northeast-1","management_account_id":"000000000001","minting_role_arn":"arn:aws:iam::000000000001:role/regionctl-minting-ap-northeast-1"}`}}
}

func (c *fakeCloud) log(format string, args ...any) {
	c.calls = append(c.calls, fmt.Sprintf(format, args...))
}

func (c *fakeCloud) EnsureAccount(_ context.Context, creds pipeline.Credentials, s pipeline.AccountSpec) (pipeline.Account, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log("account %s as %s", s.Name, who(creds))
	if id, ok := c.accounts[s.Name]; ok {
		return pipeline.Account{ID: id, Tags: c.tags[id]}, nil
	}
	id := fmt.Sprintf("%012d", len(c.accounts)+1)
	c.accounts[s.Name] = id
	c.tags[id] = map[string]string{}
	for k, v := range s.Tags {
		c.tags[id][k] = v
	}
	return pipeline.Account{ID: id, Created: true}, nil
}

func (c *fakeCloud) EnsureGuardrailFeatures(context.Context, pipeline.Credentials) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log("guardrail features")
	return "the organisation's guardrail features were on", nil
}

func (c *fakeCloud) EnsureOU(_ context.Context, _ pipeline.Credentials, path string, create bool) (string, error) {
	return "ou-" + strings.ReplaceAll(strings.Trim(path, "/"), "/", "-"), nil
}

func (c *fakeCloud) Organization(context.Context, pipeline.Credentials) (pipeline.Org, error) {
	return pipeline.Org{ID: "o-1", RootID: "r-1", Management: "999999999999"}, nil
}

func who(creds pipeline.Credentials) string {
	if creds.AccessKeyID == "" {
		return "pipeline"
	}
	return creds.AccessKeyID
}

func (c *fakeCloud) AssumeRole(_ context.Context, r pipeline.AssumeRequest) (pipeline.Credentials, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log("assume %s %s %s as %s", r.RoleARN, r.ExternalID, r.SessionName, who(r.Base))
	if strings.HasSuffix(r.RoleARN, ":role/ManagementClusterDeployRole") && c.deployRoleIn != 0 {
		if c.deployRoleIn > 0 {
			c.deployRoleIn--
		}
		return pipeline.Credentials{}, fmt.Errorf("%w: no role %s exists", pipeline.ErrDenied, r.RoleARN)
	}
	return pipeline.Credentials{AccessKeyID: "AK-" + r.RoleARN}, nil
}

func (c *fakeCloud) Caller(_ context.Context, creds pipeline.Credentials) (pipeline.Identity, error) {
	if creds.AccessKeyID == "" {
		return pipeline.Identity{Account: "999999999999", ARN: "arn:aws:sts::999999999999:assumed-role/regional-pipeline-eu-west-1/tekton"}, nil
	}
	arn := strings.TrimPrefix(creds.AccessKeyID, "AK-")
	return pipeline.Identity{Account: strings.Split(arn, ":")[4], ARN: arn}, nil
}

func (c *fakeCloud) Parameter(_ context.Context, _ pipeline.Credentials, name string) (string, error) {
	if v, ok := c.params[name]; ok {
		return v, nil
	}
	return "", pipeline.ErrNotFound
}

func (c *fakeCloud) EnsureBucket(_ context.Context, _ pipeline.Credentials, b, _, owner string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log("bucket %s of %s", b, owner)
	return false, nil
}

func (c *fakeCloud) CheckBucket(_ context.Context, _ pipeline.Credentials, b, owner string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log("bucket %s of %s", b, owner)
	return nil
}

func (c *fakeCloud) PutIfAbsent(_ context.Context, _ pipeline.Credentials, o pipeline.Object, body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.objects[o.Bucket+"/"+o.Key]; ok {
		return pipeline.ErrExists
	}
	c.objects[o.Bucket+"/"+o.Key] = body
	return nil
}

func (c *fakeCloud) Put(_ context.Context, _ pipeline.Credentials, o pipeline.Object, body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objects[o.Bucket+"/"+o.Key] = body
	return nil
}

func (c *fakeCloud) Get(_ context.Context, _ pipeline.Credentials, o pipeline.Object) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if body, ok := c.objects[o.Bucket+"/"+o.Key]; ok {
		return body, nil
	}
	return nil, pipeline.ErrNotFound
}

// etag is content-based, as S3's is for a single-part upload.
func etag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

func (c *fakeCloud) GetVersion(_ context.Context, _ pipeline.Credentials, o pipeline.Object) ([]byte, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if body, ok := c.objects[o.Bucket+"/"+o.Key]; ok {
		return body, etag(body), nil
	}
	return nil, "", pipeline.ErrNotFound
}

func (c *fakeCloud) PutIfMatch(_ context.Context, _ pipeline.Credentials, o pipeline.Object, body []byte, tag string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.objects[o.Bucket+"/"+o.Key]
	switch {
	case !ok:
		return "", pipeline.ErrNotFound
	case etag(old) != tag:
		return "", pipeline.ErrChanged
	}
	c.objects[o.Bucket+"/"+o.Key] = body
	return etag(body), nil
}

func (c *fakeCloud) DeleteIfMatch(_ context.Context, _ pipeline.Credentials, o pipeline.Object, tag string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.objects[o.Bucket+"/"+o.Key]
	switch {
	case !ok:
		return pipeline.ErrNotFound
	case etag(old) != tag:
		return pipeline.ErrChanged
	}
	delete(c.objects, o.Bucket+"/"+o.Key)
	return nil
}

func (c *fakeCloud) Delete(_ context.Context, _ pipeline.Credentials, o pipeline.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, o.Bucket+"/"+o.Key)
	return nil
}

// fakeTerraform records jobs; locked makes the next Run find a lock.
type fakeTerraform struct {
	during   func(ctx context.Context) error // runs inside Run, as Terraform's apply would; its error fails the apply
	mu       sync.Mutex
	fail     string // a cluster whose apply fails
	jobs     []pipeline.TerraformJob
	locked   string
	unlocked []string
	// plan is what Plan proposes; stale makes an apply of a saved plan
	// fail as Terraform's does when the state changed.
	plan  []pipeline.ResourceChange
	stale bool
	plans []pipeline.TerraformJob
	// outputs replace the root's outputs when set.
	outputs map[string]string
}

func (f *fakeTerraform) Plan(_ context.Context, j pipeline.TerraformJob) (*pipeline.PlanResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans = append(f.plans, j)
	id, _ := f.InputID(j)
	return &pipeline.PlanResult{File: []byte("plan of " + j.Cluster + " " + id), Summary: pipeline.PlanSummary{ID: id, Resources: append([]pipeline.ResourceChange(nil), f.plan...)}}, nil
}

// InputID is the job's variables and command: what the fake's plans are
// made from.
func (f *fakeTerraform) InputID(j pipeline.TerraformJob) (string, error) {
	keys := make([]string, 0, len(j.Vars))
	for k := range j.Vars {
		if k != "assume_role_session_name" {
			keys = append(keys, k+"="+j.Vars[k])
		}
	}
	sort.Strings(keys)
	return fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint(j.Cluster, j.Root, j.Destroy, keys)))), nil
}

func (f *fakeTerraform) Run(ctx context.Context, j pipeline.TerraformJob) (map[string]string, error) {
	if f.during != nil {
		if err := f.during(ctx); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if j.Cluster == f.fail {
		return nil, errors.New("terraform apply: exit status 1")
	}
	if j.SavedPlan != nil && f.stale {
		return nil, fmt.Errorf("terraform apply: %w: Saved plan is stale", pipeline.ErrStalePlan)
	}
	if f.locked != "" {
		return nil, &pipeline.LockedError{ID: f.locked, Err: errors.New("Error acquiring the state lock")}
	}
	f.jobs = append(f.jobs, j)
	if f.outputs != nil {
		return f.outputs, nil
	}
	return map[string]string{"platform_api_endpoint": "https://api.test",
		"bootstrap": `{"cluster":"arn:aws:ecs:eu-west-1:1:cluster/boot","task_definition":"arn:aws:ecs:eu-west-1:1:task-definition/boot:1","subnets":["subnet-1","subnet-2"],"security_group":"sg-1"}`}, nil
}

func (f *fakeTerraform) ForceUnlock(_ context.Context, _ pipeline.TerraformJob, id string) error {
	f.unlocked = append(f.unlocked, id)
	f.locked = ""
	return nil
}

type fakeRegistry struct {
	mu   sync.Mutex
	regs []pipeline.Registration
}

func (f *fakeRegistry) Register(_ context.Context, r pipeline.Registration) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.regs = append(f.regs, r)
	return "created", nil
}

func runner(c *fakeCloud, tf *fakeTerraform, reg *fakeRegistry) *pipeline.Runner {
	return &pipeline.Runner{Cloud: c, Terraform: tf, Registry: reg, Dir: "../..", Host: "h", PID: 100, Process: "boot-1 pid:[4026531836]",
		Alive: func(pid int) bool { return pid == 100 || pid == 200 }, Now: func() time.Time { return time.Unix(0, 0) },
		Tree: func() error { return nil }}
}

// TestRunRefusesADriftedTree: a run whose deploy/ is not what its config
// renders, or that nothing checked, makes no call and applies nothing.
func TestRunRefusesADriftedTree(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req9")
	if err != nil {
		t.Fatal(err)
	}
	for what, tree := range map[string]func() error{
		"drifted":   func() error { return errors.New("deploy/ is not what the config renders") },
		"unchecked": nil,
	} {
		c, tf, reg := newCloud(), &fakeTerraform{}, &fakeRegistry{}
		r := runner(c, tf, reg)
		r.Tree = tree
		_, err := r.Run(context.Background(), p)
		var drift *pipeline.DriftError
		if !errors.As(err, &drift) || len(c.calls) != 0 || len(tf.jobs) != 0 || len(reg.regs) != 0 {
			t.Errorf("%s: %v; %d calls, %d Terraform jobs, %d registrations", what, err, len(c.calls), len(tf.jobs), len(reg.regs))
		}
	}
}

func TestRunRegionalInOrder(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req9")
	if err != nil {
		t.Fatal(err)
	}
	c, tf, reg := newCloud(), &fakeTerraform{}, &fakeRegistry{}
	var events []string
	r := runner(c, tf, reg)
	r.Events = func(e pipeline.Event) { events = append(events, e.Step+":"+e.Status) }
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	minting := "AK-arn:aws:iam::000000000001:role/regionctl-minting-eu-west-1"
	want := []string{
		"assume arn:aws:iam::000000000001:role/regionctl-minting-eu-west-1 regional-pipeline-eu-west-1 regionctl-req9 as pipeline",
		"account staging-eu-west-1-mc01 as " + minting,
		// Placed: no regional principal moves it again.
		"tag 000000000001 map[regionctl:environment:staging regionctl:region:eu-west-1 regionctl:sealed:true] as " + minting,
		// The deploy role AWS CloudFormation deployed there, waited for.
		"assume arn:aws:iam::000000000001:role/ManagementClusterDeployRole regional-pipeline-eu-west-1 regionctl-req9 as pipeline",
		"assume arn:aws:iam::000000000001:role/ManagementClusterDeployRole regional-pipeline-eu-west-1 regionctl-req9 as pipeline",
		"bucket regionctl-regional-pipeline-eu-west-1 of 999999999999",
		// The bootstrap task is started as the deploy role, again with
		// the region's ExternalId.
		"assume arn:aws:iam::000000000001:role/ManagementClusterDeployRole regional-pipeline-eu-west-1 regionctl-req9 as pipeline",
		"run task arn:aws:ecs:eu-west-1:1:task-definition/boot:1 in arn:aws:ecs:eu-west-1:1:cluster/boot as AK-arn:aws:iam::000000000001:role/ManagementClusterDeployRole",
	}
	if strings.Join(c.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(c.calls, "\n"), strings.Join(want, "\n"))
	}
	for _, call := range c.calls {
		if strings.Contains(call, "OrganizationAccountAccessRole") {
			t.Errorf("the regional pipeline reached an administrator role: %s", call)
		}
	}
	if len(tf.jobs) != 1 || tf.jobs[0].Vars["assume_role_arn"] != "arn:aws:iam::000000000001:role/ManagementClusterDeployRole" ||
		tf.jobs[0].Vars["account_id"] != "000000000001" || tf.jobs[0].Vars["assume_role_external_id"] != "regional-pipeline-eu-west-1" ||
		tf.jobs[0].Root != "management-cluster" || tf.jobs[0].Destroy {
		t.Errorf("terraform jobs %+v", tf.jobs)
	}
	if len(reg.regs) != 1 || reg.regs[0].Endpoint != "https://api.flag" || reg.regs[0].Name != "mc01" || reg.regs[0].RequestID != "req9" {
		t.Errorf("registrations %+v", reg.regs)
	}
	if got := strings.Join(events, " "); got != "account:start account:ok assume-role:start assume-role:ok terraform:start terraform:ok argocd:start argocd:ok register:start register:ok" {
		t.Errorf("events %s", got)
	}
	if len(c.objects) != 0 {
		t.Errorf("leases left: %v", c.objects)
	}
	// A second run finds the account sealed and leaves its deploy role be.
	c.calls = nil
	if _, err := runner(c, tf, reg).Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.calls, "\n"); strings.Contains(got, "role ManagementClusterDeployRole") || strings.Contains(got, "seal") || strings.Contains(got, "OrganizationAccountAccessRole") {
		t.Errorf("a sealed account was bootstrapped again:\n%s", got)
	}
}

func TestLeaseOfALiveRunRefuses(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c, tf := newCloud(), &fakeTerraform{}
	c.objects["regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"] = []byte(`{"request_id":"other","pipeline":"regional","host":"h","pid":200}`)
	_, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), "locked by regionctl run other (regional pipeline, pid 200 on h") {
		t.Fatalf("%v", err)
	}
	if len(tf.jobs) != 0 {
		t.Error("terraform ran under another run's lease")
	}
}

// TestLeaseOfAKilledRunIsTakenOver: a lease whose process is gone from
// this very process space (the same boot and PID namespace) is a killed
// run's, and is taken over at once.
func TestLeaseOfAKilledRunIsTakenOver(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c, tf := newCloud(), &fakeTerraform{locked: "lock-1"}
	c.objects["regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"] = []byte(`{"run":"r-dead","process":"boot-1 pid:[4026531836]","request_id":"dead","host":"h","pid":300}`)
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(tf.unlocked) != 1 || tf.unlocked[0] != "lock-1" || len(tf.jobs) != 1 {
		t.Errorf("unlocked %v, jobs %d", tf.unlocked, len(tf.jobs))
	}
}

// TestRunsSharingAHostnameKeepTheirLeases: containers on two machines can
// share a hostname and a PID. A live lease of another process space, or of
// another run with this run's host, PID and request id, is never taken for
// this run's nor for a killed one's.
func TestRunsSharingAHostnameKeepTheirLeases(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	key := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"
	for name, held := range map[string]string{
		"another machine's container, same hostname": `{"run":"r-other","process":"boot-2 pid:[4026531836]","request_id":"other","host":"h","pid":300,"expires":"2999-01-01T00:00:00Z"}`,
		"a lease that names no process space":        `{"run":"r-other","request_id":"other","host":"h","pid":300,"expires":"2999-01-01T00:00:00Z"}`,
		"the same host, PID and request id":          `{"run":"r-other","process":"boot-2 pid:[4026531836]","request_id":"req","host":"h","pid":100,"expires":"2999-01-01T00:00:00Z"}`,
	} {
		c, tf := newCloud(), &fakeTerraform{locked: "lock-1"}
		c.objects[key] = []byte(held)
		_, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p)
		var lock *pipeline.LockHeldError
		if !errors.As(err, &lock) || len(tf.unlocked) != 0 || len(tf.jobs) != 0 || string(c.objects[key]) != held {
			t.Errorf("%s: %v; unlocked %v, %d jobs", name, err, tf.unlocked, len(tf.jobs))
		}
	}
}

// failingLeaseCloud fails every renewal of a run lease (after the first
// write), as a store that stopped answering would.
type failingLeaseCloud struct{ *fakeCloud }

func (c *failingLeaseCloud) PutIfMatch(ctx context.Context, creds pipeline.Credentials, o pipeline.Object, body []byte, tag string) (string, error) {
	if strings.HasSuffix(o.Key, ".regionctl-run") {
		return "", errors.New("503 SlowDown")
	}
	return c.fakeCloud.PutIfMatch(ctx, creds, o, body, tag)
}

// TestRunThatCannotRenewItsLeaseStopsBeforeItExpires: when every renewal
// fails, the run stops its work before the lease it wrote expires, so that
// no other run can take the lease over while it still applies.
func TestRunThatCannotRenewItsLeaseStopsBeforeItExpires(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c := newCloud()
	key := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"
	var stopped time.Time
	var expires struct{ Expires time.Time }
	tf := &fakeTerraform{during: func(ctx context.Context) error {
		c.mu.Lock()
		_ = json.Unmarshal(c.objects[key], &expires)
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			stopped = time.Now()
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return nil
		}
	}}
	r := runner(c, tf, &fakeRegistry{})
	r.Cloud = &failingLeaseCloud{c}
	r.Now, r.LeaseTTL = time.Now, 900*time.Millisecond
	_, err := r.Run(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "could not be renewed, and expires at") || !strings.Contains(err.Error(), "503 SlowDown") {
		t.Fatalf("%v", err)
	}
	if stopped.IsZero() || !stopped.Before(expires.Expires) {
		t.Errorf("the run stopped at %s, its lease expired at %s", stopped.Format(time.StampMilli), expires.Expires.Format(time.StampMilli))
	}
	if len(tf.jobs) != 0 {
		t.Error("the apply finished")
	}
}

func TestTerraformLockWithoutALeaseIsNotBroken(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	tf := &fakeTerraform{locked: "someone"}
	_, err := runner(newCloud(), tf, &fakeRegistry{}).Run(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "a Terraform run outside regionctl (lock ID someone)") || len(tf.unlocked) != 0 {
		t.Fatalf("%v; unlocked %v", err, tf.unlocked)
	}
}

// TestStepsAcrossProcesses runs each step by itself, as the Tekton Tasks
// do, with a fresh runner each time: later steps find what earlier ones
// left in StateDir.
func TestStepsAcrossProcesses(t *testing.T) {
	f := load(t, "../..")
	c, tf, reg := newCloud(), &fakeTerraform{}, &fakeRegistry{}
	dir := t.TempDir()
	for _, step := range []string{"account", "assume-role", "terraform", "register"} {
		p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
		var kept []pipeline.Step
		for _, s := range p.Steps {
			if s.Name == step {
				kept = append(kept, s)
			}
		}
		p.Steps = kept
		r := runner(c, tf, reg)
		r.StateDir = dir
		if _, err := r.Run(context.Background(), p); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	if len(tf.jobs) != 1 || !strings.HasSuffix(tf.jobs[0].Vars["assume_role_arn"], ":role/ManagementClusterDeployRole") {
		t.Errorf("terraform ran with %+v", tf.jobs)
	}
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "", "req")
	p.Steps = p.Steps[1:2] // assume-role alone, with no state
	if _, err := runner(c, tf, reg).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "the account step did not run") {
		t.Errorf("assume-role without an account: %v", err)
	}
	p, _ = pipeline.Regional(f, "eu-west-1", "mc01", "", "req")
	p.Steps = p.Steps[2:3] // terraform alone, with no assumed role
	r := runner(c, tf, reg)
	r.StateDir = t.TempDir()
	if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "Terraform never runs in a cluster account with the pipeline's own identity") {
		t.Errorf("terraform without an assumed role: %v", err)
	}
}

// TestEndpointFromTheHandoff: without --api-endpoint, the regional
// pipeline registers with the platform API the central pipeline's handoff
// names; it reads nothing of the central pipeline's state.
func TestEndpointFromTheHandoff(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "", "req")
	c, reg := newCloud(), &fakeRegistry{}
	p.Steps = append(p.Steps[:1], p.Steps[4:]...) // account, then register
	// The regional cluster's state names another endpoint: it is not read.
	c.objects["regionctl-tfstate-eu-west-1-regional/regional-cluster/eu-west-1/regional.tfstate"] = []byte(`{"outputs":{"platform_api_endpoint":{"value":"https://from-state"}}}`)
	if _, err := runner(c, &fakeTerraform{}, reg).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "names no platform API endpoint: the regional root serves the API only once its zone is delegated") {
		t.Fatalf("a handoff without an endpoint: %v", err)
	}
	c.params["/regionctl/regional-pipeline/eu-west-1"] = strings.Replace(c.params["/regionctl/regional-pipeline/eu-west-1"], `"management_ou_id":"ou-1"`, `"management_ou_id":"ou-1","platform_api_endpoint":"https://from-handoff"`, 1)
	if _, err := runner(c, &fakeTerraform{}, reg).Run(context.Background(), p); err != nil || reg.regs[0].Endpoint != "https://from-handoff" {
		t.Fatalf("%v %+v", err, reg.regs)
	}
}

func TestDeletedClusterIsDestroyedNotRegistered(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "ap-northeast-1", "mc02", "https://api.flag", "req")
	if err != nil {
		t.Fatal(err)
	}
	tf, reg := &fakeTerraform{}, &fakeRegistry{}
	c := newCloud()
	approved(t, c, tf, p)
	if _, err := runner(c, tf, reg).Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(tf.jobs) != 1 || !tf.jobs[0].Destroy || len(reg.regs) != 0 {
		t.Errorf("jobs %+v, registrations %+v", tf.jobs, reg.regs)
	}
}

// TestDeletePipelineWaitsForARecordedDestroy: a destroy records its
// completion next to the state, an apply that brings the cluster back
// removes the record, and delete_pipeline is refused until one exists.
func TestDeletePipelineWaitsForARecordedDestroy(t *testing.T) {
	f := load(t, "../..")
	destroy, err := pipeline.Regional(f, "ap-northeast-1", "mc02", "https://api.flag", "req-destroy")
	if err != nil {
		t.Fatal(err)
	}
	c := newCloud()
	approved(t, c, &fakeTerraform{}, destroy)
	if _, err := runner(c, &fakeTerraform{}, &fakeRegistry{}).Run(context.Background(), destroy); err != nil {
		t.Fatal(err)
	}
	record := "regionctl-regional-pipeline-ap-northeast-1/management-cluster/ap-northeast-1/mc02.tfstate.regionctl-destroyed"
	if !strings.Contains(string(c.objects[record]), `"request_id":"req-destroy"`) {
		t.Fatalf("no destroy record at %s: %v", record, c.objects)
	}

	// delete_pipeline of a cluster no run destroyed is refused, and names
	// what to do; with its record, it passes.
	g := load(t, "../../golden/deletions")
	last, err := pipeline.Regional(g, "eu-central-1", "mc03", "", "req-last")
	if err != nil {
		t.Fatal(err)
	}
	c = newCloud()
	_, err = runner(c, &fakeTerraform{}, &fakeRegistry{}).Run(context.Background(), last)
	if err == nil || !strings.Contains(err.Error(), "refusing delete_pipeline of eu-central-1/mc03") || !strings.Contains(err.Error(), "set delete: true without delete_pipeline") {
		t.Fatalf("delete_pipeline without a recorded destroy: %v", err)
	}
	mc03 := "regionctl-regional-pipeline-eu-central-1/management-cluster/eu-central-1/mc03.tfstate.regionctl-destroyed"
	c.objects[mc03] = []byte(`{"request_id":"req-old","at":"2026-11-01T00:00:00Z"}`)
	// The record is not enough while the state still holds resources (an
	// apply outside regionctl since, say).
	mc03State := "regionctl-regional-pipeline-eu-central-1/management-cluster/eu-central-1/mc03.tfstate"
	c.objects[mc03State] = []byte(`{"version":4,"resources":[{"mode":"data","type":"aws_partition","name":"current","instances":[{}]},
		{"module":"module.cluster.module.vpc","mode":"managed","type":"aws_subnet","name":"private","instances":[{},{}]}]}`)
	_, err = runner(c, &fakeTerraform{}, &fakeRegistry{}).Run(context.Background(), last)
	if err == nil || !strings.Contains(err.Error(), "still holds 2 resources (module.cluster.module.vpc.aws_subnet.private, module.cluster.module.vpc.aws_subnet.private)") {
		t.Fatalf("delete_pipeline with resources left in the state: %v", err)
	}
	c.objects[mc03State] = []byte(`{"version":4,"resources":[{"mode":"data","type":"aws_partition","name":"current","instances":[{}]}]}`)
	if _, err := runner(c, &fakeTerraform{}, &fakeRegistry{}).Run(context.Background(), last); err != nil {
		t.Errorf("delete_pipeline after a recorded destroy: %v", err)
	}

	// An apply of a cluster brought back removes its record.
	c = newCloud()
	apply, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req-apply")
	if err != nil {
		t.Fatal(err)
	}
	stale := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-destroyed"
	c.objects[stale] = []byte(`{"request_id":"req-old"}`)
	if _, err := runner(c, &fakeTerraform{}, &fakeRegistry{}).Run(context.Background(), apply); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.objects[stale]; ok {
		t.Error("an apply left the destroy record of a cluster it brought back")
	}
}

func TestParallelClustersFailIndependently(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "eu-west-1", "", "https://api.flag", "req")
	if err != nil {
		t.Fatal(err)
	}
	tf, reg := &fakeTerraform{fail: "eu-west-1/mc01"}, &fakeRegistry{}
	r := runner(newCloud(), tf, reg)
	r.Parallel = 2
	var mu sync.Mutex
	ended := map[string]string{}
	r.Events = func(e pipeline.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Status != "start" {
			ended[e.Cluster+" "+e.Step] = e.Status
		}
	}
	results, err := r.Run(context.Background(), p)
	var se *pipeline.StepError
	if !errors.As(err, &se) || se.Cluster != "eu-west-1/mc01" || se.Step != "terraform" {
		t.Fatalf("error %v", err)
	}
	if len(reg.regs) != 1 || reg.regs[0].Name != "mc02" || ended["eu-west-1/mc02 register"] != "ok" || ended["eu-west-1/mc01 terraform"] != "failed" {
		t.Errorf("registrations %+v, events %v", reg.regs, ended)
	}
	if len(results) != 7 { // mc01: account, assume-role; mc02: all five
		t.Errorf("%d results", len(results))
	}
	// One at a time, the run stops at mc01's failure and mc02 never starts.
	reg2 := &fakeRegistry{}
	if _, err := runner(newCloud(), &fakeTerraform{fail: "eu-west-1/mc01"}, reg2).Run(context.Background(), p); err == nil || len(reg2.regs) != 0 {
		t.Errorf("sequential: %v, %+v", err, reg2.regs)
	}
}

// TestDeployRoleIsWaitedForBounded: the account step waits for AWS
// CloudFormation to deploy the deploy role into a new account, and gives
// up after DeployRoleWait naming the StackSet, rather than waiting forever.
func TestDeployRoleIsWaitedForBounded(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api", "req")
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = p.Steps[:1]
	c := newCloud()
	c.deployRoleIn = 3
	r := runner(c, &fakeTerraform{}, &fakeRegistry{})
	clock := time.Unix(0, 0)
	r.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	r.Poll, r.DeployRoleWait = time.Millisecond, time.Minute
	results, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := results[0].Outcome; !strings.Contains(got, "ManagementClusterDeployRole deployed by regionctl-deploy-role-eu-west-1 after") {
		t.Errorf("outcome %q", got)
	}
	c = newCloud()
	c.deployRoleIn = -1
	r = runner(c, &fakeTerraform{}, &fakeRegistry{})
	r.Now = func() time.Time { clock = clock.Add(10 * time.Second); return clock }
	r.Poll, r.DeployRoleWait = time.Millisecond, time.Minute
	if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "cannot be assumed 1m0s after the account was placed") ||
		!strings.Contains(err.Error(), "StackSet regionctl-deploy-role-eu-west-1") {
		t.Errorf("a deploy role that never comes: %v", err)
	}
	if n := strings.Count(strings.Join(c.calls, "\n"), "role/ManagementClusterDeployRole"); n < 2 || n > 10 {
		t.Errorf("%d attempts in a minute of 10 s polls", n)
	}
}

// TestExpiredLeaseIsTakenOverFromAnyHost: a run whose heartbeat stopped
// (its pod died on another node) leaves a lease that expires; a retried
// pod takes it over and releases the Terraform lock the dead run left.
func TestExpiredLeaseIsTakenOverFromAnyHost(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c, tf := newCloud(), &fakeTerraform{locked: "lock-9"}
	key := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"
	c.objects[key] = []byte(`{"request_id":"dead-pod","host":"node-7","pid":1,"expires":"1969-12-31T23:59:00Z"}`)
	out, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tf.unlocked) != 1 || tf.unlocked[0] != "lock-9" || !strings.Contains(out[2].Outcome, "took over from a killed run") {
		t.Errorf("unlocked %v, outcome %q", tf.unlocked, out[2].Outcome)
	}
	// A live lease of another host is waited for, up to LeaseWait, then
	// refused naming its holder and expiry.
	c.objects[key] = []byte(`{"request_id":"live","host":"node-8","pid":1,"expires":"2999-01-01T00:00:00Z"}`)
	r := runner(c, &fakeTerraform{}, &fakeRegistry{})
	r.Now, r.LeaseWait = time.Now, 50*time.Millisecond
	start := time.Now()
	if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "locked by regionctl run live") || !strings.Contains(err.Error(), "lease until 2999-01-01") || time.Since(start) < 50*time.Millisecond {
		t.Errorf("a live lease: %v after %s", err, time.Since(start))
	}
}

// TestHeartbeatKeepsTheLeaseAlive: while Terraform runs, the lease's expiry
// moves forward, so a long apply is never taken for dead.
func TestHeartbeatKeepsTheLeaseAlive(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c := newCloud()
	key := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"
	var seen []time.Time
	tf := &fakeTerraform{during: func(context.Context) error {
		for i := 0; i < 4; i++ {
			time.Sleep(40 * time.Millisecond)
			c.mu.Lock()
			var l struct{ Expires time.Time }
			_ = json.Unmarshal(c.objects[key], &l)
			c.mu.Unlock()
			seen = append(seen, l.Expires)
		}
		return nil
	}}
	r := runner(c, tf, &fakeRegistry{})
	r.Now, r.LeaseTTL = time.Now, 60*time.Millisecond
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4 || !seen[3].After(seen[0]) {
		t.Errorf("the lease's expiry did not move: %v", seen)
	}
	if _, ok := c.objects[key]; ok {
		t.Error("the lease outlived the run")
	}
}

// racingCloud lets another run take over a dead lease between this run's
// read of it and its own take-over.
type racingCloud struct {
	*fakeCloud
	rival []byte
	raced bool
}

func (c *racingCloud) PutIfMatch(ctx context.Context, creds pipeline.Credentials, o pipeline.Object, body []byte, tag string) (string, error) {
	if !c.raced && strings.HasSuffix(o.Key, ".regionctl-run") {
		c.raced = true
		c.mu.Lock()
		c.objects[o.Bucket+"/"+o.Key] = c.rival
		c.mu.Unlock()
	}
	return c.fakeCloud.PutIfMatch(ctx, creds, o, body, tag)
}

// TestTwoRunsTakingOverOneDeadLease: when two runs find the same expired
// lease, only the first to replace it holds it; the other sees the
// winner's live lease and waits (here: is refused at once), and never
// applies.
func TestTwoRunsTakingOverOneDeadLease(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c, tf := newCloud(), &fakeTerraform{}
	key := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"
	c.objects[key] = []byte(`{"request_id":"dead-pod","host":"node-7","pid":1,"expires":"1969-12-31T23:59:00Z"}`)
	rival := []byte(`{"request_id":"rival","host":"node-9","pid":1,"expires":"2999-01-01T00:00:00Z"}`)
	r := runner(c, tf, &fakeRegistry{})
	r.Cloud = &racingCloud{fakeCloud: c, rival: rival}
	_, err := r.Run(context.Background(), p)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), "regionctl run rival") {
		t.Fatalf("%v", err)
	}
	if len(tf.jobs) != 0 {
		t.Error("terraform ran beside the run that took the lease over")
	}
	if string(c.objects[key]) != string(rival) {
		t.Errorf("the winner's lease was replaced: %s", c.objects[key])
	}
}

// TestRunThatLosesItsLeaseStops: a run whose lease another run took over
// (its heartbeat stalled past the expiry) stops its apply instead of
// applying beside the new holder, and leaves the new holder's lease alone.
func TestRunThatLosesItsLeaseStops(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	key := "regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"
	for _, rival := range []string{
		`{"run":"r-rival","request_id":"rival","host":"node-9","pid":1,"expires":"2999-01-01T00:00:00Z"}`,
		// Another machine's container with this run's hostname, PID and
		// request id (a retried pod): still another run.
		`{"run":"r-rival","process":"boot-2 pid:[4026531836]","request_id":"req","host":"h","pid":100,"expires":"2999-01-01T00:00:00Z"}`,
	} {
		c := newCloud()
		tf := &fakeTerraform{during: func(ctx context.Context) error {
			c.mu.Lock()
			c.objects[key] = []byte(rival)
			c.mu.Unlock()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Second):
				return nil
			}
		}}
		r := runner(c, tf, &fakeRegistry{})
		r.Now, r.LeaseTTL = time.Now, 60*time.Millisecond
		start := time.Now()
		_, err := r.Run(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), "was taken over by another run: stopping") || time.Since(start) > 2*time.Second {
			t.Fatalf("%v after %s", err, time.Since(start))
		}
		if len(tf.jobs) != 0 {
			t.Error("the apply finished")
		}
		if string(c.objects[key]) != rival {
			t.Errorf("the new holder's lease was removed or replaced: %q", c.objects[key])
		}
	}
}

type history map[[2]string]bool // {a, b} → a is an ancestor of b

func (h history) IsAncestor(a, b string) (bool, bool, error) {
	v, ok := h[[2]string{a, b}]
	return v, ok, nil
}

// TestOlderCommitNeverAppliesOverNewer: each apply records its commit next
// to the state; a run of an ancestor of that commit is refused, a run of a
// descendant applies and records itself.
func TestOlderCommitNeverAppliesOverNewer(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c := newCloud()
	h := history{{"old", "new"}: true, {"new", "old"}: false, {"new", "newer"}: true}
	run := func(commit string) error {
		tf := &fakeTerraform{}
		r := runner(c, tf, &fakeRegistry{})
		r.Commit, r.History = commit, h
		_, err := r.Run(context.Background(), p)
		return err
	}
	if err := run("new"); err != nil {
		t.Fatal(err)
	}
	if err := run("old"); err == nil || !strings.Contains(err.Error(), "refusing to apply old") || !strings.Contains(err.Error(), "its descendant new was applied") {
		t.Errorf("an older commit: %v", err)
	}
	if err := run("newer"); err != nil {
		t.Errorf("a newer commit: %v", err)
	}
	var rec struct{ Commit string }
	_ = json.Unmarshal(c.objects["regionctl-regional-pipeline-eu-west-1/management-cluster/eu-west-1/mc01.tfstate.regionctl-applied"], &rec)
	if rec.Commit != "newer" {
		t.Errorf("recorded %q", rec.Commit)
	}
}

// The argocd step hands the bootstrap task the rendered root Application
// as data, in the cluster's private subnets, and fails unless the task's
// container exits 0.
func TestArgoCDStepStartsTheBootstrapTask(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req9")
	if err != nil {
		t.Fatal(err)
	}
	c := newCloud()
	c.taskPolls = 2
	r := runner(c, &fakeTerraform{}, &fakeRegistry{})
	r.Poll = time.Millisecond
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	project, err := os.ReadFile("../../deploy/staging/eu-west-1/argocd/mc01/apps/project.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app, err := os.ReadFile("../../deploy/staging/eu-west-1/argocd/mc01/root.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root := "---\n" + string(project) + "---\n" + string(app)
	sum := sha256.Sum256([]byte(root))
	if len(c.tasks) != 1 || c.described != 3 {
		t.Fatalf("tasks %+v, described %d times", c.tasks, c.described)
	}
	run := c.tasks[0]
	if run.Env[pipeline.EnvRootDocuments] != root || run.Env[pipeline.EnvRootDocumentsSHA256] != hex.EncodeToString(sum[:]) ||
		run.Container != "bootstrap" || strings.Join(run.Subnets, ",") != "subnet-1,subnet-2" || strings.Join(run.SecurityGroups, ",") != "sg-1" ||
		run.Region != "eu-west-1" || run.StartedBy != "regionctl-req9" {
		t.Errorf("task run %+v", run)
	}
	for _, tc := range []struct {
		exit *int
		want string
	}{
		{exit: ptr(3), want: "failed (exit code 3; its log is in /regionctl/eu-west-1-mc01/bootstrap)"},
		{exit: nil, want: "stopped before its container ran"},
	} {
		c := newCloud()
		c.taskExit = tc.exit
		r := runner(c, &fakeTerraform{}, &fakeRegistry{})
		if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("stopped with %q: %v", tc.want, err)
		}
	}
	// A link in place of the rendered file is never followed.
	link := filepath.Join(t.TempDir(), "root.yaml")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	repo, _ := filepath.Abs("../..")
	rel, err := filepath.Rel(repo, link)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps[3].RootDocuments[1] = filepath.ToSlash(rel)
	c = newCloud()
	if _, err := runner(c, &fakeTerraform{}, &fakeRegistry{}).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "is not a regular file") || len(c.tasks) != 0 {
		t.Errorf("a link: %v, tasks %+v", err, c.tasks)
	}
	// Documents that fit raw but not as the JSON string RunTask carries:
	// every quote and line break doubles there.
	big := filepath.Join(t.TempDir(), "root.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("\"\n", 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if rel, err = filepath.Rel(repo, big); err != nil {
		t.Fatal(err)
	}
	p.Steps[3].RootDocuments[1] = filepath.ToSlash(rel)
	c = newCloud()
	if _, err := runner(c, &fakeTerraform{}, &fakeRegistry{}).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "as ECS carries them") || len(c.tasks) != 0 {
		t.Errorf("documents too large for ECS: %v, tasks %d", err, len(c.tasks))
	}
	// Without the root's outputs there is no task to start.
	p.Steps = p.Steps[3:4]
	r = runner(newCloud(), &fakeTerraform{}, &fakeRegistry{})
	r.StateDir = t.TempDir()
	if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "no bootstrap output") {
		t.Errorf("without the terraform step: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// A root of one's own without a bootstrap task says so; the step skips it
// by that word alone.
func TestArgoCDStepSkipsOnlyARootThatSaysSo(t *testing.T) {
	f := load(t, "../..")
	p, err := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req9")
	if err != nil {
		t.Fatal(err)
	}
	c := newCloud()
	var outcome string
	r := runner(c, &fakeTerraform{outputs: map[string]string{"bootstrap": `{"none":"a root of our own"}`}}, &fakeRegistry{})
	r.Events = func(e pipeline.Event) {
		if e.Step == "argocd" && e.Status != "start" {
			outcome = e.Detail
		}
	}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if outcome != "skipped: the root has no bootstrap task (a root of our own)" || len(c.tasks) != 0 {
		t.Errorf("outcome %q, tasks %+v", outcome, c.tasks)
	}
	for _, out := range []string{`{}`, `{"cluster":"c","task_definition":"t","subnets":[]}`, `null`} {
		r := runner(newCloud(), &fakeTerraform{outputs: map[string]string{"bootstrap": out}}, &fakeRegistry{})
		if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "bootstrap output") {
			t.Errorf("bootstrap output %s: %v", out, err)
		}
	}
}
