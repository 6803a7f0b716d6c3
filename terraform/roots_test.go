package terraform_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/regionctl/regionctl/internal/tftest"
	"github.com/regionctl/regionctl/terraform"
)

// TestRootsValidate runs `terraform fmt -check` over terraform/ and
// `terraform init -backend=false` + `terraform validate` on each root, with
// the hashicorp/aws provider from the local mirror. Slow: loading the aws
// provider's schema takes one to three minutes per root on a small machine,
// so each root is validated once, all three in parallel.
func TestRootsValidate(t *testing.T) {
	env := tftest.Setup(t, "..")
	work := t.TempDir()
	if err := tftest.CopyDir(".", work); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel) // parallel subtests run after this function returns

	fmtTF, err := tfexec.NewTerraform(work, env.Exec)
	if err != nil {
		t.Fatal(err)
	}
	_ = fmtTF.SetEnv(env.EnvMap())
	ok, files, err := fmtTF.FormatCheck(ctx, tfexec.Recursive(true))
	if err != nil {
		t.Fatalf("terraform fmt: %v", err)
	}
	if !ok {
		t.Errorf("terraform fmt -check fails on %v; run terraform fmt -recursive terraform/", files)
	}

	// terraform's plugin cache is not safe for concurrent installs: init the
	// roots one by one (seconds each with the cache), validate in parallel.
	tfs := map[string]*tfexec.Terraform{}
	roots := []string{terraform.RegionalCluster, terraform.ManagementCluster, terraform.CentralBootstrap}
	for _, root := range roots {
		tf, err := tfexec.NewTerraform(filepath.Join(work, root), env.Exec)
		if err != nil {
			t.Fatal(err)
		}
		if err := tf.SetEnv(env.EnvMap()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := tf.Init(ctx, tfexec.Backend(false)); err != nil {
			t.Fatalf("terraform init %s: %v", root, err)
		}
		t.Logf("init %s: %s", root, time.Since(start).Round(time.Second))
		tfs[root] = tf
	}
	for _, root := range roots {
		t.Run(root, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, err := tfs[root].Validate(ctx)
			if err != nil {
				t.Fatalf("terraform validate: %v", err)
			}
			t.Logf("validate %s: %s", root, time.Since(start).Round(time.Second))
			if !out.Valid {
				for _, d := range out.Diagnostics {
					where := ""
					if d.Range != nil {
						where = fmt.Sprintf("%s:%d", d.Range.Filename, d.Range.Start.Line)
					}
					t.Errorf("%s %s: %s: %s", d.Severity, where, d.Summary, d.Detail)
				}
			}
			for _, d := range out.Diagnostics {
				if d.Severity == "warning" {
					t.Logf("warning: %s: %s", d.Summary, d.Detail)
				}
			}
		})
	}
}
