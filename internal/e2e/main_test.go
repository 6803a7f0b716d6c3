package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/smithy-go/logging"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/cli"
	"github.com/regionctl/regionctl/internal/iamjudge/simulator"
	"github.com/regionctl/regionctl/internal/platformapi"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/tftest"
)

// emus are the package's emulators, one per test running at once: a test
// takes one for its whole run and resets it first. The tests wait on
// Terraform and on the aws provider's fixed delays far more than they
// compute, so they run side by side (REGIONCTL_E2E_PARALLEL, default 3),
// each against its own emulator, gate and platform API, and each running
// regionctl as a process with its own environment.
var (
	emus     chan *awsemu.Emulator
	emuError error

	prepareOnce sync.Once
	template    string // an initialised .terraform holding the aws provider, seeding workspaces
	prepareErr  error
)

func TestMain(m *testing.M) {
	// The test binary doubles as regionctl for tests that need a process
	// of their own (to kill it, or to run two at once).
	if os.Getenv("REGIONCTL_E2E_MAIN") == "1" {
		os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// The CI variable of the machine running the tests is not the test
	// fleet's: with CI=true a rule that compares with the deploy branch
	// fails where no repository holds the fleet (internal/cli ruleNotRun),
	// and the fleets here are copies. REGIONCTL_REQUIRE_JUDGES still
	// requires the judges.
	os.Unsetenv("CI")
	// The suite's date (2026-11-27): the example fleet's EKS versions are
	// held to EKS's support calendar at it, whenever the suite runs.
	if os.Getenv("SOURCE_DATE_EPOCH") == "" {
		os.Setenv("SOURCE_DATE_EPOCH", "1795737600")
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	n := parallelism()
	if _, err := exec.LookPath("moto_server"); err != nil {
		emuError = err
	} else {
		started, err := startEmulators(n)
		for _, em := range started {
			defer em.Stop()
		}
		if emuError = err; err == nil {
			emus = make(chan *awsemu.Emulator, n)
			for _, em := range started {
				emus <- em
			}
		}
	}
	code := m.Run()
	if template != "" {
		os.RemoveAll(filepath.Dir(template))
	}
	return code
}

// parallelism is how many tests run at once, each with an emulator of its
// own: REGIONCTL_E2E_PARALLEL, or 3. It sets go test's -parallel unless
// that was given.
func parallelism() int {
	n := 3
	if v, err := strconv.Atoi(os.Getenv("REGIONCTL_E2E_PARALLEL")); err == nil && v > 0 {
		n = v
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		n, _ = strconv.Atoi(flag.Lookup("test.parallel").Value.String())
	} else {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
	return max(n, 1)
}

// startEmulators starts n emulators at once, each loading the services
// every test uses.
func startEmulators(n int) ([]*awsemu.Emulator, error) {
	out := make([]*awsemu.Emulator, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			em, err := awsemu.Start(context.Background(), filepath.Join(os.TempDir(), fmt.Sprintf("regionctl-e2e-moto-%d.log", i)))
			if err == nil {
				err = em.Prewarm(context.Background(), "iam", "sts", "s3", "organizations", "ssm")
			}
			out[i], errs[i] = em, err
		}()
	}
	wg.Wait()
	var started []*awsemu.Emulator
	for _, em := range out {
		if em != nil {
			started = append(started, em)
		}
	}
	return started, errors.Join(errs...)
}

// prepare installs the aws provider once into a template workspace.
func prepare(tf *tftest.Env) error {
	prepareOnce.Do(func() {
		dir, err := os.MkdirTemp("", "regionctl-e2e-template-")
		if err == nil {
			template = filepath.Join(dir, "template")
			err = initTemplate(tf, template)
		}
		prepareErr = err
	})
	return prepareErr
}

func initTemplate(tf *tftest.Env, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	versions, err := os.ReadFile("../../terraform/management-cluster/versions.tf")
	if err != nil {
		return err
	}
	// The template needs the providers only: no backend, no provider block.
	text := strings.Replace(string(versions), `backend "s3" {}`, "", 1)
	text = text[:strings.Index(text, "\n# The cluster's account")]
	if err := os.WriteFile(filepath.Join(dir, "versions.tf"), []byte(text+"\n"), 0o644); err != nil {
		return err
	}
	tfx, err := tfexec.NewTerraform(dir, tf.Exec)
	if err != nil {
		return err
	}
	if err := tfx.SetEnv(tf.EnvMap()); err != nil {
		return err
	}
	return tfx.Init(context.Background(), tfexec.Backend(false))
}

// faultRoot is the provider-free stand-in of the cluster roots: the same
// S3 backend, variables file and run-time variables, a terraform_data per
// cluster, and a fault switch read from fault.json beside it. The
// bootstrap root is always the product's own.
const faultRoot = `terraform {
  backend "s3" {}
}

variable "region" {
  type = string
}

variable "cluster_name" {
  type = string
}

variable "account_id" {
  type = string
}

variable "assume_role_arn" {
  type = string
}

variable "assume_role_session_name" {
  type = string
}

variable "assume_role_external_id" {
  type    = string
  default = ""
}

# The regional root's organisation ids and the management root's regional
# account: set by the pipelines, unused here.
variable "organization_id" {
  type    = string
  default = ""
}

variable "root_id" {
  type    = string
  default = ""
}

variable "management_ou_id" {
  type    = string
  default = ""
}

variable "regional_account_id" {
  type    = string
  default = ""
}

variable "gitops_repo_url" {
  type    = string
  default = ""
}

variable "runner_image" {
  type    = string
  default = ""
}

locals {
  fault = jsondecode(file("${path.module}/fault.json"))
}

resource "terraform_data" "cluster" {
  input = { name = var.cluster_name, region = var.region, account = var.account_id, role = var.assume_role_arn }
}

resource "terraform_data" "fault" {
  count            = local.fault.fail || local.fault.sleep > 0 ? 1 : 0
  triggers_replace = local.fault
  provisioner "local-exec" {
    command = local.fault.fail ? "echo 'injected terraform failure' >&2; exit 1" : "touch '${local.fault.marker}'; sleep ${local.fault.sleep}"
  }
}

output "platform_api_id" {
  value = "platformapi"
}

output "platform_api_endpoint" {
  value = trimspace(file("${path.module}/endpoint.txt"))
}

output "oidc_issuer" {
  value = "https://oidc.eks.${var.region}.amazonaws.com/id/REGIONAL"
}

output "bootstrap" {
  value = { none = "a stand-in root: no cluster to bootstrap" }
}
`

// env is one test's emulator, repository, roots, gate, platform and
// platform API.
type env struct {
	t               *testing.T
	emu             *awsemu.Emulator
	vars            map[string]string // the environment regionctl runs with: the emulator's endpoint, terraform's, the pod's
	root            string            // the repository: config/, charts/, pipelines/ and deploy/ of the example fleet
	roots           string            // the Terraform roots: stand-ins for the clusters', the product's bootstrap
	work            string
	gate            *awsemu.Gate
	platform        *awsemu.Platform
	proxy           *proxy
	api             *platformapi.Server
	url             string // the platform API's URL
	apiID           string // the id of the API Gateway API the platform API stands for (the regional root's platform_api_id)
	tokens          string // where web identity tokens are written
	regionalAccount string // the test region's regional account, once the central pipeline made it
	issuer          string // the test region's regional cluster's OIDC issuer
	// others are the regional accounts of other regions a test bootstrapped.
	others map[string]string
}

// regionalOf is the regional account and OIDC issuer of a region.
func (e *env) regionalOf(r string) (account, issuer string) {
	if r == region {
		return e.regionalAccount, e.issuer
	}
	return e.others[r], "https://oidc.eks." + r + ".amazonaws.com/id/REGIONAL"
}

func setup(t *testing.T) *env {
	t.Helper()
	t.Parallel()
	tf := tftest.Setup(t, "../..")
	if emus == nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" {
			t.Fatalf("moto_server is required here: %v", emuError)
		}
		t.Skipf("skipping: no AWS emulator: %v", emuError)
	}
	if err := prepare(tf); err != nil {
		t.Fatal(err)
	}
	em := <-emus
	t.Cleanup(func() { emus <- em }) // last: after the gate and servers closed
	if err := em.Reset(); err != nil {
		t.Fatal(err)
	}
	g, err := awsemu.StartGate(em.URL)
	if err != nil {
		t.Fatal(err)
	}
	g.Ledger().Expect(awsemu.AccountProbe)
	// The second judge decides every request the gate decides.
	g.SetSecondJudge(simulator.Require(t))
	e := &env{t: t, emu: em, root: t.TempDir(), roots: t.TempDir(), work: t.TempDir(), tokens: t.TempDir(), gate: g,
		issuer: "https://oidc.eks." + region + ".amazonaws.com/id/REGIONAL", others: map[string]string{}, apiID: "platformapi"}
	t.Cleanup(func() { e.closeGate() })
	for _, dir := range []string{"config", "deploy", "charts", "pipelines"} {
		if err := tftest.CopyDir(filepath.Join("../..", dir), filepath.Join(e.root, dir)); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"central-bootstrap", "modules"} {
		if err := tftest.CopyDir(filepath.Join("../../terraform", dir), filepath.Join(e.roots, dir)); err != nil {
			t.Fatal(err)
		}
	}
	// One platform API stands for every region's: each request goes to the
	// API of the region it is signed for, in that region's account.
	e.api = &platformapi.Server{Authorize: func(r *http.Request, body []byte) (string, error) {
		signed := awsemu.SigningRegion(r)
		account, _ := e.regionalOf(signed)
		return g.Invoke(r, body, awsemu.API{Region: signed, Account: account, ID: e.apiID, Stage: "$default"})
	}}
	srv := httptest.NewServer(e.api)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	for _, root := range []string{"regional-cluster", "management-cluster"} {
		e.write(filepath.Join(root, "main.tf"), faultRoot)
		e.write(filepath.Join(root, "endpoint.txt"), e.url)
		e.fault(root, false, 0, "")
	}
	policy, err := os.ReadFile(filepath.Join(e.root, "deploy", render.CentralPolicyPath("aws")))
	if err != nil {
		t.Fatal(err)
	}
	if e.platform, err = awsemu.SetupPlatform(context.Background(), g, policy, "regionctl-pipelines"); err != nil {
		t.Fatal(err)
	}
	e.proxy = newProxy(t, g.URL)
	e.vars = map[string]string{"AWS_ENDPOINT_URL": e.proxy.URL, "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "3"}
	for k, v := range tf.EnvMap() {
		e.vars[k] = v
	}
	return e
}

// closeGate writes the test's ledger next to its logs and fails the test on
// any denial it did not provoke.
func (e *env) closeGate() {
	l := e.gate.Ledger()
	path := filepath.Join(e.root, ".regionctl", "iam-ledger.jsonl")
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	if err := l.WriteFile(path); err != nil {
		e.t.Error(err)
	}
	// REGIONCTL_E2E_LEDGERS keeps every test's ledger for reading.
	if dir := os.Getenv("REGIONCTL_E2E_LEDGERS"); dir != "" {
		_ = os.MkdirAll(dir, 0o755)
		if err := l.WriteFile(filepath.Join(dir, strings.ReplaceAll(e.t.Name(), "/", "_")+".jsonl")); err != nil {
			e.t.Error(err)
		}
	}
	e.t.Logf("IAM gate ledger (%d decisions, %s):\n%s", l.Len(), path, awsemu.Summary(l.Entries()))
	for _, d := range l.Unexpected() {
		e.t.Errorf("the IAM gate denied what no test provoked: %s %s on %s (%s): %s", d.Principal, d.Action, d.Resource, d.Operation, d.Reason)
	}
	compared, agreed := l.Compared()
	e.t.Logf("the two IAM judges agreed on %d of %d decisions", agreed, compared)
	for _, d := range l.Invalid() {
		e.t.Errorf("%s installed a policy that grants what AWS never would (%s %s): %s", d.Principal, d.Operation, d.Resource, strings.Join(d.Problems, "; "))
	}
	for _, d := range l.Disagreements() {
		e.t.Errorf("the IAM judges disagree: %s %s on %s (%s): iamjudge %s (%s); simulator %s", d.Principal, d.Action, d.Resource, d.Operation, d.Decision, d.Reason, d.Second)
	}
	e.gate.Close()
}

func (e *env) write(rel, text string) {
	e.t.Helper()
	p := filepath.Join(e.roots, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// fault sets the fault switch of a root: fail its apply, or sleep in it
// after touching marker.
func (e *env) fault(root string, fail bool, sleep int, marker string) {
	e.write(filepath.Join(root, "fault.json"), fmt.Sprintf(`{"fail": %t, "sleep": %d, "marker": %q}`, fail, sleep, marker))
}

// awsConfig reaches the emulator directly, not through the gate, for the
// tests' own checks (moto's default credentials: the management account).
// The SDK's log goes to the test's, not to standard error, where it would
// stand between a failing test and its report.
func (e *env) awsConfig() aws.Config {
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"), config.WithBaseEndpoint(e.emu.URL),
		config.WithLogger(logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
			e.t.Logf("aws-sdk-go-v2 %s: %s", c, fmt.Sprintf(format, v...))
		})),
		config.WithCredentialsProvider(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey}, nil
		})))
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// args are the flags every pipeline run of the tests gets.
func (e *env) args(args ...string) []string {
	return append([]string{"--root", e.root, "--no-cache"}, append(args, "--terraform-dir", e.roots, "--work-dir", e.work, "--terraform-template", template, "--deploy-role-wait", "20s")...)
}

// as makes the following runs act as a pipeline's pod: the central
// pipeline's ServiceAccount in the central cluster, or the regional
// pipeline's in the regional cluster, each with its role through IRSA.
func (e *env) as(pipeline string) { e.asIn(pipeline, region) }

// asIn is as for the regional pipeline of region r.
func (e *env) asIn(pipeline, r string) {
	e.t.Helper()
	for k, v := range e.podEnv(pipeline, r) {
		e.vars[k] = v
	}
}

// podEnv is the environment of a pipeline's pod (see as).
func (e *env) podEnv(pipeline, r string) map[string]string {
	e.t.Helper()
	role, issuer, sa := e.platform.CentralRole, e.platform.CentralIssuer, iam.CentralServiceAccount
	if pipeline == "regional" {
		account, iss := e.regionalOf(r)
		if account == "" {
			e.t.Fatalf("the regional pipeline of %s has no account yet: run the central pipeline first", r)
		}
		role, issuer, sa = iam.RoleARN("aws", account, iam.PipelineRoleName(r)), iss, iam.RegionalServiceAccount
	}
	vars, err := awsemu.IRSA(e.tokens, e.proxy.URL, role, issuer, e.platform.Namespace, sa)
	if err != nil {
		e.t.Fatal(err)
	}
	return vars
}

// regionctl runs a pipeline command (with the flags every run gets) and
// returns its exit code and output.
func (e *env) regionctl(args ...string) (int, string, string) {
	e.t.Helper()
	return e.exec(e.args(args...)...)
}

// exec runs regionctl (this test binary) as a process of its own, with the
// test's environment, and returns its exit code and output.
func (e *env) exec(args ...string) (int, string, string) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	start := time.Now()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = e.environ()
	cmd.Stdout, cmd.Stderr = &out, &errOut
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			e.t.Fatalf("regionctl %v: %v", args, err)
		}
		code = exit.ExitCode()
	}
	e.t.Logf("regionctl %v: exit %d in %s\n%s%s", args, code, time.Since(start).Round(time.Millisecond), out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// environ is the environment regionctl runs with: this process's, then the
// test's (later values win).
func (e *env) environ() []string {
	out := append(os.Environ(), "REGIONCTL_E2E_MAIN=1")
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}

// central runs the central pipeline of the test region as the central
// pipeline's pod.
func (e *env) central(id string, args ...string) (int, string, string) {
	e.t.Helper()
	e.as("central")
	return e.regionctl(append([]string{"pipeline", "central", "--region", region, "--request-id", id}, args...)...)
}

// regionalRun runs the regional pipeline as its pod in the regional
// cluster.
func (e *env) regionalRun(args ...string) (int, string, string) {
	e.t.Helper()
	e.as("regional")
	return e.regionctl(args...)
}

// bootstrap runs the central pipeline of the test region and registers the
// regional cluster's OIDC issuer in the regional account, as the product's
// regional-cluster root (its EKS module) does and the stand-in cannot.
func (e *env) bootstrap() {
	e.t.Helper()
	if code, _, _ := e.central("central-1"); code != 0 {
		e.t.Fatalf("central: exit %d", code)
	}
	e.regionalAccount = e.accounts()[names[0]][0]
	e.regionalIssuer()
}

func (e *env) regionalIssuer() { e.issuerIn(region) }

func (e *env) issuerIn(r string) {
	e.t.Helper()
	account, issuer := e.regionalOf(r)
	cfg, err := e.platform.InAccount(context.Background(), account)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := awsemu.OIDCProvider(context.Background(), cfg, issuer); err != nil && !strings.Contains(err.Error(), "EntityAlreadyExists") {
		e.t.Fatal(err)
	}
}

// start runs regionctl as a process of its own (this test binary), in its
// own process group so that it can be killed with its terraform.
func (e *env) start(stdout, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], e.args(args...)...)
	cmd.Env = e.environ()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = processGroup()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd
}

// orgs is Organizations as the management account's root, directly.
func (e *env) orgs() *organizations.Client { return organizations.NewFromConfig(e.awsConfig()) }
