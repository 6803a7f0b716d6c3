package tfvars_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tfvars"
	"github.com/regionctl/regionctl/internal/schema"
	"github.com/regionctl/regionctl/terraform"
)

func checker(t *testing.T) *tfvars.Checker {
	t.Helper()
	c, err := tfvars.NewChecker(terraform.Roots)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckerFindsMismatches(t *testing.T) {
	c := checker(t)
	valid := tfvars.Vars{
		"region": "us-east-1", "cluster_name": "mc01", "environment": "production", "sector": "s1",
		"vpc_cidr": "10.0.0.0/16", "private_subnets": []any{"10.0.0.0/19"}, "availability_zones": 3,
		"eks_version": "1.31", "node_instance_type": "m6i.xlarge", "node_min": 3, "node_max": 6,
		"oidc_bucket": "b", "maestro_consumer_name": "mc01", "etcd_backup_bucket": "e", "health_bucket": "h",
		"permissions_boundary": "boundary",
	}
	if p := c.Check(terraform.ManagementCluster, valid); len(p) > 0 {
		t.Fatalf("valid vars: %v", p)
	}
	with := func(k string, v any) tfvars.Vars {
		out := tfvars.Vars{}
		for a, b := range valid {
			out[a] = b
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name string
		vars tfvars.Vars
		want string
	}{
		{"undeclared", with("colour", "blue"), "colour is not a variable of terraform/management-cluster"},
		{"number from a word", with("node_min", "three"), "node_min: value does not convert to number"},
		{"list from a string", with("private_subnets", "10.0.0.0/19"), "private_subnets: value does not convert to list(string)"},
		{"map from a list", with("tags", []any{"a"}), "tags: value does not convert to map(string)"},
		{"required missing", with("eks_version", nil), "required variable eks_version of terraform/management-cluster is not set"},
		{"regional-only variable", with("platform_api_domain", "x"), "platform_api_domain is not a variable of terraform/management-cluster"},
		{"a run-time variable rendered", with("assume_role_arn", "arn:aws:iam::1:role/x"), "assume_role_arn of terraform/management-cluster is set by the pipeline at run time"},
	}
	// Twice: the second round answers from the checker's memory of each
	// value's verdict, which must not forget a problem.
	for round := 1; round <= 2; round++ {
		for _, tt := range tests {
			p := c.Check(terraform.ManagementCluster, tt.vars)
			if len(p) != 1 || !strings.HasPrefix(p[0], tt.want) {
				t.Errorf("round %d, %s: problems %q, want one starting %q", round, tt.name, p, tt.want)
			}
		}
	}
	if p := c.Check(terraform.ManagementCluster, valid); len(p) > 0 {
		t.Fatalf("valid vars after the invalid ones: %v", p)
	}
}

// TestRenderedTfvarsMatchTheirRoots reads back every tfvars file rendered for
// the example fleet and the golden fleets and checks it against the root it
// feeds: every key declared, every value convertible, every required set.
func TestRenderedTfvarsMatchTheirRoots(t *testing.T) {
	c := checker(t)
	sc, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := filepath.Glob("../../../golden/*")
	roots = append(roots, "../../..")
	n := 0
	for _, root := range roots {
		f, diags := fleet.Load(os.DirFS(root), "config", sc)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		charts, err := render.ReadCharts(os.DirFS(root))
		if err != nil {
			t.Fatal(err)
		}
		out, diags := render.Render(f, render.Options{Renderer: "test", Charts: charts})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		types := map[string]string{}
		for _, cl := range out.Index.Clusters {
			types[path.Join(render.RegionDir(cl.Environment, cl.Region), "terraform", cl.Name+".tfvars.json")] = cl.Type
		}
		for p, b := range out.ByPath() {
			if !strings.HasSuffix(p, ".tfvars.json") {
				continue
			}
			root := tfvars.RootFor(types[p])
			if strings.HasSuffix(p, "/"+terraform.CentralBootstrap+".tfvars.json") {
				root = terraform.CentralBootstrap
			} else if types[p] == "" {
				t.Errorf("%s belongs to no cluster", p)
			}
			var vars tfvars.Vars
			if err := json.Unmarshal(b, &vars); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			delete(vars, "//") // the marker, ignored by Terraform
			if problems := c.Check(root, vars); len(problems) > 0 {
				t.Errorf("%s against terraform/%s: %v", p, root, problems)
			}
			n++
		}
	}
	if n < 30 {
		t.Errorf("checked only %d tfvars files", n)
	}
	t.Logf("%d tfvars files checked", n)
}

// TestCheckerJudgesEachClassOfValue: a value that converts is remembered by
// what decides its conversion, names aside; a value of the same shape whose
// text converts differently (a word where a number was, a missing
// attribute) is still refused after one that converted.
func TestCheckerJudgesEachClassOfValue(t *testing.T) {
	var decl string
	for name, typ := range map[string]string{"n": "number", "b": "bool", "o": "object({ a = string })", "l": "list(number)", "s": "string"} {
		decl += fmt.Sprintf("variable %q {\n  type    = %s\n  default = null\n}\n", name, typ)
	}
	roots := fstest.MapFS{}
	for _, r := range []string{terraform.RegionalCluster, terraform.ManagementCluster, terraform.CentralBootstrap} {
		roots[r+"/variables.tf"] = &fstest.MapFile{Data: []byte(decl)}
	}
	c, err := tfvars.NewChecker(roots)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		val  any
		ok   bool
	}{
		{"n", "12", true},
		{"n", "abc", false},
		{"n", "13", true},
		{"b", "true", true},
		{"b", "yes", false},
		{"b", "0", true},
		{"o", map[string]any{"a": "x"}, true},
		{"o", map[string]any{"b": "x"}, false},
		{"o", map[string]any{"a": "y"}, true},
		{"l", []any{"1", "2"}, true},
		{"l", []any{"1", "x"}, false},
		{"s", "one name", true},
		{"s", "another", true},
		{"s", []any{"a"}, false},
	} {
		p := c.Check(terraform.ManagementCluster, tfvars.Vars{tt.name: tt.val})
		if tt.ok != (len(p) == 0) {
			t.Errorf("%s = %#v: problems %q, want ok=%v", tt.name, tt.val, p, tt.ok)
		}
	}
}

// TestMarshalJSONOwnsItsBytes: each file's bytes are its own, though the
// encoder that wrote them writes the next file, and a value that fails to
// encode leaves nothing behind for the next.
func TestMarshalJSONOwnsItsBytes(t *testing.T) {
	first, err := tfvars.MarshalJSON(map[string]any{"a": "first", "n": 1})
	if err != nil {
		t.Fatal(err)
	}
	second, err := tfvars.MarshalJSON(map[string]any{"b": "second <&>"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tfvars.MarshalJSON(map[string]any{"bad": math.NaN()}); err == nil {
		t.Fatal("NaN encoded")
	}
	if third, err := tfvars.MarshalJSON([]int{3}); err != nil || string(third) != "[\n  3\n]\n" {
		t.Errorf("after a failed encoding: %q, %v", third, err)
	}
	if want := "{\n  \"a\": \"first\",\n  \"n\": 1\n}\n"; string(first) != want {
		t.Errorf("first file %q, want %q", first, want)
	}
	if want := "{\n  \"b\": \"second <&>\"\n}\n"; string(second) != want {
		t.Errorf("second file %q, want %q", second, want)
	}
}
