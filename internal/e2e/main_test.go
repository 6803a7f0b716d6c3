package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/cli"
	"github.com/regionctl/regionctl/internal/platformapi"
	"github.com/regionctl/regionctl/internal/tftest"
)

// emu is the package's one emulator; tests reset it.
var (
	emu      *awsemu.Emulator
	emuError error
)

func TestMain(m *testing.M) {
	// The test binary doubles as regionctl for tests that need a process
	// of their own (to kill it, or to run two at once).
	if os.Getenv("REGIONCTL_E2E_MAIN") == "1" {
		os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := exec.LookPath("moto_server"); err != nil {
		emuError = err
	} else {
		emu, emuError = awsemu.Start(context.Background(), filepath.Join(os.TempDir(), "regionctl-e2e-moto.log"))
		if emuError == nil {
			defer emu.Stop()
		}
	}
	return m.Run()
}

// faultRoot is the provider-free stand-in of each Terraform root: the same
// S3 backend and variables file, a terraform_data per cluster, and a fault
// switch read from fault.json beside it.
const faultRoot = `terraform {
  backend "s3" {}
}

variable "region" {
  type = string
}

variable "cluster_name" {
  type    = string
  default = "bootstrap"
}

locals {
  fault = jsondecode(file("${path.module}/fault.json"))
}

resource "terraform_data" "cluster" {
  input = { name = var.cluster_name, region = var.region }
}

resource "terraform_data" "fault" {
  count            = local.fault.fail || local.fault.sleep > 0 ? 1 : 0
  triggers_replace = local.fault
  provisioner "local-exec" {
    command = local.fault.fail ? "echo 'injected terraform failure' >&2; exit 1" : "touch '${local.fault.marker}'; sleep ${local.fault.sleep}"
  }
}

output "platform_api_endpoint" {
  value = trimspace(file("${path.module}/endpoint.txt"))
}
`

// env is one test's repository, roots, emulator proxy and platform API.
type env struct {
	t     *testing.T
	root  string // the repository: config/ and deploy/ of the example fleet
	roots string // the provider-free roots
	work  string
	proxy *proxy
	api   *platformapi.Server
	url   string // the platform API's URL
}

func setup(t *testing.T) *env {
	t.Helper()
	tf := tftest.Setup(t, "../..")
	if emu == nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" {
			t.Fatalf("moto_server is required here: %v", emuError)
		}
		t.Skipf("skipping: no AWS emulator: %v", emuError)
	}
	if err := emu.Reset(); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, root: t.TempDir(), roots: t.TempDir(), work: t.TempDir()}
	for _, dir := range []string{"config", "deploy"} {
		if err := tftest.CopyDir(filepath.Join("../..", dir), filepath.Join(e.root, dir)); err != nil {
			t.Fatal(err)
		}
	}
	e.api = &platformapi.Server{Credentials: aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey}}
	srv := httptest.NewServer(e.api)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	for _, root := range []string{"regional-cluster", "management-cluster", "central-bootstrap"} {
		e.write(filepath.Join(root, "main.tf"), faultRoot)
		e.write(filepath.Join(root, "endpoint.txt"), e.url)
		e.fault(root, false, 0, "")
	}
	e.proxy = newProxy(t, emu.URL)
	for k, v := range emu.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ENDPOINT_URL", e.proxy.URL)
	t.Setenv("AWS_MAX_ATTEMPTS", "3")
	for k, v := range tf.EnvMap() {
		t.Setenv(k, v)
	}
	// The organisation exists before any pipeline runs.
	_, err := organizations.NewFromConfig(e.awsConfig()).CreateOrganization(context.Background(), &organizations.CreateOrganizationInput{FeatureSet: orgtypes.OrganizationFeatureSetAll})
	if err != nil {
		t.Fatal(err)
	}
	return e
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

// awsConfig reaches the emulator directly, not through the proxy, for
// the tests' own checks.
func (e *env) awsConfig() aws.Config {
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"), config.WithBaseEndpoint(emu.URL),
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
	return append([]string{"--root", e.root, "--no-cache"}, append(args, "--terraform-dir", e.roots, "--work-dir", e.work)...)
}

// regionctl runs regionctl in this process and returns its exit code and
// output.
func (e *env) regionctl(args ...string) (int, string, string) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(e.args(args...), &out, &errOut)
	e.t.Logf("regionctl %v: exit %d\n%s%s", args, code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// start runs regionctl as a process of its own (this test binary), in its
// own process group so that it can be killed with its terraform.
func (e *env) start(stdout, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], e.args(args...)...)
	cmd.Env = append(os.Environ(), "REGIONCTL_E2E_MAIN=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = processGroup()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd
}
