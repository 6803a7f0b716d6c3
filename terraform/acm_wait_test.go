package terraform_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/tftest"
)

// waitRoot is the api-gateway module in a VPC of its own, with a short
// validation timeout.
const waitRoot = `terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }
}

provider "aws" {
  region = "eu-west-1"
}

variable "delegated" {
  type = bool
}

resource "aws_vpc" "this" {
  cidr_block = "10.0.0.0/16"
}

resource "aws_subnet" "a" {
  vpc_id            = aws_vpc.this.id
  cidr_block        = "10.0.0.0/20"
  availability_zone = "eu-west-1a"
}

resource "aws_subnet" "b" {
  vpc_id            = aws_vpc.this.id
  cidr_block        = "10.0.16.0/20"
  availability_zone = "eu-west-1b"
}

module "api" {
  source             = "./modules/api-gateway"
  name               = "eu-west-1-api"
  region             = "eu-west-1"
  domain             = "api.eu-west-1.example.com"
  delegated          = var.delegated
  validation_timeout = "10s"
  vpc_id             = aws_vpc.this.id
  vpc_cidr           = aws_vpc.this.cidr_block
  subnet_ids         = [aws_subnet.a.id, aws_subnet.b.id]
}
`

// TestAnApplyRefusesToWaitForever applies the api-gateway module with the
// real provider against the emulator, whose gate issues a DNS-validated
// certificate only once public DNS reaches its validation record, as ACM
// does (awsemu.Gate.ModelPublicDNS): with the config saying the zone is
// delegated when no parent delegates it, the apply fails when the module's
// validation_timeout runs out, naming the state it waited in, instead of
// waiting on. The undelegated apply is planned by the module's own tests
// (tests/delegation.tftest.hcl) and applied by make demo; the delegated
// one, reached, by TestRealRoots (internal/e2e).
func TestAnApplyRefusesToWaitForever(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: applies the module against the emulator")
	}
	env := tftest.Setup(t, "..")
	if _, err := exec.LookPath("moto_server"); err != nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" {
			t.Fatal("moto_server is required here")
		}
		t.Skip("skipping: no moto_server on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	emu, err := awsemu.Start(ctx, filepath.Join(t.TempDir(), "moto.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()
	gate, err := awsemu.StartGate(emu.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()
	gate.ModelPublicDNS(func(string) bool { return false })

	work := t.TempDir()
	if err := tftest.CopyDir("modules", filepath.Join(work, "modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(waitRoot), 0o644); err != nil {
		t.Fatal(err)
	}
	tf, err := tfexec.NewTerraform(work, env.Exec)
	if err != nil {
		t.Fatal(err)
	}
	vars := env.EnvMap()
	for k, v := range emu.Env() {
		vars[k] = v
	}
	vars["AWS_ENDPOINT_URL"] = gate.URL
	if err := tf.SetEnv(vars); err != nil {
		t.Fatal(err)
	}
	if err := tf.Init(ctx); err != nil {
		t.Fatalf("terraform init: %v", err)
	}
	var out strings.Builder
	tf.SetStdout(&out)
	tf.SetStderr(&out)
	// The config says the zone is delegated; public DNS does not reach it.
	// Only what the validation needs is applied (the zone, the
	// certificate, its record): the rest of the module waits on the
	// emulator for a minute (the load balancer) and proves nothing here.
	start := time.Now()
	err = tf.Apply(ctx, tfexec.Var("delegated=true"), tfexec.Target("module.api.aws_acm_certificate_validation.api"))
	took := time.Since(start)
	if err == nil {
		t.Fatal("the apply finished with a certificate nobody could validate")
	}
	if !strings.Contains(err.Error()+out.String(), "PENDING_VALIDATION") {
		t.Fatalf("the apply failed otherwise: %v\n%s", err, out.String())
	}
	t.Logf("said delegated, not reached: the apply failed after %s: %s", took.Round(time.Second), lineWith(err.Error()+out.String(), "PENDING_VALIDATION"))
	if state := addresses(ctx, t, tf); !strings.Contains(state, "module.api.aws_route53_record.validation") || strings.Contains(state, "aws_acm_certificate_validation") {
		t.Errorf("the state after the refused wait:\n%s", state)
	}
}

// addresses lists the resources of tf's state, one per line.
func addresses(ctx context.Context, t *testing.T, tf *tfexec.Terraform) string {
	t.Helper()
	st, err := tf.Show(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(m *tfjson.StateModule)
	walk = func(m *tfjson.StateModule) {
		if m == nil {
			return
		}
		for _, r := range m.Resources {
			out = append(out, r.Address)
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	if st.Values != nil {
		walk(st.Values.RootModule)
	}
	return strings.Join(out, "\n")
}

// lineWith is the first line of s that holds sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
