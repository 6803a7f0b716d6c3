package tekton_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	taskrunresources "github.com/tektoncd/pipeline/pkg/reconciler/taskrun/resources"
	triggersv1 "github.com/tektoncd/triggers/pkg/apis/triggers/v1beta1"
	"github.com/tektoncd/triggers/pkg/interceptors/cel"
	"github.com/tektoncd/triggers/pkg/interceptors/github"
	"github.com/tektoncd/triggers/pkg/interceptors/gitlab"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// installs are the rendered Tekton installations: the central cluster's of
// each partition and each regional cluster's.
func installs(t *testing.T) []string {
	t.Helper()
	central, _ := filepath.Glob(repo + "/deploy/central/*/tekton")
	regional, _ := filepath.Glob(repo + "/deploy/*/*/tekton/install")
	if len(central) == 0 || len(regional) < 7 {
		t.Fatalf("%d central and %d regional installations", len(central), len(regional))
	}
	return append(central, regional...)
}

// build runs kustomize on an installation as an installer would, with the
// account id it writes beside the kustomization.
func build(t *testing.T, dir, account string) []byte {
	t.Helper()
	return buildIn(t, repo, dir, account)
}

// buildIn builds an installation of the repository at root.
func buildIn(t *testing.T, root, dir, account string) []byte {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	copyInto := func(src string) {
		_ = filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			return fsys.WriteFile("/repo/"+rel, b)
		})
	}
	copyInto(root + "/pipelines")
	copyInto(dir)
	rel, _ := filepath.Rel(root, dir)
	if account != "" {
		if err := fsys.WriteFile("/repo/"+rel+"/account.env", []byte("account_id="+account+"\n")); err != nil {
			t.Fatal(err)
		}
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, "/repo/"+rel)
	if err != nil {
		if account == "" {
			return nil
		}
		t.Fatalf("%s: %v", rel, err)
	}
	out, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// installed is one built installation's objects, decoded strictly with the
// upstream projects' types.
type installed struct {
	tasks         map[string]*v1.Task
	pipelines     map[string]*v1.Pipeline
	sas           map[string]*corev1.ServiceAccount
	roles         map[string]*rbacv1.Role
	bindings      []*rbacv1.RoleBinding
	clusterRoles  map[string]*rbacv1.ClusterRole
	clusterBinds  []*rbacv1.ClusterRoleBinding
	listeners     []*triggersv1.EventListener
	templates     []*triggersv1.TriggerTemplate
	triggerBinds  []*triggersv1.TriggerBinding
	cronJobs      []*batchv1.CronJob
	configMaps    []*corev1.ConfigMap
	namespaceSeen map[string]bool

	namespaces     []*corev1.Namespace
	storageClasses []*storagev1.StorageClass
	policies       []*admissionv1.ValidatingAdmissionPolicy
	policyBindings []*admissionv1.ValidatingAdmissionPolicyBinding
}

func decodeInstall(t *testing.T, out []byte, where string) *installed {
	t.Helper()
	in := &installed{tasks: map[string]*v1.Task{}, pipelines: map[string]*v1.Pipeline{}, sas: map[string]*corev1.ServiceAccount{},
		roles: map[string]*rbacv1.Role{}, clusterRoles: map[string]*rbacv1.ClusterRole{}, namespaceSeen: map[string]bool{}}
	strict := func(d []byte, into any) {
		t.Helper()
		if err := yaml.UnmarshalStrict(d, into); err != nil {
			t.Errorf("%s: %v\n%s", where, err, d)
		}
	}
	for _, d := range bytes.Split(out, []byte("\n---\n")) {
		var tm struct {
			typeMeta
			Metadata struct{ Namespace string } `json:"metadata"`
		}
		if err := yaml.Unmarshal(d, &tm); err != nil {
			t.Fatal(err)
		}
		in.namespaceSeen[tm.Metadata.Namespace] = true
		switch tm.Kind {
		case "Task":
			var x v1.Task
			strict(d, &x)
			in.tasks[x.Name] = &x
		case "Pipeline":
			var x v1.Pipeline
			strict(d, &x)
			in.pipelines[x.Name] = &x
		case "ServiceAccount":
			var x corev1.ServiceAccount
			strict(d, &x)
			in.sas[x.Name] = &x
		case "Role":
			var x rbacv1.Role
			strict(d, &x)
			in.roles[x.Name] = &x
		case "RoleBinding":
			var x rbacv1.RoleBinding
			strict(d, &x)
			in.bindings = append(in.bindings, &x)
		case "ClusterRole":
			var x rbacv1.ClusterRole
			strict(d, &x)
			in.clusterRoles[x.Name] = &x
		case "ClusterRoleBinding":
			var x rbacv1.ClusterRoleBinding
			strict(d, &x)
			in.clusterBinds = append(in.clusterBinds, &x)
		case "EventListener":
			var x triggersv1.EventListener
			strict(d, &x)
			in.listeners = append(in.listeners, &x)
		case "TriggerTemplate":
			var x triggersv1.TriggerTemplate
			strict(d, &x)
			in.templates = append(in.templates, &x)
		case "TriggerBinding":
			var x triggersv1.TriggerBinding
			strict(d, &x)
			in.triggerBinds = append(in.triggerBinds, &x)
		case "CronJob":
			var x batchv1.CronJob
			strict(d, &x)
			in.cronJobs = append(in.cronJobs, &x)
		case "ConfigMap":
			var x corev1.ConfigMap
			strict(d, &x)
			in.configMaps = append(in.configMaps, &x)
		case "Namespace":
			var x corev1.Namespace
			strict(d, &x)
			in.namespaces = append(in.namespaces, &x)
		case "StorageClass":
			var x storagev1.StorageClass
			strict(d, &x)
			in.storageClasses = append(in.storageClasses, &x)
		case "ValidatingAdmissionPolicy":
			var x admissionv1.ValidatingAdmissionPolicy
			strict(d, &x)
			in.policies = append(in.policies, &x)
		case "ValidatingAdmissionPolicyBinding":
			var x admissionv1.ValidatingAdmissionPolicyBinding
			strict(d, &x)
			in.policyBindings = append(in.policyBindings, &x)
		default:
			t.Errorf("%s: unexpected %s", where, tm.Kind)
		}
	}
	return in
}

// TestInstallsBuildAndValidate builds each rendered installation with
// kustomize and checks what a cluster would get: every Task, Pipeline and
// Trigger resource validates with Tekton's own code; everything lives in
// one namespace; every step and container runs the regionctl image by
// digest as a non-root user; the pipeline's ServiceAccount holds its role
// of the identity chain, in the installer's account. Without the account
// the build fails rather than install a role of no account.
func TestInstallsBuildAndValidate(t *testing.T) {
	ctx := context.Background()
	for _, dir := range installs(t) {
		rel, _ := filepath.Rel(repo, dir)
		if build(t, dir, "") != nil {
			t.Errorf("%s builds without account.env", rel)
		}
		in := decodeInstall(t, build(t, dir, "111122223333"), rel)
		if len(in.tasks) < 6 || len(in.pipelines) != 2 || len(in.listeners) != 1 || len(in.templates) != 1 || len(in.cronJobs) != 1 {
			t.Fatalf("%s: %d Tasks, %d Pipelines, %d EventListeners, %d TriggerTemplates, %d CronJobs", rel, len(in.tasks), len(in.pipelines), len(in.listeners), len(in.templates), len(in.cronJobs))
		}
		// The cluster holds its scope's Pipeline and the dispatch, and
		// exactly the Tasks they use.
		scopePipeline := "regionctl-regional"
		if strings.HasPrefix(rel, "deploy/central/") {
			scopePipeline = "regionctl-central"
		}
		if in.pipelines[scopePipeline] == nil || in.pipelines["regionctl-dispatch"] == nil {
			t.Errorf("%s: Pipelines %v, want %s and regionctl-dispatch", rel, keys(in.pipelines), scopePipeline)
		}
		used := map[string]bool{}
		for _, p := range in.pipelines {
			for _, pt := range append(p.Spec.Tasks, p.Spec.Finally...) {
				used[pt.TaskRef.Name] = true
				if in.tasks[pt.TaskRef.Name] == nil {
					t.Errorf("%s: Pipeline %s uses Task %s, which is not installed", rel, p.Name, pt.TaskRef.Name)
				}
			}
		}
		for name := range in.tasks {
			if !used[name] {
				t.Errorf("%s: Task %s is installed but no Pipeline of the cluster uses it", rel, name)
			}
		}
		for ns := range in.namespaceSeen {
			if ns != "regionctl-pipelines" && ns != "" {
				t.Errorf("%s: an object in namespace %q", rel, ns)
			}
		}
		for name, task := range in.tasks {
			task.SetDefaults(ctx)
			if err := task.Validate(ctx); err != nil {
				t.Errorf("%s: Task %s: %v", rel, name, err)
			}
			steps := task.Spec.Steps
			for _, s := range steps {
				if !strings.Contains(s.Image, "/regionctl@sha256:") {
					t.Errorf("%s: Task %s step %s runs %q, not the regionctl image by digest", rel, name, s.Name, s.Image)
				}
				if s.Script != "" {
					t.Errorf("%s: Task %s step %s has a script: values must reach it as arguments", rel, name, s.Name)
				}
			}
			sc := task.Spec.StepTemplate.SecurityContext
			if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s: Task %s may run as root or escalate", rel, name)
			}
		}
		for name, p := range in.pipelines {
			p.SetDefaults(ctx)
			if err := p.Validate(ctx); err != nil {
				t.Errorf("%s: Pipeline %s: %v", rel, name, err)
			}
			for _, pt := range p.Spec.Tasks {
				if pt.Timeout == nil || pt.Timeout.Duration == 0 {
					t.Errorf("%s: Pipeline %s task %s has no timeout", rel, name, pt.Name)
				}
			}
		}
		for _, el := range in.listeners {
			el.SetDefaults(ctx)
			if err := el.Validate(ctx); err != nil {
				t.Errorf("%s: EventListener: %v", rel, err)
			}
		}
		for _, tt := range in.templates {
			tt.SetDefaults(ctx)
			if err := tt.Validate(ctx); err != nil {
				t.Errorf("%s: TriggerTemplate: %v", rel, err)
			}
		}
		for _, tb := range in.triggerBinds {
			tb.SetDefaults(ctx)
			if err := tb.Validate(ctx); err != nil {
				t.Errorf("%s: TriggerBinding: %v", rel, err)
			}
		}
		for _, cj := range in.cronJobs {
			for _, c := range append(cj.Spec.JobTemplate.Spec.Template.Spec.InitContainers, cj.Spec.JobTemplate.Spec.Template.Spec.Containers...) {
				if !strings.Contains(c.Image, "/regionctl@sha256:") || c.SecurityContext == nil || c.SecurityContext.RunAsNonRoot == nil || !*c.SecurityContext.RunAsNonRoot {
					t.Errorf("%s: CronJob container %s: image %q", rel, c.Name, c.Image)
				}
			}
		}
		pipelineSA := "regionctl-regional-pipeline"
		if strings.HasPrefix(rel, "deploy/central/") {
			pipelineSA = "regionctl-central-pipeline"
		}
		sa := in.sas[pipelineSA]
		if sa == nil {
			t.Fatalf("%s: no ServiceAccount %s", rel, pipelineSA)
		}
		arn := sa.Annotations["eks.amazonaws.com/role-arn"]
		if !strings.HasPrefix(arn, "arn:aws:iam::111122223333:role/") || (pipelineSA == "regionctl-central-pipeline") != strings.HasSuffix(arn, ":role/regionctl-central-pipeline") {
			t.Errorf("%s: %s holds %q", rel, pipelineSA, arn)
		}
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			t.Errorf("%s: %s mounts a Kubernetes token it has no use for", rel, pipelineSA)
		}
	}
}

// rulesOf are the RBAC rules a ServiceAccount gets in the namespace:
// from the RoleBindings and ClusterRoleBindings naming it.
func rulesOf(in *installed, sa, ns string) (namespaced, cluster []rbacv1.PolicyRule) {
	names := func(subjects []rbacv1.Subject, bindingNS string) bool {
		for _, s := range subjects {
			subjectNS := s.Namespace
			if subjectNS == "" {
				subjectNS = bindingNS
			}
			if s.Kind == "ServiceAccount" && s.Name == sa && subjectNS == ns {
				return true
			}
		}
		return false
	}
	for _, b := range in.bindings {
		if b.Namespace == ns && names(b.Subjects, b.Namespace) {
			switch b.RoleRef.Kind {
			case "Role":
				if r := in.roles[b.RoleRef.Name]; r != nil {
					namespaced = append(namespaced, r.Rules...)
				}
			case "ClusterRole":
				if r := in.clusterRoles[b.RoleRef.Name]; r != nil {
					namespaced = append(namespaced, r.Rules...)
				}
			}
		}
	}
	for _, b := range in.clusterBinds {
		if names(b.Subjects, "") {
			if r := in.clusterRoles[b.RoleRef.Name]; r != nil {
				cluster = append(cluster, r.Rules...)
			}
		}
	}
	return namespaced, cluster
}

func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

// TestRBACGrantsWhatTasksNeedAndNothingMore evaluates each ServiceAccount
// of each installation with Kubernetes' own rule comparison
// (k8s.io/component-helpers/auth/rbac/validation, the code the API server
// uses to refuse privilege escalation): its rules cover exactly what its
// work needs, and each need alone is not covered by any other identity.
func TestRBACGrantsWhatTasksNeedAndNothingMore(t *testing.T) {
	need := map[string]struct{ namespaced, cluster []rbacv1.PolicyRule }{
		// The EventListener: its triggers' resources, and the dispatch run.
		"regionctl-triggers": {
			namespaced: []rbacv1.PolicyRule{
				{APIGroups: []string{"triggers.tekton.dev"}, Resources: []string{"eventlisteners", "triggerbindings", "triggertemplates", "triggers", "interceptors"}, Verbs: []string{"get", "list", "watch"}},
				rule("", "configmaps", "get", "list", "watch"), rule("tekton.dev", "pipelineruns", "create"), rule("", "events", "create", "patch"),
			},
			cluster: []rbacv1.PolicyRule{{APIGroups: []string{"triggers.tekton.dev"}, Resources: []string{"clusterinterceptors", "clustertriggerbindings"}, Verbs: []string{"get", "list", "watch"}}},
		},
		// The dispatch Task and the reconcile CronJob: regionctl pipeline
		// dispatch lists, creates and patches (holds, starts, cancels) runs.
		"regionctl-dispatch": {namespaced: []rbacv1.PolicyRule{rule("tekton.dev", "pipelineruns", "get", "list", "watch", "create", "patch")}},
		// The pipelines never call the Kubernetes API.
		"regionctl-central-pipeline":  {},
		"regionctl-regional-pipeline": {},
	}
	// What no identity of an installation may do.
	never := []rbacv1.PolicyRule{
		rule("", "secrets", "get"), rule("", "secrets", "list"), rule("", "pods", "create"), rule("", "pods/exec", "create"),
		rule("", "serviceaccounts", "impersonate"), rule("", "serviceaccounts/token", "create"), rule("tekton.dev", "pipelineruns", "delete"),
		rule("tekton.dev", "tasks", "create"), rule("tekton.dev", "tasks", "update"), rule("tekton.dev", "pipelines", "update"),
		rule("rbac.authorization.k8s.io", "roles", "create"), rule("rbac.authorization.k8s.io", "rolebindings", "create"),
		rule("batch", "jobs", "create"), rule("triggers.tekton.dev", "eventlisteners", "update"),
	}
	var matrix []string
	for _, dir := range installs(t) {
		rel, _ := filepath.Rel(repo, dir)
		in := decodeInstall(t, build(t, dir, "111122223333"), rel)
		for sa := range in.sas {
			want, ok := need[sa]
			if !ok {
				t.Errorf("%s: ServiceAccount %s has no stated need", rel, sa)
				continue
			}
			namespaced, cluster := rulesOf(in, sa, "regionctl-pipelines")
			if covered, missing := validation.Covers(namespaced, want.namespaced); !covered {
				t.Errorf("%s: %s lacks %v", rel, sa, missing)
			}
			if covered, extra := validation.Covers(want.namespaced, namespaced); !covered {
				t.Errorf("%s: %s may do more than it needs: %v", rel, sa, extra)
			}
			if covered, missing := validation.Covers(cluster, want.cluster); !covered {
				t.Errorf("%s: %s lacks cluster-wide %v", rel, sa, missing)
			}
			if covered, extra := validation.Covers(want.cluster, cluster); !covered {
				t.Errorf("%s: %s may do more than it needs cluster-wide: %v", rel, sa, extra)
			}
			for _, r := range never {
				if covered, _ := validation.Covers(append(namespaced, cluster...), []rbacv1.PolicyRule{r}); covered {
					t.Errorf("%s: %s may %v %v/%v", rel, sa, r.Verbs, r.APIGroups, r.Resources)
				}
			}
			if strings.HasPrefix(rel, "deploy/central/") {
				var grants []string
				for _, r := range append(namespaced, cluster...) {
					grants = append(grants, fmt.Sprintf("%v %v", r.Verbs, r.Resources))
				}
				matrix = append(matrix, fmt.Sprintf("%-30s %s", sa, strings.Join(grants, "; ")))
			}
		}
	}
	sort.Strings(matrix)
	t.Logf("RBAC of an installation:\n%s", strings.Join(matrix, "\n"))
}

// TestRBACCheckFailsOnAWiderRole shows the comparison above can fail: a
// dispatch role that may also delete runs, or read secrets, is caught.
func TestRBACCheckFailsOnAWiderRole(t *testing.T) {
	needed := []rbacv1.PolicyRule{rule("tekton.dev", "pipelineruns", "get", "list", "watch", "create", "patch")}
	for _, wider := range [][]rbacv1.PolicyRule{
		{rule("tekton.dev", "pipelineruns", "*")},
		{rule("tekton.dev", "pipelineruns", "get", "list", "watch", "create", "patch"), rule("", "secrets", "get")},
		{rule("*", "*", "*")},
	} {
		if covered, _ := validation.Covers(needed, wider); covered {
			t.Errorf("%v is taken for no more than the need", wider)
		}
	}
}

// payload is a push as the git host sends it.
func payload(t *testing.T, webhook, ref, repoURL, after string) string {
	t.Helper()
	body := map[string]any{"ref": ref, "before": strings.Repeat("1", 40), "after": after}
	if webhook == "gitlab" {
		body["project"] = map[string]any{"git_http_url": repoURL, "git_ssh_url": "git@elsewhere:x/y.git"}
	} else {
		body["repository"] = map[string]any{"clone_url": repoURL, "ssh_url": "git@elsewhere:x/y.git"}
	}
	b, _ := json.Marshal(body)
	return string(b)
}

type secrets map[string]string

func (s secrets) Get(_ context.Context, _ string, sr *triggersv1.SecretRef) ([]byte, error) {
	v, ok := s[sr.SecretName+"/"+sr.SecretKey]
	if !ok {
		return nil, fmt.Errorf("no secret %s", sr.SecretName)
	}
	return []byte(v), nil
}

// intercept runs an EventListener's interceptors on a request with
// Triggers' own interceptor code, in order, and says whether the trigger
// fires (and why not).
func intercept(t *testing.T, el *triggersv1.EventListener, body string, header map[string][]string, sg secrets) (bool, string) {
	t.Helper()
	ctx := context.Background()
	extensions := map[string]any{}
	for _, ic := range el.Spec.Triggers[0].Interceptors {
		params := map[string]any{}
		for _, p := range ic.Params {
			var v any
			if err := json.Unmarshal(p.Value.Raw, &v); err != nil {
				t.Fatal(err)
			}
			params[p.Name] = v
		}
		req := &triggersv1.InterceptorRequest{Body: body, Header: header, InterceptorParams: params, Extensions: extensions,
			Context: &triggersv1.TriggerContext{TriggerID: "namespaces/regionctl-pipelines/triggers/push-to-deploy-branch", EventURL: "http://el"}}
		var resp *triggersv1.InterceptorResponse
		switch ic.Ref.Name {
		case "github":
			resp = github.NewInterceptor(sg).Process(ctx, req)
		case "gitlab":
			resp = gitlab.NewInterceptor(sg).Process(ctx, req)
		case "cel":
			resp = cel.NewInterceptor(sg).Process(ctx, req)
		default:
			t.Fatalf("interceptor %s", ic.Ref.Name)
		}
		if !resp.Continue {
			return false, ic.Ref.Name + ": " + resp.Status.Message
		}
		for k, v := range resp.Extensions {
			extensions[k] = v
		}
	}
	return true, ""
}

// TestTriggersVerifyPushes runs the rendered EventListener's interceptors
// (Tekton Triggers' own GitHub, GitLab and CEL code) on pushes: only a push
// signed with the webhook secret, of the push event, to the deploy branch
// of the configured repository, fires.
func TestTriggersVerifyPushes(t *testing.T) {
	const secret = "s3cr3t"
	sg := secrets{"regionctl-webhook/token": secret}
	sign := func(body, key string) string {
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(body))
		return "sha256=" + hex.EncodeToString(m.Sum(nil))
	}
	for _, webhook := range []string{"github", "gitlab"} {
		t.Run(webhook, func(t *testing.T) {
			root, dir := repo, installs(t)[0]
			if webhook == "gitlab" {
				root, dir = renderGitLab(t)
			}
			in := decodeInstall(t, buildIn(t, root, dir, "111122223333"), dir)
			el := in.listeners[0]
			repoURL := "https://git.platform.example.com/platform/fleet.git"
			after := strings.Repeat("a", 40)
			headers := func(body, key, event string) map[string][]string {
				h := map[string][]string{"Content-Type": {"application/json"}}
				switch webhook {
				case "github":
					h["X-Github-Event"] = []string{event}
					if key != "" {
						h["X-Hub-Signature-256"] = []string{sign(body, key)}
					}
				case "gitlab":
					if event == "push" {
						event = "Push Hook"
					}
					h["X-Gitlab-Event"] = []string{event}
					if key != "" {
						h["X-Gitlab-Token"] = []string{key}
					}
				}
				return h
			}
			good := payload(t, webhook, "refs/heads/main", repoURL, after)
			for _, tt := range []struct {
				what   string
				body   string
				header map[string][]string
				fires  bool
			}{
				{"a signed push to the deploy branch", good, headers(good, secret, "push"), true},
				{"an unsigned push", good, headers(good, "", "push"), false},
				{"a push signed with another secret", good, headers(good, "guess", "push"), false},
				{"another event", good, headers(good, secret, "issues"), false},
				{"a signed push to another branch", payload(t, webhook, "refs/heads/feature", repoURL, after), headers(payload(t, webhook, "refs/heads/feature", repoURL, after), secret, "push"), false},
				{"a signed push of another repository", payload(t, webhook, "refs/heads/main", "https://git.example.com/attacker/fleet.git", after),
					headers(payload(t, webhook, "refs/heads/main", "https://git.example.com/attacker/fleet.git", after), secret, "push"), false},
			} {
				fires, why := intercept(t, el, tt.body, tt.header, sg)
				if fires != tt.fires {
					t.Errorf("%s: fires %v (%s), want %v", tt.what, fires, why, tt.fires)
				}
			}
			// The repository the dispatch run fetches is the config's, not the body's.
			for _, p := range in.templates[0].Spec.ResourceTemplates {
				if !strings.Contains(string(p.Raw), `"value":"`+repoURL+`"`) || strings.Contains(string(p.Raw), "body.") {
					t.Errorf("the dispatch run takes its repository from elsewhere: %s", p.Raw)
				}
			}
		})
	}
}

// renderGitLab renders the example fleet with gitops.webhook: gitlab into
// a temporary copy, with the regionctl binary (REGIONCTL_BIN, make test
// builds it), and returns the copy and its central installation.
func renderGitLab(t *testing.T) (string, string) {
	t.Helper()
	bin := os.Getenv("REGIONCTL_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(repo + "/bin/regionctl")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no regionctl binary at %s (make build)", bin)
	}
	dir := t.TempDir()
	for _, d := range []string{"config", "charts", "pipelines"} {
		if err := os.CopyFS(filepath.Join(dir, d), os.DirFS(filepath.Join(repo, d))); err != nil {
			t.Fatal(err)
		}
	}
	g := filepath.Join(dir, "config/global/00-platform.yaml")
	b, _ := os.ReadFile(g)
	if err := os.WriteFile(g, bytes.Replace(b, []byte("webhook: github"), []byte("webhook: gitlab"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// A fleet is a git repository: render checks waves against its history,
	// and on CI (CI=true) refuses to render outside one.
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "add", "-A"},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "fleet"},
	} {
		if out, err := execCommand("git", append([]string{"-C", dir}, args...)...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, err := execCommand(bin, "--root", dir, "--no-cache", "render"); err != nil {
		t.Fatalf("render: %v\n%s", err, out)
	}
	matches, _ := filepath.Glob(dir + "/deploy/central/*/tekton")
	if len(matches) != 1 {
		t.Fatalf("the GitLab render has %d central installations", len(matches))
	}
	return dir, matches[0]
}

// execCommand runs a program and returns what it printed.
func execCommand(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

// TestHostileValuesStayArguments pushes hostile before, after and URL
// values through Tekton's own parameter substitution into every Task that
// takes them: each arrives as one whole argument of regionctl (which
// refuses it, see internal/cli), never inside shell text, because no step
// has a script.
func TestHostileValuesStayArguments(t *testing.T) {
	r := readResources(t)
	hostile := []string{`"; touch pwned; echo "`, "$(touch pwned)", "`id`", "x\ntouch pwned", "--upload-pack=touch pwned"}
	n := 0
	for name, task := range r.tasks {
		for _, h := range hostile {
			var params v1.Params
			for _, p := range task.Spec.Params {
				params = append(params, v1.Param{Name: p.Name, Value: *v1.NewStructuredValues(h)})
			}
			tr := &v1.TaskRun{Spec: v1.TaskRunSpec{Params: params}}
			spec := taskrunresources.ApplyParameters(task.Spec.DeepCopy(), tr)
			for _, s := range spec.Steps {
				if s.Script != "" {
					t.Errorf("Task %s step %s has a script", name, s.Name)
				}
				for _, a := range append(append([]string{}, s.Command...), s.Args...) {
					if strings.Contains(a, h) && a != h && !strings.HasSuffix(a, "="+h) {
						t.Errorf("Task %s step %s: %q arrives inside the argument %q", name, s.Name, h, a)
					}
					if a == h || strings.HasSuffix(a, "="+h) {
						n++
					}
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d hostile values reached an argument: the test does not substitute", n)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
