package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// fakeCloud is an in-memory AWS: accounts by name, objects by bucket/key.
type fakeCloud struct {
	mu       sync.Mutex
	calls    []string
	accounts map[string]string
	objects  map[string][]byte
}

func newCloud() *fakeCloud {
	return &fakeCloud{accounts: map[string]string{}, objects: map[string][]byte{}}
}

func (c *fakeCloud) EnsureAccount(_ context.Context, s pipeline.AccountSpec) (pipeline.Account, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "account "+s.Name)
	if id, ok := c.accounts[s.Name]; ok {
		return pipeline.Account{ID: id}, nil
	}
	id := fmt.Sprintf("%012d", len(c.accounts)+1)
	c.accounts[s.Name] = id
	return pipeline.Account{ID: id, Created: true}, nil
}

func (c *fakeCloud) AssumeRole(_ context.Context, r pipeline.AssumeRequest) (pipeline.Credentials, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "assume "+r.RoleARN+" "+r.ExternalID+" "+r.SessionName)
	return pipeline.Credentials{AccessKeyID: "AK-" + r.RoleARN}, nil
}

func (c *fakeCloud) EnsureRole(_ context.Context, creds pipeline.Credentials, s pipeline.RoleSpec) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "role "+s.Name+" as "+creds.AccessKeyID)
	if !strings.Contains(s.TrustJSON, "arn:aws:iam::999999999999:role/regional-pipeline-") {
		return false, fmt.Errorf("trust not bound to the pipeline account: %s", s.TrustJSON)
	}
	return true, nil
}

func (c *fakeCloud) CallerAccount(context.Context, pipeline.Credentials) (string, error) {
	return "999999999999", nil
}

func (c *fakeCloud) EnsureBucket(_ context.Context, _ pipeline.Credentials, b, _ string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "bucket "+b)
	return false, nil
}

func (c *fakeCloud) PutIfAbsent(_ context.Context, _ pipeline.Credentials, b, k string, body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.objects[b+"/"+k]; ok {
		return pipeline.ErrExists
	}
	c.objects[b+"/"+k] = body
	return nil
}

func (c *fakeCloud) Get(_ context.Context, _ pipeline.Credentials, b, k string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if body, ok := c.objects[b+"/"+k]; ok {
		return body, nil
	}
	return nil, pipeline.ErrNotFound
}

func (c *fakeCloud) Delete(_ context.Context, _ pipeline.Credentials, b, k string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, b+"/"+k)
	return nil
}

// fakeTerraform records jobs; locked makes the next Run find a lock.
type fakeTerraform struct {
	mu       sync.Mutex
	fail     string // a cluster whose apply fails
	jobs     []pipeline.TerraformJob
	locked   string
	unlocked []string
}

func (f *fakeTerraform) Run(_ context.Context, j pipeline.TerraformJob) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j.Cluster == f.fail {
		return nil, errors.New("terraform apply: exit status 1")
	}
	if f.locked != "" {
		return nil, &pipeline.LockedError{ID: f.locked, Err: errors.New("Error acquiring the state lock")}
	}
	f.jobs = append(f.jobs, j)
	return map[string]string{"platform_api_endpoint": "https://api.test"}, nil
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
	return &pipeline.Runner{Cloud: c, Terraform: tf, Registry: reg, Dir: "../..", Host: "h", PID: 100,
		Alive: func(pid int) bool { return pid == 100 || pid == 200 }, Now: func() time.Time { return time.Unix(0, 0) }}
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
	want := []string{
		"account staging-eu-west-1-mc01",
		"assume arn:aws:iam::000000000001:role/OrganizationAccountAccessRole  regionctl-req9",
		"role ManagementClusterDeployRole as AK-arn:aws:iam::000000000001:role/OrganizationAccountAccessRole",
		"assume arn:aws:iam::000000000001:role/ManagementClusterDeployRole regional-pipeline-eu-west-1 regionctl-req9",
		"bucket regionctl-tfstate-eu-west-1-mc01",
	}
	if strings.Join(c.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(c.calls, "\n"), strings.Join(want, "\n"))
	}
	if len(tf.jobs) != 1 || tf.jobs[0].Creds.AccessKeyID != "AK-arn:aws:iam::000000000001:role/ManagementClusterDeployRole" || tf.jobs[0].Root != "management-cluster" || tf.jobs[0].Destroy {
		t.Errorf("terraform jobs %+v", tf.jobs)
	}
	if len(reg.regs) != 1 || reg.regs[0].Endpoint != "https://api.flag" || reg.regs[0].Name != "mc01" || reg.regs[0].RequestID != "req9" {
		t.Errorf("registrations %+v", reg.regs)
	}
	if got := strings.Join(events, " "); got != "account:start account:ok assume-role:start assume-role:ok terraform:start terraform:ok register:start register:ok" {
		t.Errorf("events %s", got)
	}
	if len(c.objects) != 0 {
		t.Errorf("leases left: %v", c.objects)
	}
}

func TestLeaseOfALiveRunRefuses(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c, tf := newCloud(), &fakeTerraform{}
	c.objects["regionctl-tfstate-eu-west-1-mc01/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"] = []byte(`{"request_id":"other","pipeline":"regional","host":"h","pid":200}`)
	_, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p)
	var held *pipeline.LockHeldError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), "locked by regionctl run other (regional pipeline, pid 200 on h") {
		t.Fatalf("%v", err)
	}
	if len(tf.jobs) != 0 {
		t.Error("terraform ran under another run's lease")
	}
}

func TestLeaseOfAKilledRunIsTakenOver(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "https://api.flag", "req")
	c, tf := newCloud(), &fakeTerraform{locked: "lock-1"}
	c.objects["regionctl-tfstate-eu-west-1-mc01/management-cluster/eu-west-1/mc01.tfstate.regionctl-run"] = []byte(`{"request_id":"dead","host":"h","pid":300}`)
	if _, err := runner(c, tf, &fakeRegistry{}).Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(tf.unlocked) != 1 || tf.unlocked[0] != "lock-1" || len(tf.jobs) != 1 {
		t.Errorf("unlocked %v, jobs %d", tf.unlocked, len(tf.jobs))
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
	if len(tf.jobs) != 1 || !strings.HasSuffix(tf.jobs[0].Creds.AccessKeyID, ":role/ManagementClusterDeployRole") {
		t.Errorf("terraform ran with %+v", tf.jobs)
	}
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "", "req")
	p.Steps = p.Steps[1:2] // assume-role alone, with no state
	if _, err := runner(c, tf, reg).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "the account step did not run") {
		t.Errorf("assume-role without an account: %v", err)
	}
}

func TestEndpointFromRegionalState(t *testing.T) {
	f := load(t, "../..")
	p, _ := pipeline.Regional(f, "eu-west-1", "mc01", "", "req")
	c, reg := newCloud(), &fakeRegistry{}
	p.Steps = p.Steps[3:] // register
	if _, err := runner(c, &fakeTerraform{}, reg).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "run the central pipeline first, or pass --api-endpoint") {
		t.Fatalf("no regional state: %v", err)
	}
	c.objects["regionctl-tfstate-eu-west-1-regional/regional-cluster/eu-west-1/regional.tfstate"] = []byte(`{"outputs":{"platform_api_endpoint":{"value":"https://from-state"}}}`)
	if _, err := runner(c, &fakeTerraform{}, reg).Run(context.Background(), p); err != nil || reg.regs[0].Endpoint != "https://from-state" {
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
	if _, err := runner(newCloud(), tf, reg).Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(tf.jobs) != 1 || !tf.jobs[0].Destroy || len(reg.regs) != 0 {
		t.Errorf("jobs %+v, registrations %+v", tf.jobs, reg.regs)
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
	if len(results) != 6 { // mc01: account, assume-role; mc02: all four
		t.Errorf("%d results", len(results))
	}
	// One at a time, the run stops at mc01's failure and mc02 never starts.
	reg2 := &fakeRegistry{}
	if _, err := runner(newCloud(), &fakeTerraform{fail: "eu-west-1/mc01"}, reg2).Run(context.Background(), p); err == nil || len(reg2.regs) != 0 {
		t.Errorf("sequential: %v, %+v", err, reg2.regs)
	}
}
