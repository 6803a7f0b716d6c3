package terraform_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/tftest"
)

// waitRoot applies the api-gateway module in a VPC of its own, with a short
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
  validation_timeout = "20s"
  vpc_id             = aws_vpc.this.id
  vpc_cidr           = aws_vpc.this.cidr_block
  subnet_ids         = [aws_subnet.a.id, aws_subnet.b.id]
}
`

// TestAnApplyRefusesToWaitForever applies the api-gateway module in the
// order a new region goes through, against the emulator, whose gate issues
// a DNS-validated certificate only once public DNS reaches its validation
// record, as ACM does (awsemu.Gate.ModelPublicDNS): the zone not delegated
// (the apply finishes without waiting); the config saying it is delegated
// when no parent delegates it (the apply fails when the module's
// validation_timeout runs out, naming the state it waited in, instead of
// waiting on); public DNS reaching the zone (the apply finishes and serves
// the API).
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
	var reached atomic.Bool
	gate.ModelPublicDNS(func(name string) bool { return reached.Load() && name == "api.eu-west-1.example.com" })

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
	// A new region: the zone not delegated, and said so. The apply
	// finishes, waiting for nothing, and makes nothing that needs the
	// certificate.
	if err := tf.Apply(ctx, tfexec.Var("delegated=false")); err != nil {
		t.Fatalf("the undelegated apply: %v\n%s", err, out.String())
	}
	if state := addresses(ctx, t, tf); !strings.Contains(state, "module.api.aws_acm_certificate.api") || strings.Contains(state, "aws_acm_certificate_validation") {
		t.Fatalf("the undelegated apply made:\n%s", state)
	}
	// The config says the zone is delegated; public DNS does not reach it.
	out.Reset()
	start := time.Now()
	err = tf.Apply(ctx, tfexec.Var("delegated=true"))
	took := time.Since(start)
	if err == nil {
		t.Fatal("the apply finished with a certificate nobody could validate")
	}
	if !strings.Contains(err.Error()+out.String(), "PENDING_VALIDATION") {
		t.Fatalf("the apply failed otherwise: %v\n%s", err, out.String())
	}
	t.Logf("said delegated, not reached: the apply failed after %s: %s", took.Round(time.Second), lineWith(err.Error()+out.String(), "PENDING_VALIDATION"))
	state := addresses(ctx, t, tf)
	if strings.Contains(state, "aws_lb_listener") {
		t.Errorf("something that needs the certificate was made: %s", state)
	}

	reached.Store(true)
	out.Reset()
	if err := tf.Apply(ctx, tfexec.Var("delegated=true")); err != nil {
		t.Fatalf("the apply once public DNS reaches the zone: %v\n%s", err, out.String())
	}
	state = addresses(ctx, t, tf)
	for _, r := range []string{"module.api.aws_acm_certificate_validation.api[0]", "module.api.aws_lb_listener.https[0]", "module.api.aws_apigatewayv2_domain_name.api[0]"} {
		if !strings.Contains(state, r) {
			t.Errorf("delegated: %s not made:\n%s", r, state)
		}
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
