package tekton_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tektoncd/pipeline/pkg/apis/config"
	pipelineimages "github.com/tektoncd/pipeline/pkg/apis/pipeline"
	v1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"github.com/tektoncd/pipeline/pkg/pod"
	"github.com/tektoncd/pipeline/pkg/workspace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakek8s "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/kube/apiserver"
)

// namespace is the example fleet's gitops.tekton_namespace.
const namespace = "regionctl-pipelines"

// manager is the field manager of the test's applies, as kubectl apply
// --server-side names itself.
const manager = "kubectl"

// upstream are the decoded objects of the files matching glob in module's
// directory at the version go.mod pins (Tekton's own release config).
func upstream(t *testing.T, module, glob string) []map[string]any {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), glob))
	if len(files) == 0 {
		t.Fatalf("no %s in %s", glob, module)
	}
	var objs []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, decodeObjects(t, b, f)...)
	}
	return objs
}

// decodeObjects decodes a multi-document YAML stream into objects.
func decodeObjects(t *testing.T, b []byte, where string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, d := range documents(t, b) {
		var o map[string]any
		if err := yaml.Unmarshal(d, &o); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs
}

func kindName(o map[string]any) string {
	meta, _ := o["metadata"].(map[string]any)
	return fmt.Sprintf("%v %v", o["kind"], meta["name"])
}

// tektonServer is a real API server with Tekton Pipelines' and Triggers'
// CustomResourceDefinitions and Triggers' core ClusterInterceptors, at the
// versions go.mod pins, as a cluster has them before an installation.
func tektonServer(t *testing.T) *apiserver.Server {
	t.Helper()
	s := apiserver.StartTest(t)
	ctx := context.Background()
	crds := upstream(t, "github.com/tektoncd/pipeline", "config/300-crds/*.yaml")
	crds = append(crds, upstream(t, "github.com/tektoncd/triggers", "config/300-*.yaml")...)
	if err := s.InstallCRDs(ctx, crds); err != nil {
		t.Fatal(err)
	}
	for _, o := range upstream(t, "github.com/tektoncd/triggers", "config/interceptors/core-interceptors.yaml") {
		if o["kind"] != "ClusterInterceptor" {
			continue
		}
		applied(t, s, o, false, nil)
	}
	return s
}

// applied server-side applies o (for real, or as a dry run) and fails t
// unless the API server admits it without a warning.
func applied(t *testing.T, s *apiserver.Server, o map[string]any, dryRun bool, as http.Header) {
	t.Helper()
	resp, err := s.Apply(context.Background(), o, namespace, manager, dryRun, as)
	if err != nil {
		t.Fatalf("%s: %v", kindName(o), err)
	}
	if resp.Status != http.StatusOK && resp.Status != http.StatusCreated {
		t.Errorf("%s: refused (%d): %s", kindName(o), resp.Status, resp.Message())
	}
	for _, w := range resp.Warnings {
		t.Errorf("%s: admitted with a warning: %s", kindName(o), w)
	}
}

// buildObjects builds an installation with kustomize, as kubectl apply -k
// does, and decodes its objects, the Namespace first.
func buildObjects(t *testing.T, dir string) []map[string]any {
	t.Helper()
	objs := decodeObjects(t, build(t, dir, "111122223333"), dir)
	sort.SliceStable(objs, func(i, j int) bool { return objs[i]["kind"] == "Namespace" && objs[j]["kind"] != "Namespace" })
	return objs
}

// TestARealAPIServerAppliesEachInstall server-side applies every rendered
// Tekton installation, built with kustomize, to a real kube-apiserver with
// RBAC and Pod Security on and Tekton's own CRDs: every object is admitted
// without a warning. Then, with one regional and the central installation
// applied for real, the API server's own authorizer and admission decide
// what the installation's identities may do (see the subtests).
func TestARealAPIServerAppliesEachInstall(t *testing.T) {
	s := tektonServer(t)
	dirs := installs(t)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(repo, dir)
		t.Run(rel, func(t *testing.T) {
			objs := buildObjects(t, dir)
			if objs[0]["kind"] != "Namespace" {
				t.Fatalf("%s holds no Namespace", rel)
			}
			// The Namespace for real (its objects need it), the rest as a
			// dry run: each installation is judged as a fresh cluster's.
			applied(t, s, objs[0], false, nil)
			for _, o := range objs[1:] {
				applied(t, s, o, true, nil)
			}
		})
	}

	regional := filepath.Join(repo, "deploy", "production", "us-east-1", "tekton", "install")
	for _, o := range buildObjects(t, regional) {
		applied(t, s, o, false, nil)
	}
	t.Run("rights", func(t *testing.T) { checkRights(t, s, "regionctl-regional-pipeline") })
	t.Run("admission policy", func(t *testing.T) {
		checkRunPolicy(t, s, regional, "regionctl-regional", "regionctl-regional-pipeline",
			filepath.Join(repo, "deploy", "production", "us-east-1", "tekton", "mc01.pipelinerun.yaml"))
	})
	t.Run("workspace claims", func(t *testing.T) { checkClaims(t, s, regional) })

	central, _ := filepath.Glob(filepath.Join(repo, "deploy", "central", "*", "tekton"))
	for _, o := range buildObjects(t, central[0]) {
		applied(t, s, o, false, nil)
	}
	regionalRun, _ := filepath.Glob(filepath.Join(repo, "deploy", "*", "*", "tekton", "regional.pipelinerun.yaml"))
	t.Run("central rights", func(t *testing.T) { checkRights(t, s, "regionctl-central-pipeline") })
	t.Run("central admission policy", func(t *testing.T) {
		checkRunPolicy(t, s, central[0], "regionctl-central", "regionctl-central-pipeline", regionalRun[0])
	})
}

// right is one request a ServiceAccount might make.
type right struct {
	verb, group, resource string
	cluster               bool // cluster-scoped (else in the installation's namespace)
}

func (r right) String() string {
	where := namespace
	if r.cluster {
		where = "cluster"
	}
	return fmt.Sprintf("%s %s/%s (%s)", r.verb, r.group, r.resource, where)
}

// rights are the requests the matrix asks about: what each identity's
// work needs, and what an attacker holding its token would want.
var rights = []right{
	{"create", "tekton.dev", "pipelineruns", false}, {"get", "tekton.dev", "pipelineruns", false},
	{"list", "tekton.dev", "pipelineruns", false}, {"watch", "tekton.dev", "pipelineruns", false},
	{"patch", "tekton.dev", "pipelineruns", false}, {"update", "tekton.dev", "pipelineruns", false},
	{"delete", "tekton.dev", "pipelineruns", false}, {"create", "tekton.dev", "pipelineruns", true},
	{"create", "tekton.dev", "taskruns", false}, {"create", "tekton.dev", "pipelines", false},
	{"update", "tekton.dev", "tasks", false},
	{"get", "triggers.tekton.dev", "eventlisteners", false}, {"list", "triggers.tekton.dev", "triggertemplates", false},
	{"update", "triggers.tekton.dev", "triggertemplates", false}, {"get", "triggers.tekton.dev", "clusterinterceptors", true},
	{"get", "", "configmaps", false}, {"create", "", "events", false},
	{"get", "", "secrets", false}, {"list", "", "secrets", true},
	{"create", "", "pods", false}, {"create", "", "pods/exec", false}, {"create", "", "serviceaccounts/token", false},
	{"create", "rbac.authorization.k8s.io", "rolebindings", false}, {"bind", "rbac.authorization.k8s.io", "clusterroles", true},
	{"impersonate", "", "serviceaccounts", false}, {"create", "batch", "jobs", false},
}

// checkRights asks the API server's own authorizer (SubjectAccessReview),
// for each of the installation's ServiceAccounts and every request of
// rights, whether it is allowed, and compares with the intended grants:
// the EventListener reads its Triggers' objects and creates PipelineRuns,
// the dispatch manages PipelineRuns, the pipeline's identity (which holds
// the AWS role) nothing at all.
func checkRights(t *testing.T, s *apiserver.Server, pipelineSA string) {
	intended := map[string][]string{
		"regionctl-triggers": {
			"create tekton.dev/pipelineruns (" + namespace + ")",
			"get triggers.tekton.dev/eventlisteners (" + namespace + ")", "list triggers.tekton.dev/triggertemplates (" + namespace + ")",
			"get triggers.tekton.dev/clusterinterceptors (cluster)",
			"get /configmaps (" + namespace + ")", "create /events (" + namespace + ")",
		},
		"regionctl-dispatch": {
			"create tekton.dev/pipelineruns (" + namespace + ")", "get tekton.dev/pipelineruns (" + namespace + ")",
			"list tekton.dev/pipelineruns (" + namespace + ")", "watch tekton.dev/pipelineruns (" + namespace + ")",
			"patch tekton.dev/pipelineruns (" + namespace + ")",
		},
		pipelineSA: nil,
		"default":  nil,
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| request | %s |\n|---|%s\n", strings.Join(keys(intended), " | "), strings.Repeat("---|", len(intended)))
	for _, r := range rights {
		fmt.Fprintf(&table, "| %s |", r)
		for _, sa := range keys(intended) {
			ns := namespace
			if r.cluster {
				ns = ""
			}
			allowed, err := s.Can(context.Background(), "system:serviceaccount:"+namespace+":"+sa, r.verb, r.group, r.resource, ns)
			if err != nil {
				t.Fatal(err)
			}
			want := false
			for _, w := range intended[sa] {
				want = want || w == r.String()
			}
			if allowed != want {
				t.Errorf("%s may %s: %v, intended %v", sa, r, allowed, want)
			}
			fmt.Fprintf(&table, " %s |", map[bool]string{true: "allowed", false: "denied"}[allowed])
		}
		table.WriteString("\n")
	}
	t.Logf("the API server's answers (SubjectAccessReview):\n%s", table.String())
}

// checkRunPolicy creates PipelineRuns as the installation's identities,
// impersonated, against the installed ValidatingAdmissionPolicy: each may
// create the run it exists for and nothing else.
func checkRunPolicy(t *testing.T, s *apiserver.Server, dir, pipeline, pipelineSA, runFile string) {
	ctx := context.Background()
	sa := func(name string) string { return "system:serviceaccount:" + namespace + ":" + name }
	in := decodeInstall(t, build(t, dir, "111122223333"), dir)
	// The dispatch run as the EventListener makes it from its template.
	var dispatchRun map[string]any
	tmpl, _ := json.Marshal(in.templates[0].Spec.ResourceTemplates[0])
	tmpl = []byte(strings.NewReplacer("$(tt.params.before)", strings.Repeat("a", 40), "$(tt.params.after)", strings.Repeat("b", 40)).Replace(string(tmpl)))
	if err := json.Unmarshal(tmpl, &dispatchRun); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	clusterRun := decodeObjects(t, b, runFile)[0]
	with := func(run map[string]any, change func(spec map[string]any)) map[string]any {
		j, _ := json.Marshal(run)
		var c map[string]any
		_ = json.Unmarshal(j, &c)
		change(c["spec"].(map[string]any))
		return c
	}
	same := func(map[string]any) {}
	cases := []struct {
		name, as string
		run      map[string]any
		admitted bool
	}{
		{"the EventListener starts the dispatch", "regionctl-triggers", dispatchRun, true},
		{"the EventListener starts a cluster's run", "regionctl-triggers", clusterRun, false},
		{"the EventListener starts the dispatch as the pipeline's identity", "regionctl-triggers", with(dispatchRun, func(s map[string]any) {
			s["taskRunTemplate"] = map[string]any{"serviceAccountName": pipelineSA}
		}), false},
		{"the EventListener overrides a task's identity", "regionctl-triggers", with(dispatchRun, func(s map[string]any) {
			s["taskRunSpecs"] = []any{map[string]any{"pipelineTaskName": "dispatch", "serviceAccountName": pipelineSA}}
		}), false},
		{"the EventListener runs an inline Pipeline", "regionctl-triggers", with(dispatchRun, func(s map[string]any) {
			delete(s, "pipelineRef")
			s["pipelineSpec"] = map[string]any{"tasks": []any{map[string]any{"name": "x", "taskRef": map[string]any{"name": "regionctl-terraform"}}}}
		}), false},
		{"the EventListener resolves a Pipeline from elsewhere", "regionctl-triggers", with(dispatchRun, func(s map[string]any) {
			s["pipelineRef"] = map[string]any{"resolver": "git", "params": []any{map[string]any{"name": "url", "value": "https://evil.example.com/p.git"}}}
		}), false},
		{"the dispatch starts a cluster's run", "regionctl-dispatch", clusterRun, true},
		{"the dispatch starts the dispatch", "regionctl-dispatch", dispatchRun, false},
		{"the dispatch adds a pod template", "regionctl-dispatch", with(clusterRun, func(s map[string]any) {
			s["taskRunTemplate"].(map[string]any)["podTemplate"] = map[string]any{"hostNetwork": true}
		}), false},
		{"the dispatch runs the cluster's Pipeline as the dispatch", "regionctl-dispatch", with(clusterRun, func(s map[string]any) {
			s["taskRunTemplate"] = map[string]any{"serviceAccountName": "regionctl-dispatch"}
		}), false},
		{"the pipeline's identity starts its own run", pipelineSA, clusterRun, false},
		{"an administrator starts an inline run", "", with(dispatchRun, same), true},
	}
	if !strings.Contains(fmt.Sprint(clusterRun["spec"]), pipeline) {
		t.Fatalf("%s does not run %s", runFile, pipeline)
	}
	// The API server loads a policy, or a change of it, a moment after it
	// is stored: the cases are asked again until every answer is the
	// intended one, or 30 seconds have passed.
	var wrong, answers []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		wrong, answers = nil, nil
		for _, c := range cases {
			var as http.Header
			if c.as != "" {
				as = apiserver.As(sa(c.as))
			}
			resp, err := s.Do(ctx, "POST", "/apis/tekton.dev/v1/namespaces/"+namespace+"/pipelineruns?dryRun=All", c.run, as)
			if err != nil {
				t.Fatal(err)
			}
			answer := fmt.Sprint(resp.Status)
			if resp.Status != http.StatusCreated {
				answer += " " + firstLine(resp.Message())
			}
			if got := resp.Status == http.StatusCreated; got != c.admitted {
				wrong = append(wrong, fmt.Sprintf("%s: admitted %v, want %v (%s)", c.name, got, c.admitted, answer))
			}
			answers = append(answers, c.name+": "+answer)
		}
		if len(wrong) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range wrong {
		t.Error(w)
	}
	t.Logf("the API server's answers:\n%s", strings.Join(answers, "\n"))

	// The dispatch cancels a run it created (its one update).
	resp, err := s.Do(ctx, "POST", "/apis/tekton.dev/v1/namespaces/"+namespace+"/pipelineruns", clusterRun, apiserver.As(sa("regionctl-dispatch")))
	if err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("the dispatch's run: %v %v", err, resp)
	}
	var created struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	_ = json.Unmarshal(resp.Body, &created)
	resp, err = s.Do(ctx, "PATCH", "/apis/tekton.dev/v1/namespaces/"+namespace+"/pipelineruns/"+created.Metadata.Name,
		map[string]any{"spec": map[string]any{"status": "Cancelled"}}, withType(apiserver.As(sa("regionctl-dispatch")), "application/merge-patch+json"))
	if err != nil || resp.Status != http.StatusOK {
		t.Errorf("the dispatch cancels its run: %v %d %s", err, resp.Status, resp.Message())
	}
}

func withType(h http.Header, contentType string) http.Header {
	h.Set("Content-Type", contentType)
	return h
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// checkClaims creates the workspace claim of each run the installation
// starts (the dispatch's, and a cluster's), as Tekton creates it from the
// volumeClaimTemplate: the claim names the installation's StorageClass,
// which exists with the EBS CSI driver as provisioner (on EKS 1.30 and
// later no StorageClass is the default, and a claim of none stays
// Pending forever); a volume of that class binds it, bound by the test as
// the volume controller would.
func checkClaims(t *testing.T, s *apiserver.Server, dir string) {
	ctx := context.Background()
	in := decodeInstall(t, build(t, dir, "111122223333"), dir)
	if len(in.storageClasses) != 1 || in.storageClasses[0].Provisioner != "ebs.csi.aws.com" {
		t.Fatalf("the installation holds %d StorageClasses, want one of ebs.csi.aws.com", len(in.storageClasses))
	}
	class := in.storageClasses[0].Name
	resp, err := s.Do(ctx, "GET", "/apis/storage.k8s.io/v1/storageclasses/"+class, nil, nil)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("StorageClass %s is not in the cluster: %v %v", class, err, resp)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "..", "*.pipelinerun.yaml"))
	templates := []*v1.PipelineRun{}
	for _, f := range runs {
		b, _ := os.ReadFile(f)
		var run v1.PipelineRun
		if err := yaml.UnmarshalStrict(b, &run); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		templates = append(templates, &run)
	}
	var dispatch v1.PipelineRun
	j, _ := json.Marshal(in.templates[0].Spec.ResourceTemplates[0])
	if err := json.Unmarshal(j, &dispatch); err != nil {
		t.Fatal(err)
	}
	templates = append(templates, &dispatch)
	for i, run := range templates {
		for _, w := range run.Spec.Workspaces {
			if w.VolumeClaimTemplate == nil {
				t.Errorf("%s: workspace %s has no volumeClaimTemplate", run.GenerateName, w.Name)
				continue
			}
			name := fmt.Sprintf("pvc-%d", i)
			claim := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": name},
				"spec": w.VolumeClaimTemplate.Spec}
			resp, err := s.Create(ctx, "/api/v1/namespaces/"+namespace+"/persistentvolumeclaims", claim)
			if err != nil || resp.Status != http.StatusCreated {
				t.Fatalf("%s's claim: %v %d %s", run.GenerateName, err, resp.Status, resp.Message())
			}
			var got corev1.PersistentVolumeClaim
			_ = json.Unmarshal(resp.Body, &got)
			if got.Spec.StorageClassName == nil || *got.Spec.StorageClassName != class {
				t.Errorf("%s's claim is of StorageClass %v, not %s", run.GenerateName, got.Spec.StorageClassName, class)
				continue
			}
			size := got.Spec.Resources.Requests[corev1.ResourceStorage]
			volume := map[string]any{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": map[string]any{"name": "pv-" + name},
				"spec": map[string]any{"capacity": map[string]any{"storage": size.String()}, "accessModes": []string{"ReadWriteOnce"},
					"storageClassName": class, "persistentVolumeReclaimPolicy": "Delete",
					"csi":      map[string]any{"driver": in.storageClasses[0].Provisioner, "volumeHandle": "vol-" + name},
					"claimRef": map[string]any{"namespace": namespace, "name": name, "uid": string(got.UID)}}}
			if resp, err := s.Create(ctx, "/api/v1/persistentvolumes", volume); err != nil || resp.Status != http.StatusCreated {
				t.Fatalf("the volume of %s: %v %d %s", name, err, resp.Status, resp.Message())
			}
			got.Spec.VolumeName = "pv-" + name
			resp, err = s.Do(ctx, "PUT", "/api/v1/namespaces/"+namespace+"/persistentvolumeclaims/"+name, got, nil)
			if err != nil || resp.Status != http.StatusOK {
				t.Fatalf("binding %s: %v %d %s", name, err, resp.Status, resp.Message())
			}
			_ = json.Unmarshal(resp.Body, &got)
			got.Status.Phase = corev1.ClaimBound
			resp, err = s.Do(ctx, "PUT", "/api/v1/namespaces/"+namespace+"/persistentvolumeclaims/"+name+"/status", got, nil)
			if err != nil || resp.Status != http.StatusOK {
				t.Fatalf("%s's status: %v %d %s", name, err, resp.Status, resp.Message())
			}
		}
	}
	if len(templates) < 2 {
		t.Fatalf("only %d runs in %s", len(templates), dir)
	}
}

// TestTektonsPodsAreAdmitted builds the Pod of each Task of the regional
// and the central installation with Tekton's own pod builder (the
// TaskRun reconciler's: its injected prepare and place-scripts init
// containers, its volumes, the workspace as a claim) under the pipeline's
// ServiceAccount, and creates it in a real API server in the installation's
// namespace, which enforces the restricted Pod Security Standard. With
// Tekton's set-security-context feature flag every Pod is admitted without
// a warning; without it (Tekton's default) Kubernetes refuses them, which
// is why the installation's README requires the flag.
func TestTektonsPodsAreAdmitted(t *testing.T) {
	s := tektonServer(t)
	ctx := context.Background()
	central, _ := filepath.Glob(filepath.Join(repo, "deploy", "central", "*", "tekton"))
	for _, dir := range []string{filepath.Join(repo, "deploy", "production", "us-east-1", "tekton", "install"), central[0]} {
		for _, o := range buildObjects(t, dir) {
			applied(t, s, o, false, nil)
		}
		in := decodeInstall(t, build(t, dir, "111122223333"), dir)
		var pipelineSA string
		for name := range in.sas {
			if strings.HasSuffix(name, "-pipeline") {
				pipelineSA = name
			}
		}
		for _, flag := range []bool{true, false} {
			flags, err := config.NewFeatureFlagsFromMap(map[string]string{"set-security-context": fmt.Sprint(flag)})
			if err != nil {
				t.Fatal(err)
			}
			cfg := config.FromContextOrDefaults(ctx)
			cfg.FeatureFlags = flags
			fctx := config.ToContext(ctx, cfg)
			var accounts []runtime.Object
			for _, a := range in.sas {
				a := a.DeepCopy()
				a.Namespace = namespace
				accounts = append(accounts, a)
			}
			builder := pod.Builder{KubeClient: fakek8s.NewSimpleClientset(accounts...), Images: pipelineimages.Images{
				EntrypointImage: "ghcr.io/tektoncd/pipeline/entrypoint@sha256:" + strings.Repeat("1", 64), SidecarLogResultsImage: "s",
				NopImage: "n", ShellImage: "busybox", ShellImageWin: "w", WorkingDirInitImage: "ghcr.io/tektoncd/pipeline/workingdirinit@sha256:" + strings.Repeat("2", 64)}}
			for _, name := range keys(in.tasks) {
				task := in.tasks[name].DeepCopy()
				task.SetDefaults(fctx)
				sa := pipelineSA
				if name == "regionctl-dispatch" {
					sa = "regionctl-dispatch"
				}
				var bindings []v1.WorkspaceBinding
				for _, w := range task.Spec.Workspaces {
					bindings = append(bindings, v1.WorkspaceBinding{Name: w.Name, PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "pvc-0"}})
				}
				tr := &v1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name + "-run", Namespace: namespace, UID: "6a1c3d0e-0000-4000-8000-000000000001"},
					Spec: v1.TaskRunSpec{ServiceAccountName: sa, TaskRef: &v1.TaskRef{Name: name}, Workspaces: bindings}}
				spec, err := workspace.Apply(fctx, task.Spec, bindings, workspace.CreateVolumes(bindings))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				p, err := builder.Build(fctx, tr, *spec)
				if err != nil {
					t.Fatalf("Tekton builds no Pod of %s: %v", name, err)
				}
				p.Name = fmt.Sprintf("%s-%v", name, flag)
				resp, err := s.Do(ctx, "POST", "/api/v1/namespaces/"+namespace+"/pods?dryRun=All", p, nil)
				if err != nil {
					t.Fatal(err)
				}
				admitted := resp.Status == http.StatusCreated && len(resp.Warnings) == 0
				if admitted != flag {
					t.Errorf("%s's Pod with set-security-context %v: admitted %v (%d %s %v)", name, flag, admitted, resp.Status, resp.Message(), resp.Warnings)
				} else if !flag {
					t.Logf("without set-security-context, %s's Pod: %s", name, firstLine(resp.Message()))
				}
			}
		}
	}
}
