package terraform_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/regionctl/regionctl/internal/schema"
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

// TestRoleSuffixesMatchTheRoots holds schema.RoleSuffixes, which the
// validator uses to keep derived IAM role names within IAM's limit, to the
// roles the modules name <region>-<cluster>-<suffix>: a role added to a
// module without its suffix there would escape the check.
func TestRoleSuffixesMatchTheRoots(t *testing.T) {
	// The modules every cluster runs (eks) and those of management
	// clusters only.
	modules := map[string][]string{"eks": {"regional", "management"}, "hypershift": {"management"},
		"maestro-iot": {"regional"}, "maestro-agent": {"management"}, "external-secrets": {"regional", "management"},
		"argocd-health": {"regional", "management"}}
	role := regexp.MustCompile(`(?m)^(resource "aws_iam_role" "\w+"|module "\w+") \{\n(?:  source += "\.\./(?:iam-role|pod-identity-role)"\n)?((?:[ \t].*\n|\n)*?)  name += "([^"]*)"`)
	forEach := regexp.MustCompile(`for_each += local\.(\w+)`)
	found := map[string]map[string]bool{"regional": {}, "management": {}}
	for mod, types := range modules {
		files, err := filepath.Glob(filepath.Join("modules", mod, "*.tf"))
		if err != nil || len(files) == 0 {
			t.Fatalf("modules/%s: %v", mod, err)
		}
		var b []byte
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, text...)
		}
		n := strings.Count(string(b), `resource "aws_iam_role" "`) + strings.Count(string(b), `"../iam-role"`) + strings.Count(string(b), `"../pod-identity-role"`)
		var names []string
		// A role a module makes through another (mqtt-client) is named by
		// its role_name.
		for _, m := range regexp.MustCompile(`(?m)^  role_name += "([^"]*)"`).FindAllStringSubmatch(string(b), -1) {
			names = append(names, m[1])
			n++
		}
		for _, m := range role.FindAllStringSubmatch(string(b), -1) {
			if strings.HasPrefix(m[1], "module") && !strings.Contains(m[0], "../iam-role") && !strings.Contains(m[0], "../pod-identity-role") {
				continue
			}
			// A role per key of a local map: one name per key.
			if f := forEach.FindStringSubmatch(m[2]); f != nil && strings.Contains(m[3], "${each.key}") {
				keys := mapKeys(t, string(b), f[1])
				for _, k := range keys {
					names = append(names, strings.ReplaceAll(m[3], "${each.key}", k))
				}
				n += len(keys) - 1
				continue
			}
			names = append(names, m[3])
		}
		if len(names) == 0 || len(names) != n {
			t.Fatalf("modules/%s: found role names %v", mod, names)
		}
		for _, name := range names {
			suffix, ok := strings.CutPrefix(name, "${local.prefix}-")
			if !ok {
				t.Errorf("modules/%s: role %q is not named ${local.prefix}-<suffix>", mod, name)
				continue
			}
			for _, typ := range types {
				found[typ][suffix] = true
			}
		}
	}
	for typ, suffixes := range schema.RoleSuffixes {
		want := map[string]bool{}
		for _, s := range suffixes {
			want[s] = true
		}
		if fmt.Sprint(want) != fmt.Sprint(found[typ]) {
			t.Errorf("%s clusters: schema.RoleSuffixes has %v, the modules name %v", typ, suffixes, found[typ])
		}
	}
}

// mapKeys are the keys of the map local name holds in a module's text (the
// map's entries are "key = ..." lines, one level in).
func mapKeys(t *testing.T, text, name string) []string {
	t.Helper()
	block := regexp.MustCompile(`(?ms)^  ` + name + ` = [^{]*\{\n(.*?)\n  \}`).FindStringSubmatch(text)
	if block == nil {
		t.Fatalf("no map local.%s", name)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^    ([a-z][a-z0-9-]*) += `).FindAllStringSubmatch(block[1], -1) {
		keys = append(keys, m[1])
	}
	if len(keys) == 0 {
		t.Fatalf("local.%s has no keys", name)
	}
	return keys
}

// TestModulesPlanAsTheirTestsSay runs `terraform test` in every module with
// a tests/ directory: Terraform's own planner, against a mocked provider
// (mock_provider: no AWS, no network), decides what each module makes for
// the inputs its tests give. The api-gateway module's tests hold it to
// making nothing that waits for its certificate before its zone is
// delegated (issue 36).
func TestModulesPlanAsTheirTestsSay(t *testing.T) {
	env := tftest.Setup(t, "..")
	dirs, _ := filepath.Glob("modules/*/tests")
	if len(dirs) == 0 {
		t.Fatal("no module has tests/")
	}
	work := t.TempDir()
	if err := tftest.CopyDir(".", work); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, dir := range dirs {
		module := filepath.Dir(dir)
		t.Run(filepath.Base(module), func(t *testing.T) {
			tf, err := tfexec.NewTerraform(filepath.Join(work, module), env.Exec)
			if err != nil {
				t.Fatal(err)
			}
			if err := tf.SetEnv(env.EnvMap()); err != nil {
				t.Fatal(err)
			}
			if err := tf.Init(ctx, tfexec.Backend(false)); err != nil {
				t.Fatalf("terraform init: %v", err)
			}
			var out strings.Builder
			if err := tf.Test(ctx, &out); err != nil {
				t.Fatalf("terraform test in %s: %v\n%s", module, err, out.String())
			}
			if !strings.Contains(out.String(), "Success!") {
				t.Fatalf("terraform test in %s did not succeed:\n%s", module, out.String())
			}
			t.Logf("%s", lastLine(out.String()))
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
