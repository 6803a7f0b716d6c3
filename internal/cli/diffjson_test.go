package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The JSON reviews print is what docs/diff-json.schema.json says: every
// documented field present with its type, lists never null, enums closed.
func TestDiffJSONMatchesItsSchema(t *testing.T) {
	c := diffSchema(t)
	report, err := c.Compile("diff-json.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	affected, err := c.Compile("diff-json.schema.json#/$defs/affected")
	if err != nil {
		t.Fatal(err)
	}

	r := newReviewRepo(t)
	// A change of every kind the report lists: a value change that rolls
	// out, a destroyed cluster, an added one, a hand edit (drift), a stale
	// file.
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	r.Edit("config/clusters/eu-west-1/mc02.yaml", "type: management", "type: management\ndelete: true")
	r.render()
	r.Edit("deploy/production/us-east-1/terraform/mc01.tfvars.json", `"node_max": 6`, `"node_max": 60`)
	r.Commit("change")
	r.Edit("config/sectors/stage-a.yaml", "max_update: 100%", "max_update: 100%\neks:\n  node_max: 12")

	run := func(args ...string) any {
		t.Helper()
		var out, errs bytes.Buffer
		code := Run(append([]string{"--root", r.Dir, "--no-cache"}, args...), &out, &errs)
		if code != 0 && code != 1 { // 1: the drift this change carries
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errs.String())
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return v
	}
	rep := run("render", "--diff", "--base", "HEAD~1", "-o", "json", "--allow-drift")
	if err := report.Validate(rep); err != nil {
		t.Errorf("render --diff -o json:\n%v", err)
	}
	m, _ := rep.(map[string]any)
	for _, k := range []string{"changes", "destroyed", "drift", "files", "affected"} {
		if l, _ := m[k].([]any); len(l) == 0 {
			t.Errorf("the change exercises no %s: the schema check is weaker than it looks", k)
		}
	}
	aff := run("affected", "--base", "HEAD~1", "-o", "json", "--allow-drift")
	list, _ := aff.([]any)
	if len(list) == 0 {
		t.Fatal("affected lists nothing")
	}
	for _, a := range list {
		if err := affected.Validate(a); err != nil {
			t.Errorf("affected -o json: %v", err)
		}
	}
	// The schema is not vacuous: a null list, a wrong enum and a missing
	// field are refused.
	b, _ := json.Marshal(rep)
	for _, bad := range []string{
		strings.Replace(string(b), `"pruned":[`, `"pruned":null,"x":[`, 1),
		strings.Replace(string(b), `"status":"changed"`, `"status":"edited"`, 1),
		strings.Replace(string(b), `"stale":`, `"stale_":`, 1),
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if report.Validate(v) == nil {
			t.Errorf("the schema accepts a broken report: %.200s", bad)
		}
	}
}

// The other JSON outputs are $defs of the same schema: validate (valid and
// broken), render, render --check (clean and stale), affected -o matrix.
func TestOtherJSONMatchesItsSchema(t *testing.T) {
	c := diffSchema(t)
	def := func(name string) *jsonschema.Schema {
		s, err := c.Compile("diff-json.schema.json#/$defs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	r := newReviewRepo(t)
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  node_max: 16")
	check := func(name string, want int, args ...string) map[string]any {
		t.Helper()
		var out, errs bytes.Buffer
		if code := Run(append([]string{"--root", r.Dir, "--no-cache"}, args...), &out, &errs); code != want {
			t.Fatalf("%s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, errs.String())
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		if err := def(name).Validate(v); err != nil {
			t.Errorf("%s:\n%v", strings.Join(args, " "), err)
		}
		m, _ := v.(map[string]any)
		return m
	}
	check("check", 1, "render", "--check", "-o", "json")
	check("matrix", 0, "affected", "--base", "HEAD", "-o", "matrix")
	if m := check("render", 0, "render", "-o", "json"); len(m["changed"].([]any)) == 0 {
		t.Error("the render changed nothing: the schema check is weaker than it looks")
	}
	check("check", 0, "render", "--check", "-o", "json")
	check("validate", 0, "validate", "-o", "json")
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\ncolour: blue")
	if m := check("validate", 1, "validate", "-o", "json"); len(m["diagnostics"].([]any)) == 0 {
		t.Error("a broken fleet gave no diagnostics")
	}
}

// explain, rollout status, argocd apps, pipeline --dry-run and version, on
// the example fleet of this repository, each against its $defs entry.
func TestReadCommandsJSONMatchesItsSchema(t *testing.T) {
	c := diffSchema(t)
	for def, args := range map[string][]string{
		"explain":        {"explain", "us-east-1/mc01"},
		"rollout_status": {"rollout", "status"},
		"argocd_apps":    {"argocd", "apps"},
		"pipeline_plan":  {"pipeline", "regional", "--region", "us-east-1", "--dry-run"},
		"version":        {"version"},
	} {
		s, err := c.Compile("diff-json.schema.json#/$defs/" + def)
		if err != nil {
			t.Fatal(err)
		}
		var out, errs bytes.Buffer
		if code := Run(append([]string{"--root", "../..", "--no-cache"}, append(args, "-o", "json")...), &out, &errs); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs.String())
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%v -o json:\n%v", args, err)
		}
	}
}

// diffSchema is a compiler holding docs/diff-json.schema.json, whose
// definitions are compiled as "diff-json.schema.json#/$defs/<name>".
func diffSchema(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	c := jsonschema.NewCompiler()
	doc, err := os.ReadFile("../../docs/diff-json.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("diff-json.schema.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	return c
}
