package tekton_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/kube/apiserver"
)

// TestARealAPIServerAdmitsTheInstall: the objects a regional cluster's
// Tekton install creates in its namespace (the rendered ServiceAccounts and
// CronJob, pipelines/rbac's roles and bindings), created in a real
// kube-apiserver with RBAC and PodSecurity on, in a namespace that enforces
// the restricted Pod Security Standard: every one is admitted without a
// warning, and so is the Pod the Job controller makes of the CronJob, and
// a Pod of each Task's steps as their stepTemplate secures them. The Pod
// Security Standards are Kubernetes' (pod-security.kubernetes.io), decided
// by its own admission plugin.
func TestARealAPIServerAdmitsTheInstall(t *testing.T) {
	s := apiserver.StartTest(t)
	ctx := context.Background()
	const ns = "regionctl-pipelines"
	created := func(what, path string, obj map[string]any) {
		t.Helper()
		resp, err := s.Create(ctx, path, obj)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp.Status != 201 {
			t.Errorf("%s: refused (%d): %s", what, resp.Status, resp.Message())
		}
		for _, w := range resp.Warnings {
			t.Errorf("%s: admitted with a warning: %s", what, w)
		}
	}
	created("the namespace", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns, "labels": map[string]any{
			"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}})

	root := filepath.Join("..", "..", "..")
	install := filepath.Join(root, "deploy", "production", "us-east-1", "tekton", "install")
	var objs []map[string]any
	for _, f := range []string{filepath.Join(root, "pipelines", "rbac", "rbac.yaml"), filepath.Join(install, "serviceaccount.yaml"), filepath.Join(install, "cronjob.yaml")} {
		objs = append(objs, documents(t, f)...)
	}
	var cronJob map[string]any
	for _, o := range objs {
		kind := o["kind"].(string)
		name := o["metadata"].(map[string]any)["name"].(string)
		path, namespaced := collection(kind)
		if path == "" {
			t.Fatalf("%s %s: no collection known for its kind", kind, name)
		}
		if namespaced {
			o["metadata"].(map[string]any)["namespace"] = ns
			path = strings.Replace(path, "{ns}", ns, 1)
		}
		if kind == "CronJob" {
			cronJob = o
		}
		created(kind+" "+name, path, o)
	}
	if cronJob == nil {
		t.Fatal("no CronJob rendered")
	}
	// The Pod of a run of the CronJob, as the Job controller makes it.
	spec := cronJob["spec"].(map[string]any)["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"]
	created("the reconcile's Pod", "/api/v1/namespaces/"+ns+"/pods", map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "regionctl-reconcile-1"}, "spec": spec})

	// A Pod of each Task's steps, secured as its stepTemplate secures them,
	// under the ServiceAccount the rendered PipelineRuns run their tasks as.
	run := documents(t, filepath.Join(root, "deploy", "production", "us-east-1", "tekton", "mc01.pipelinerun.yaml"))[0]
	account := run["spec"].(map[string]any)["taskRunTemplate"].(map[string]any)["serviceAccountName"]
	tasks, _ := filepath.Glob(filepath.Join(root, "pipelines", "tekton", "task-*.yaml"))
	if len(tasks) < 5 {
		t.Fatalf("only %d Tasks", len(tasks))
	}
	for _, f := range tasks {
		for _, task := range documents(t, f) {
			name := task["metadata"].(map[string]any)["name"].(string)
			tspec := task["spec"].(map[string]any)
			template, _ := tspec["stepTemplate"].(map[string]any)
			var containers []any
			for i, st := range tspec["steps"].([]any) {
				step := st.(map[string]any)
				c := map[string]any{"name": fmt.Sprintf("step-%d", i), "image": "regionctl"}
				if template != nil && template["securityContext"] != nil {
					c["securityContext"] = template["securityContext"]
				}
				if step["securityContext"] != nil {
					c["securityContext"] = step["securityContext"]
				}
				containers = append(containers, c)
			}
			created("a Pod of Task "+name, "/api/v1/namespaces/"+ns+"/pods", map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": name + "-pod"}, "spec": map[string]any{"restartPolicy": "Never", "serviceAccountName": account, "containers": containers}})
		}
	}
}

// documents are the YAML documents of file, decoded.
func documents(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(b), "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// collection is the API path that creates kind, with {ns} for its
// namespace, and whether it is namespaced.
func collection(kind string) (string, bool) {
	switch kind {
	case "ServiceAccount":
		return "/api/v1/namespaces/{ns}/serviceaccounts", true
	case "ConfigMap":
		return "/api/v1/namespaces/{ns}/configmaps", true
	case "Role":
		return "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", true
	case "RoleBinding":
		return "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", true
	case "ClusterRole":
		return "/apis/rbac.authorization.k8s.io/v1/clusterroles", false
	case "ClusterRoleBinding":
		return "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", false
	case "CronJob":
		return "/apis/batch/v1/namespaces/{ns}/cronjobs", true
	}
	return "", false
}
