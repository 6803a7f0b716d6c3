package manifests

import (
	"strings"
	"testing"
)

// TestKustomizationBuildsAsKustomizeDoes: a kustomization and the base it
// names beside it build with kustomize's own packages; one that names
// anything kustomize would fetch, or a Helm chart to inflate, is refused
// before kustomize reads it.
func TestKustomizationBuildsAsKustomizeDoes(t *testing.T) {
	tree := map[string][]byte{
		"manifests/base/kustomization.yaml":    []byte("resources: [cm.yaml]\nimages:\n- name: app\n  newTag: v2\n"),
		"manifests/base/cm.yaml":               []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"1\"\n"),
		"manifests/install/kustomization.yaml": []byte("resources: [../base, deploy.yaml]\nnamespace: argocd\n"),
		"manifests/install/deploy.yaml":        []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:v1\n"),
	}
	k, err := NewKustomization(tree, "manifests/install")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := k.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Key != "ConfigMap argocd/settings" || objs[1].Key != "Deployment.apps argocd/app" {
		t.Fatalf("objects: %v", objs)
	}
	// Built once however many clusters name it: a second call is the
	// first's objects.
	if again, err := k.Build(); err != nil || len(again) != len(objs) || &again[0] != &objs[0] {
		t.Error("a second Build built again")
	}
	if !strings.Contains(string(objs[1].YAML), "image: app:v1") {
		t.Errorf("the overlay's own image was changed:\n%s", objs[1].YAML)
	}
	for name, tc := range map[string]struct{ file, content, want string }{
		"a remote base":           {"manifests/x/kustomization.yaml", "resources:\n- github.com/argoproj/argo-cd//manifests/base?ref=v3.6.1\n", "which kustomize would fetch"},
		"a remote file":           {"manifests/x/kustomization.yaml", "resources:\n- https://raw.githubusercontent.com/o/r/main/x.yaml\n", "which kustomize would fetch"},
		"an scp-like address":     {"manifests/x/kustomization.yaml", "components:\n- git@github.com:o/r.git\n", "which kustomize would fetch"},
		"a remote patch":          {"manifests/x/kustomization.yaml", "patches:\n- path: https://example.com/p.yaml\n", "which kustomize would fetch"},
		"a remote env file":       {"manifests/x/kustomization.yaml", "configMapGenerator:\n- name: c\n  files:\n  - k=https://example.com/f\n", "which kustomize would fetch"},
		"a Helm chart":            {"manifests/x/Kustomization", "helmCharts:\n- name: x\n  repo: https://charts.example.com\n", "inflates no Helm chart"},
		"another's kustomization": {"manifests/other/kustomization.yml", "bases:\n- ssh://git@example.com/r.git\n", "which kustomize would fetch"},
		"no kustomization":        {"manifests/install/kustomization.yaml", "", "manifests/install holds no kustomization"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range tree {
				files[k] = v
			}
			if tc.content == "" {
				delete(files, tc.file)
			} else {
				files[tc.file] = []byte(tc.content)
			}
			if _, err := NewKustomization(files, "manifests/install"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}
