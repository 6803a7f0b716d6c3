package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
)

// Each fault test breaks one step, shows the run fails with exit 3 and
// says what failed, then shows that a plain re-run completes and creates
// nothing twice: one account per name, one registration per cluster,
// one cluster resource per state.

const (
	throttled = `{"__type":"ThrottlingException","message":"Rate exceeded"}`
	internal  = `{"__type":"InternalFailure","message":"injected"}`
)

// wantOnce checks the end state of a region whose pipelines completed.
func (e *env) wantOnce(registrations int) {
	e.t.Helper()
	for n, ids := range e.accounts() {
		if len(ids) != 1 {
			e.t.Errorf("%d accounts named %s", len(ids), n)
		}
	}
	for _, c := range []string{"mc01", "mc02"} {
		if got := strings.Join(e.stateResources("regionctl-regional-pipeline-eu-west-1", "management-cluster/eu-west-1/"+c+".tfstate"), " "); got != "terraform_data.cluster" {
			e.t.Errorf("%s state holds %q", c, got)
		}
	}
	if got := len(e.api.Registered()); got != registrations {
		e.t.Errorf("%d registrations, want %d: %+v", got, registrations, e.api.Registered())
	}
}

// regional runs the regional pipeline of the test region as its pod.
func (e *env) regional(id string, args ...string) (int, string, string) {
	e.t.Helper()
	return e.regionalRun(append([]string{"pipeline", "regional", "--region", region, "--request-id", id, "--api-endpoint", e.url, "--live-wait", "2s"}, args...)...)
}

// bootstrapped is a test's environment with its region's central pipeline
// run: what every regional fault needs first.
func bootstrapped(t *testing.T) *env {
	e := setup(t)
	e.bootstrap()
	e.proxy.clear()
	return e
}

func TestFaultCreateAccountAnswerLost(t *testing.T) {
	e := bootstrapped(t)
	// AWS makes the account but the answer is lost: a retried
	// CreateAccount would make a second one.
	e.proxy.inject("CreateAccount", firstN(1, http.StatusInternalServerError, internal, true))
	code, _, stderr := e.regional("r1")
	if code != 3 || !strings.Contains(stderr, "eu-west-1/mc01 account: creating the account staging-eu-west-1-mc01") {
		t.Fatalf("exit %d", code)
	}
	if code, out, _ := e.regional("r2"); code != 0 || !strings.Contains(out, "found") {
		t.Fatalf("re-run: exit %d", code)
	}
	e.wantOnce(2)
}

func TestFaultThrottlingIsRetried(t *testing.T) {
	e := bootstrapped(t)
	e.proxy.inject("ListAccounts", firstN(2, http.StatusBadRequest, throttled, false))
	e.proxy.inject("AssumeRole", firstN(1, http.StatusServiceUnavailable, internal, false))
	if code, _, _ := e.regional("r1"); code != 0 {
		t.Fatalf("throttling and a 503 within the SDK's retries: exit %d", code)
	}
	e.wantOnce(2)
}

func TestFaultAssumeRoleFails(t *testing.T) {
	e := bootstrapped(t)
	e.proxy.inject("AssumeRole", always(http.StatusInternalServerError, internal))
	code, _, stderr := e.regional("r1")
	if code != 3 || !strings.Contains(stderr, "eu-west-1/mc01 account: assuming the region's minting role: assuming arn:aws:iam::") {
		t.Fatalf("exit %d", code)
	}
	e.proxy.clear()
	if code, _, _ := e.regional("r2"); code != 0 {
		t.Fatalf("re-run: exit %d", code)
	}
	if n := e.proxy.count("CreateAccount"); n != 2 {
		t.Errorf("the re-run called CreateAccount %d times, want 2", n)
	}
	e.wantOnce(2)
}

func TestFaultTerraformFails(t *testing.T) {
	e := bootstrapped(t)
	e.fault("management-cluster", true, 0, "")
	code, _, stderr := e.regional("r1")
	if code != 3 || !strings.Contains(stderr, "eu-west-1/mc01 terraform: terraform apply") {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(e.log("regional-eu-west-1-r1.log"), "[eu-west-1/mc01] ") || !strings.Contains(e.log("regional-eu-west-1-r1.log"), "injected terraform failure") {
		t.Error("the log does not hold Terraform's error, prefixed")
	}
	e.fault("management-cluster", false, 0, "")
	if code, _, _ := e.regional("r2"); code != 0 {
		t.Fatalf("re-run: exit %d", code)
	}
	e.wantOnce(2)
}

func TestFaultPlatformAPIDown(t *testing.T) {
	e := bootstrapped(t)
	e.api.Inject = func(*http.Request) int { return http.StatusServiceUnavailable }
	code, _, stderr := e.regional("r1")
	if code != 3 || !strings.Contains(stderr, "eu-west-1/mc01 register: the platform API at "+e.url+" is not live after 2s") {
		t.Fatalf("exit %d", code)
	}
	// Up again, but the first registration's answer is lost after the API
	// recorded it: the client retries and gets 409, which counts as
	// registered.
	e.api.Inject = nil
	lost := false
	lossy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !lost {
			lost = true
			e.api.ServeHTTP(httptest.NewRecorder(), r)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		e.api.ServeHTTP(w, r)
	}))
	defer lossy.Close()
	e.url = lossy.URL
	code, out, _ := e.regional("r2")
	if code != 0 || !strings.Contains(out, "eu-west-1/mc01         register     ok  already registered") {
		t.Fatalf("re-run: exit %d", code)
	}
	e.wantOnce(2)
}

// TestFaultKilledMidTerraform kills a run (and its terraform) while it
// applies, shows a concurrent run is refused naming the holder, then
// resumes: the killed run's lease and Terraform lock are released because
// its process is gone.
func TestFaultKilledMidTerraform(t *testing.T) {
	e := bootstrapped(t)
	marker := filepath.Join(t.TempDir(), "sleeping")
	e.fault("management-cluster", false, 120, marker)
	var out, errOut bytes.Buffer
	e.as("regional")
	first := e.start(&out, &errOut, "pipeline", "regional", "--region", region, "--cluster", "mc01", "--request-id", "killed-run", "--api-endpoint", e.url)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-first.Process.Pid, syscall.SIGKILL)
			t.Fatalf("terraform never started its apply:\n%s%s", out.String(), errOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A second run on the same cluster while the first holds it.
	code, _, stderr := e.regional("concurrent", "--cluster", "mc01")
	if code != 3 || !strings.Contains(stderr, "is locked by regionctl run killed-run (regional pipeline, pid ") {
		t.Errorf("a concurrent run: exit %d", code)
	}

	// Kill the first run and its terraform, as a cancelled CI job would.
	if err := syscall.Kill(-first.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	e.fault("management-cluster", false, 0, "")
	code, stdout, _ := e.regional("resumed")
	if code != 0 || !strings.Contains(stdout, "took over from a killed run") {
		t.Fatalf("resume: exit %d", code)
	}
	e.wantOnce(2)
}

func TestAccountCreationTimesOutThenResumes(t *testing.T) {
	e := bootstrapped(t)
	// AWS Organizations is slow today: the request stays IN_PROGRESS.
	e.proxy.inject("DescribeCreateAccountStatus", always(http.StatusOK, `{"CreateAccountStatus":{"Id":"car-slow","AccountName":"staging-eu-west-1-mc01","State":"IN_PROGRESS"}}`))
	code, _, stderr := e.regional("r1", "--account-wait", "1s")
	if code != 3 || !strings.Contains(stderr, "the account staging-eu-west-1-mc01 is still being created after 1s (request car-") {
		t.Fatalf("exit %d", code)
	}
	e.proxy.clear()
	if code, _, _ := e.regional("r2"); code != 0 {
		t.Fatalf("re-run: exit %d", code)
	}
	e.wantOnce(2)
}

// TestAccountOfAnotherClusterIsRefused: an account found by name is
// adopted only when its tags name the same region, environment and
// cluster, so a staging cluster that names a production account (or
// another region's) never takes it. One bootstrapped organisation serves
// every case: the account is made once, and each case retags it.
func TestAccountOfAnotherClusterIsRefused(t *testing.T) {
	e := bootstrapped(t)
	var account string
	for _, tt := range []struct{ key, value string }{
		{"regionctl:region", "us-east-1"},
		{"regionctl:environment", "production"},
		{"regionctl:cluster", "mc09"},
	} {
		tags := map[string]string{"regionctl:region": region, "regionctl:environment": "staging", "regionctl:cluster": "mc01"}
		tags[tt.key] = tt.value
		var list []orgtypes.Tag
		for k, v := range tags {
			list = append(list, orgtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		if account == "" {
			out, err := e.orgs().CreateAccount(context.Background(), &organizations.CreateAccountInput{AccountName: aws.String("staging-eu-west-1-mc01"), Email: aws.String("x@example.com"), Tags: list})
			if err != nil {
				t.Fatal(err)
			}
			st, err := e.orgs().DescribeCreateAccountStatus(context.Background(), &organizations.DescribeCreateAccountStatusInput{CreateAccountRequestId: out.CreateAccountStatus.Id})
			if err != nil || st.CreateAccountStatus.AccountId == nil {
				t.Fatalf("the account of another cluster: %v", err)
			}
			account = aws.ToString(st.CreateAccountStatus.AccountId)
		} else if _, err := e.orgs().TagResource(context.Background(), &organizations.TagResourceInput{ResourceId: aws.String(account), Tags: list}); err != nil {
			t.Fatal(err)
		}
		e.gate.Changed()
		e.proxy.clear()
		code, _, stderr := e.regional("r-"+tt.value, "--cluster", "mc01")
		if code != 3 || !strings.Contains(stderr, "refusing the account staging-eu-west-1-mc01") || !strings.Contains(stderr, "its tag "+tt.key+" is "+tt.value+", not ") {
			t.Fatalf("%s %s: exit %d", tt.key, tt.value, code)
		}
		for _, ar := range e.proxy.assumeRoles() {
			if !strings.HasSuffix(ar.Get("RoleArn"), ":role/regionctl-minting-eu-west-1") {
				t.Errorf("%s %s: assumed %s after the refusal", tt.key, tt.value, ar.Get("RoleArn"))
			}
		}
	}
}

// TestDriftedTreeIsRefused: a pipeline applies only what the config of its
// commit renders. A hand-edited file of deploy/ (here, who the deploy role
// trusts) stops both pipelines before they make a single AWS call.
func TestDriftedTreeIsRefused(t *testing.T) {
	e := setup(t)
	file := filepath.Join(e.root, "deploy/staging/eu-west-1/iam/management-cluster-deploy-role-trust.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "regional-pipeline-eu-west-1\"", "regional-pipeline-us-east-1\"", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	e.proxy.clear()
	before := e.gate.Ledger().Len()
	code, _, stderr := e.central("drifted")
	if code != 1 || !strings.Contains(stderr, "staging/eu-west-1/iam/management-cluster-deploy-role-trust.json") || !strings.Contains(stderr, "refusing to run") {
		t.Fatalf("central from a drifted tree: exit %d", code)
	}
	e.regionalAccount = "000000000000" // no account yet: the regional pipeline's pod holds a role that does not exist
	if code, _, stderr = e.regional("drifted"); code != 1 || !strings.Contains(stderr, "refusing to run") {
		t.Fatalf("regional from a drifted tree: exit %d", code)
	}
	if n := len(e.proxy.calls); n != 0 || e.gate.Ledger().Len() != before {
		t.Errorf("%d AWS calls, %d gate decisions from a drifted tree", n, e.gate.Ledger().Len()-before)
	}
}
