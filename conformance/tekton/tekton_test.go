package tekton_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"sigs.k8s.io/yaml"
)

const (
	repo      = "../.."
	tektonDir = repo + "/pipelines/tekton"
)

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// documents splits a multi-document YAML file.
func documents(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// resources decodes every Task and Pipeline of pipelines/tekton strictly
// (unknown fields fail) with Tekton's v1 types.
type resources struct {
	tasks     map[string]*v1.Task
	pipelines map[string]*v1.Pipeline
	other     []typeMeta
}

func decodeAll(t *testing.T, docs [][]byte, where string) resources {
	t.Helper()
	r := resources{tasks: map[string]*v1.Task{}, pipelines: map[string]*v1.Pipeline{}}
	for _, d := range docs {
		var tm typeMeta
		if err := yaml.Unmarshal(d, &tm); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		switch {
		case tm.APIVersion == "tekton.dev/v1" && tm.Kind == "Task":
			var task v1.Task
			if err := yaml.UnmarshalStrict(d, &task); err != nil {
				t.Errorf("%s: Task: %v", where, err)
				continue
			}
			r.tasks[task.Name] = &task
		case tm.APIVersion == "tekton.dev/v1" && tm.Kind == "Pipeline":
			var p v1.Pipeline
			if err := yaml.UnmarshalStrict(d, &p); err != nil {
				t.Errorf("%s: Pipeline: %v", where, err)
				continue
			}
			r.pipelines[p.Name] = &p
		default:
			r.other = append(r.other, tm)
		}
	}
	return r
}

func readResources(t *testing.T) resources {
	t.Helper()
	files, _ := filepath.Glob(tektonDir + "/*.yaml")
	var docs [][]byte
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, documents(t, b)...)
	}
	return decodeAll(t, docs, tektonDir)
}

// TestTasksAndPipelinesValidate runs Tekton's own defaulting and Validate
// on every Task and Pipeline, and checks that each Pipeline task refers to
// an existing Task and passes exactly params that Task declares, with all
// its required ones.
func TestTasksAndPipelinesValidate(t *testing.T) {
	ctx := context.Background()
	r := readResources(t)
	if len(r.tasks) < 7 || len(r.pipelines) < 3 {
		t.Fatalf("%d Tasks and %d Pipelines", len(r.tasks), len(r.pipelines))
	}
	for name, task := range r.tasks {
		task.SetDefaults(ctx)
		if err := task.Validate(ctx); err != nil {
			t.Errorf("Task %s: %v", name, err)
		}
	}
	for name, p := range r.pipelines {
		p.SetDefaults(ctx)
		if err := p.Validate(ctx); err != nil {
			t.Errorf("Pipeline %s: %v", name, err)
		}
		for _, pt := range p.Spec.Tasks {
			task, ok := r.tasks[pt.TaskRef.Name]
			if !ok {
				t.Errorf("Pipeline %s task %s refers to missing Task %s", name, pt.Name, pt.TaskRef.Name)
				continue
			}
			checkParams(t, "Pipeline "+name+" task "+pt.Name, task.Spec.Params, pt.Params)
		}
	}
}

// checkParams: every passed param is declared with a matching type, and
// every declared param without default is passed.
func checkParams(t *testing.T, what string, declared v1.ParamSpecs, passed v1.Params) {
	t.Helper()
	for _, p := range paramProblems(declared, passed) {
		t.Errorf("%s %s", what, p)
	}
}

func paramProblems(declared v1.ParamSpecs, passed v1.Params) []string {
	var out []string
	decl := map[string]v1.ParamSpec{}
	for _, d := range declared {
		decl[d.Name] = d
	}
	set := map[string]bool{}
	for _, p := range passed {
		set[p.Name] = true
		d, ok := decl[p.Name]
		if !ok {
			out = append(out, "passes undeclared param "+p.Name)
			continue
		}
		if string(p.Value.Type) != string(d.Type) {
			out = append(out, "passes param "+p.Name+" as "+string(p.Value.Type)+"; declared "+string(d.Type))
		}
	}
	for _, d := range declared {
		if !set[d.Name] && d.Default == nil {
			out = append(out, "does not pass required param "+d.Name)
		}
	}
	return out
}

// TestParamCheckCatchesMismatches shows the param check can fail.
func TestParamCheckCatchesMismatches(t *testing.T) {
	declared := v1.ParamSpecs{{Name: "region", Type: v1.ParamTypeString}, {Name: "tags", Type: v1.ParamTypeArray}}
	passed := v1.Params{
		{Name: "regoin", Value: *v1.NewStructuredValues("us-east-1")},
		{Name: "tags", Value: *v1.NewStructuredValues("a")},
	}
	got := strings.Join(paramProblems(declared, passed), "; ")
	for _, want := range []string{"passes undeclared param regoin", "passes param tags as string; declared array", "does not pass required param region"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
}

// TestRenderedPipelineRunsValidate decodes every rendered PipelineRun (the
// repository's deploy/ and every golden deploy/) strictly, runs Validate,
// and checks its params against its Pipeline's declared params.
func TestRenderedPipelineRunsValidate(t *testing.T) {
	ctx := context.Background()
	r := readResources(t)
	files, _ := filepath.Glob(repo + "/deploy/*/*/tekton/*.pipelinerun.yaml")
	golden, _ := filepath.Glob(repo + "/golden/*/deploy/*/*/tekton/*.pipelinerun.yaml")
	files = append(files, golden...)
	if len(files) < 20 {
		t.Fatalf("only %d PipelineRuns", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var run v1.PipelineRun
		if err := yaml.UnmarshalStrict(b, &run); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		admit(&run)
		run.SetDefaults(ctx)
		if err := run.Validate(ctx); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		p, ok := r.pipelines[run.Spec.PipelineRef.Name]
		if !ok {
			t.Errorf("%s: no Pipeline %s", f, run.Spec.PipelineRef.Name)
			continue
		}
		checkParams(t, f, p.Spec.Params, run.Spec.Params)
	}
}

// admit does what the API server does before Tekton's admission webhook
// validates a run created with generateName: it picks the name.
func admit(run *v1.PipelineRun) {
	if run.Name == "" && run.GenerateName != "" {
		run.Name = run.GenerateName + "x7k2p"
	}
}
