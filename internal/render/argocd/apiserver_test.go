package argocd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/kube/apiserver"
)

// TestARealAPIServerAdmitsEveryArgoCDObject: every Application and
// AppProject the example fleet renders, sent to a real kube-apiserver that
// serves the CRDs of the Argo CD release the bootstrap installs, is admitted
// (server-side dry run: validated against the CRDs' structural schemas in
// full, nothing stored) without a warning. The CRDs' own schemas, as the
// API server enforces them, are the judge; crd_test's CUE reading of them
// is our model.
func TestARealAPIServerAdmitsEveryArgoCDObject(t *testing.T) {
	version, err := bootstrap.ArgoCDVersion("../../../conformance/argocd/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var crds []map[string]any
	for _, name := range []string{"application-crd.yaml", "appproject-crd.yaml", "applicationset-crd.yaml"} {
		b, err := bootstrap.DownloadManifests("go", version, "crds/"+name)
		if err != nil {
			if apiserver.Required() {
				t.Fatalf("Argo CD's CRDs: %v", err)
			}
			t.Skipf("Argo CD's CRDs are not available (no module proxy?): %v", err)
		}
		var crd map[string]any
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
	}
	s := apiserver.StartTest(t)
	ctx := context.Background()
	if err := s.InstallCRDs(ctx, crds); err != nil {
		t.Fatal(err)
	}
	if resp, err := s.Create(ctx, "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "argocd"}}); err != nil || resp.Status != 201 {
		t.Fatalf("the argocd namespace: %v %v", err, resp)
	}
	collections := map[string]string{"Application": "applications", "AppProject": "appprojects", "ApplicationSet": "applicationsets"}
	n := 0
	err = filepath.WalkDir(filepath.Join("..", "..", "..", "deploy"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") || !strings.Contains(filepath.ToSlash(p), "/argocd/") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var o map[string]any
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			if o == nil || o["apiVersion"] != "argoproj.io/v1alpha1" {
				continue
			}
			kind, _ := o["kind"].(string)
			plural, ok := collections[kind]
			if !ok {
				t.Errorf("%s: an Argo CD %s, which this test does not create", p, kind)
				continue
			}
			meta := o["metadata"].(map[string]any)
			ns, _ := meta["namespace"].(string)
			if ns == "" {
				ns = "argocd"
			}
			resp, err := s.DryRun(ctx, "/apis/argoproj.io/v1alpha1/namespaces/"+ns+"/"+plural, o)
			if err != nil {
				return err
			}
			n++
			if resp.Status != 201 {
				t.Errorf("%s: %s %v refused (%d): %s", p, kind, meta["name"], resp.Status, resp.Message())
			}
			for _, w := range resp.Warnings {
				t.Errorf("%s: %s %v admitted with a warning: %s", p, kind, meta["name"], w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d Argo CD objects judged", n)
	}
	t.Logf("the API server admitted %d Argo CD objects", n)
}
