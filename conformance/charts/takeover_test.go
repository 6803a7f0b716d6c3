package charts_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/kube"
)

// TestArgoCDTakesOverItsBootstrap: the bootstrap applies Argo CD's
// install.yaml at the image's pin; then each cluster's argo-cd Application
// syncs what the fleet renders for it, Argo CD's own manifests
// (manifests/cluster-install, built by kustomize as Argo CD builds it) at
// its targetRevision, server-side, over those objects. Kustomize's own
// build of that directory gives the same objects with the same selectors,
// and a real API server accepts the sync over the bootstrap's install (not
// a dry run) as Argo CD's field manager; a Deployment whose selector
// differed, as the argo-helm chart's do, is refused.
func TestArgoCDTakesOverItsBootstrap(t *testing.T) {
	apps := renderedApps(t, "argo-cd")
	if len(apps) == 0 {
		t.Fatal("no argo-cd Application rendered")
	}
	var a struct {
		Spec struct {
			Source struct {
				RepoURL        string         `json:"repoURL"`
				Path           string         `json:"path"`
				TargetRevision string         `json:"targetRevision"`
				Helm           map[string]any `json:"helm"`
			} `json:"source"`
		} `json:"spec"`
	}
	b, err := os.ReadFile(filepath.Join(repo, apps[0].file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	src := a.Spec.Source
	if src.RepoURL != "https://github.com/argoproj/argo-cd.git" || src.Helm != nil || src.TargetRevision != bootstrap.PinnedArgoCD {
		t.Fatalf("%s: the argo-cd Application syncs %+v, not Argo CD's own manifests at the bootstrap's %s", apps[0].file, src, bootstrap.PinnedArgoCD)
	}
	dir := moduleSource(t, bootstrap.ArgoCDModule, src.TargetRevision)
	installYAML, err := os.ReadFile(filepath.Join(dir, "manifests", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	installed := decodeStream(t, string(installYAML))
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(dir, src.Path))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", src.Path, err)
	}
	built, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	synced := decodeStream(t, string(built))

	// The same objects, with the same selectors.
	key := func(o map[string]any) string {
		meta, _ := o["metadata"].(map[string]any)
		return fmt.Sprintf("%v/%v", o["kind"], meta["name"])
	}
	byKey := map[string]map[string]any{}
	for _, o := range installed {
		byKey[key(o)] = o
	}
	if len(installed) != len(synced) {
		t.Errorf("install.yaml has %d objects, the Application's source %d", len(installed), len(synced))
	}
	for _, o := range synced {
		i, ok := byKey[key(o)]
		if !ok {
			t.Errorf("the Application would add %s, which the bootstrap did not install", key(o))
			continue
		}
		if o["kind"] == "Deployment" || o["kind"] == "StatefulSet" {
			sel := func(x map[string]any) any { return x["spec"].(map[string]any)["selector"] }
			if !reflect.DeepEqual(sel(o), sel(i)) {
				t.Errorf("%s selects %v in the Application's source, %v as installed: the sync would be refused", key(o), sel(o), sel(i))
			}
		}
	}

	// The takeover, for real: the bootstrap itself (bootstrap.Run, as the
	// cluster's bootstrap task runs it) installs Argo CD and the cluster's
	// rendered root into a real API server, then the sync goes over it.
	j := newJudge(t)
	ctx := context.Background()
	ns := apps[0].namespace
	bootstrapCluster(t, j, filepath.Dir(filepath.Dir(apps[0].file)), installYAML)
	// It made the namespace enforcing what the argo-cd Application's first
	// sync will put there: nothing ran unchecked in between.
	made := namespaceLabels(t, j, ns)
	for k, v := range apps[0].namespaceLabels {
		if made[k] != v {
			t.Errorf("the bootstrap made namespace %s with %s=%v; the argo-cd Application syncs %v", ns, k, made[k], v)
		}
	}
	apply := func(objs []map[string]any, manager string) (refused []string) {
		crds, rest := splitCRDs(objs)
		for _, o := range append(crds, rest...) {
			resp, err := j.s.Apply(ctx, o, ns, manager, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != http.StatusOK && resp.Status != http.StatusCreated {
				refused = append(refused, fmt.Sprintf("%s (%d): %s", key(o), resp.Status, resp.Message()))
			}
			for _, w := range resp.Warnings {
				t.Errorf("%s by %s: admitted with a warning: %s", key(o), manager, w)
			}
		}
		return refused
	}
	// Applied again as the bootstrap's field manager, a no-op that shows
	// each object's admission warnings in the namespace the bootstrap made.
	if refused := apply(installed, bootstrap.FieldManager); len(refused) > 0 {
		t.Fatalf("the bootstrap's install refused: %v", refused)
	}
	if refused := apply(synced, "argocd-controller"); len(refused) > 0 {
		t.Errorf("the argo-cd Application's sync over the bootstrap's install refused: %s", strings.Join(refused, "; "))
	}
	// A source whose Deployment selects otherwise is refused: the judge
	// would catch a chart that cannot take over.
	var server map[string]any
	for _, o := range synced {
		if key(o) == "Deployment/argocd-server" {
			server = o
		}
	}
	if server == nil {
		t.Fatal("no Deployment/argocd-server in the Application's source")
	}
	other := deepCopy(t, server)
	other["spec"].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "argo-cd", "app.kubernetes.io/name": "argocd-server"}}
	other["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"] = map[string]any{"app.kubernetes.io/instance": "argo-cd", "app.kubernetes.io/name": "argocd-server"}
	if refused := apply([]map[string]any{other}, "argocd-controller"); len(refused) == 0 {
		t.Error("a Deployment with another selector was accepted over the bootstrap's: the judge cannot see a failed takeover")
	}
	t.Logf("Argo CD %s: %d objects installed by the bootstrap, %d synced over them by the argo-cd Application", src.TargetRevision, len(installed), len(synced))
}

// splitCRDs separates the CustomResourceDefinitions of objs from the rest:
// they are applied first, as Argo CD and the bootstrap apply them.
func splitCRDs(objs []map[string]any) (crds, rest []map[string]any) {
	for _, o := range objs {
		if o["kind"] == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	return crds, rest
}

// decodeStream decodes a multi-document YAML stream into its objects.
func decodeStream(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range strings.Split(s, "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// bootstrapCluster runs the bootstrap of the cluster whose rendered Argo CD
// directory is dir (root.yaml and apps/project.yaml, as the pipeline hands
// them to the task) against the judge's API server, with Argo CD's
// install.yaml.
func bootstrapCluster(t *testing.T, j *judge, dir string, installYAML []byte) {
	t.Helper()
	var docs []byte
	for _, f := range []string{"apps/project.yaml", "root.yaml"} {
		b, err := os.ReadFile(filepath.Join(repo, dir, f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(append(docs, "---\n"...), b...)
	}
	sum := sha256.Sum256(docs)
	root, err := bootstrap.CheckRoot(docs, hex.EncodeToString(sum[:]), fleetRepoURL(t))
	if err != nil {
		t.Fatal(err)
	}
	kc := &kube.Client{Base: j.s.URL, Token: j.s.AdminToken, HTTP: j.s.HTTPClient()}
	var log strings.Builder
	if err := bootstrap.Run(context.Background(), kc, bootstrap.Install{Manifests: installYAML, Root: root, Log: &log, Poll: 100 * time.Millisecond}); err != nil {
		t.Fatalf("the bootstrap: %v\n%s", err, log.String())
	}
}

// namespaceLabels are the labels namespace ns has in the judge's API
// server.
func namespaceLabels(t *testing.T, j *judge, ns string) map[string]any {
	t.Helper()
	resp, err := j.s.Do(context.Background(), "GET", "/api/v1/namespaces/"+ns, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var made struct {
		Metadata struct {
			Labels map[string]any `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(resp.Body, &made); err != nil {
		t.Fatal(err)
	}
	return made.Metadata.Labels
}
