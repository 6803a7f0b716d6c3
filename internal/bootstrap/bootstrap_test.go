package bootstrap_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/kube"
)

// apiServer stands in for a cluster's API server: discovery of the groups
// Argo CD's manifests use, server-side apply, and Argo CD's group served
// only once its CustomResourceDefinitions are applied and established.
type apiServer struct {
	t       *testing.T
	mu      sync.Mutex
	objects map[string]map[string]any // by path
	order   []string
	crds    int
	gets    map[string]int
	// established counts the CRDs the server reported Established: only
	// then does it serve their group.
	established int
}

var served = map[string][][3]any{ // group/version → kind, plural, namespaced
	"v1": {{"Namespace", "namespaces", false}, {"ServiceAccount", "serviceaccounts", true}, {"ConfigMap", "configmaps", true},
		{"Secret", "secrets", true}, {"Service", "services", true}},
	"apps/v1":                      {{"Deployment", "deployments", true}, {"StatefulSet", "statefulsets", true}},
	"networking.k8s.io/v1":         {{"NetworkPolicy", "networkpolicies", true}},
	"rbac.authorization.k8s.io/v1": {{"Role", "roles", true}, {"RoleBinding", "rolebindings", true}, {"ClusterRole", "clusterroles", false}, {"ClusterRoleBinding", "clusterrolebindings", false}},
	"apiextensions.k8s.io/v1":      {{"CustomResourceDefinition", "customresourcedefinitions", false}},
	"argoproj.io/v1alpha1":         {{"Application", "applications", true}, {"AppProject", "appprojects", true}, {"ApplicationSet", "applicationsets", true}},
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer k8s-aws-v1.token" {
		http.Error(w, `{"message":"Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	gv := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/apis/"), "/api/")
	if kinds, ok := served[gv]; ok && r.Method == http.MethodGet {
		if gv == "argoproj.io/v1alpha1" && s.established < 3 {
			http.NotFound(w, r)
			return
		}
		var res []map[string]any
		for _, k := range kinds {
			res = append(res, map[string]any{"kind": k[0], "name": k[1], "namespaced": k[2]})
			res = append(res, map[string]any{"kind": k[0], "name": k[1].(string) + "/status", "namespaced": k[2]})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"resources": res})
		return
	}
	switch r.Method {
	case http.MethodPatch:
		if r.Header.Get("Content-Type") != "application/apply-patch+yaml" || r.URL.Query().Get("fieldManager") != bootstrap.FieldManager || r.URL.Query().Get("force") != "true" {
			s.t.Errorf("PATCH %s: %s %s", r.URL.Path, r.Header.Get("Content-Type"), r.URL.RawQuery)
		}
		b, _ := io.ReadAll(r.Body)
		var o map[string]any
		if err := json.Unmarshal(b, &o); err != nil {
			s.t.Errorf("PATCH %s: %v", r.URL.Path, err)
		}
		meta := o["metadata"].(map[string]any)
		if !strings.HasSuffix(r.URL.Path, "/"+meta["name"].(string)) {
			s.t.Errorf("PATCH %s of %v", r.URL.Path, meta["name"])
		}
		if ns, _ := meta["namespace"].(string); ns != "" && !strings.Contains(r.URL.Path, "/namespaces/"+ns+"/") {
			s.t.Errorf("PATCH %s of an object of namespace %s", r.URL.Path, ns)
		}
		if o["kind"] == "CustomResourceDefinition" {
			s.crds++
		}
		s.objects[r.URL.Path] = o
		s.order = append(s.order, r.URL.Path)
		_, _ = w.Write(b)
	case http.MethodGet:
		o, ok := s.objects[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		// A CustomResourceDefinition is established at its second look.
		s.gets[r.URL.Path]++
		if o["kind"] == "CustomResourceDefinition" {
			status := "False"
			if s.gets[r.URL.Path] > 1 {
				status = "True"
				if s.gets[r.URL.Path] == 2 {
					s.established++
				}
			}
			o["status"] = map[string]any{"conditions": []any{map[string]any{"type": "NamesAccepted", "status": "True"}, map[string]any{"type": "Established", "status": status}}}
		}
		_ = json.NewEncoder(w).Encode(o)
	default:
		http.Error(w, "no", http.StatusMethodNotAllowed)
	}
}

func manifests(t *testing.T) []byte {
	t.Helper()
	v, err := bootstrap.ArgoCDVersion("../../conformance/argocd/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bootstrap.DownloadManifests("go", v, "install.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rootDocs(t *testing.T, cluster string) ([]byte, string) {
	t.Helper()
	var out []byte
	for _, f := range []string{"apps/project.yaml", "root.yaml"} {
		b, err := os.ReadFile("../../deploy/staging/eu-west-1/argocd/" + cluster + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, "---\n"...), b...)
	}
	sum := sha256.Sum256(out)
	return out, hex.EncodeToString(sum[:])
}

// TestBootstrapInstallsArgoCDThenTheRoot applies Argo CD's own install
// manifests at the pinned version, then the rendered AppProject and root.
func TestBootstrapInstallsArgoCDThenTheRoot(t *testing.T) {
	// In a namespace of the fleet's choosing (gitops.argocd_namespace):
	// the manifests' ClusterRoleBindings name "argocd" for their subjects.
	docs, _ := rootDocs(t, "mc01")
	docs = []byte(strings.ReplaceAll(string(docs), "namespace: argocd", "namespace: gitops"))
	sum := sha256.Sum256(docs)
	root, err := bootstrap.CheckRoot(docs, hex.EncodeToString(sum[:]), fleetRepo)
	if err != nil {
		t.Fatal(err)
	}
	s := &apiServer{t: t, objects: map[string]map[string]any{}, gets: map[string]int{}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	// The token comes from a source, as an EKS client's does.
	kc := &kube.Client{Base: srv.URL, TokenSource: func(context.Context) (string, error) { return "k8s-aws-v1.token", nil }}
	var log strings.Builder
	if err := bootstrap.Run(context.Background(), kc, bootstrap.Install{Manifests: manifests(t), Root: root, Log: &log, Poll: time.Millisecond}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	// The namespace is made enforcing the root's Pod Security level.
	labels, _ := s.objects["/api/v1/namespaces/gitops"]["metadata"].(map[string]any)["labels"].(map[string]any)
	if labels["pod-security.kubernetes.io/enforce"] != "restricted" || labels["pod-security.kubernetes.io/warn"] != "restricted" || len(labels) != 3 {
		t.Errorf("the namespace is made with labels %v", labels)
	}
	first, last := s.order[0], s.order[len(s.order)-2:]
	if first != "/api/v1/namespaces/gitops" || strings.Join(last, " ") != "/apis/argoproj.io/v1alpha1/namespaces/gitops/appprojects/platform /apis/argoproj.io/v1alpha1/namespaces/gitops/applications/root" {
		t.Errorf("applied first %s, last %v", first, last)
	}
	for _, p := range []string{"/apis/apps/v1/namespaces/gitops/deployments/argocd-server", "/apis/apps/v1/namespaces/gitops/statefulsets/argocd-application-controller",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/applications.argoproj.io", "/apis/rbac.authorization.k8s.io/v1/clusterroles/argocd-application-controller"} {
		if s.objects[p] == nil {
			t.Errorf("%s not applied", p)
		}
	}
	// Every CRD was applied before anything of its group, and before
	// everything else of the manifests.
	crdsDone := 0
	for i, p := range s.order {
		if strings.Contains(p, "/customresourcedefinitions/") {
			crdsDone = i
		}
	}
	if crdsDone != 3 {
		t.Errorf("the CRDs were not applied right after the namespace: %v", s.order[:5])
	}
	crb := s.objects["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/argocd-server"]
	if subj := crb["subjects"].([]any)[0].(map[string]any); subj["namespace"] != "gitops" {
		t.Errorf("cluster role binding subjects %v", subj)
	}
	if n := len(s.objects); n != 1+60+2 {
		t.Errorf("%d objects applied", n)
	}
}

// TestCheckRootRefusesWhatIsNotTheRenderedRoot holds the task's input to
// what render writes: checked by its sum, one AppProject and one
// Application of it, into its own cluster.
func TestCheckRootRefusesWhatIsNotTheRenderedRoot(t *testing.T) {
	docs, sum := rootDocs(t, "mc01")
	other := func(old, new string) ([]byte, string) {
		b := []byte(strings.Replace(string(docs), old, new, 1))
		s := sha256.Sum256(b)
		return b, hex.EncodeToString(s[:])
	}
	for _, tt := range []struct {
		what string
		doc  func() ([]byte, string)
		want string
	}{
		{"cut on the way", func() ([]byte, string) { return docs[:len(docs)-10], sum }, "do not match their SHA-256"},
		{"another destination", func() ([]byte, string) {
			return other("server: https://kubernetes.default.svc\n  project", "server: https://mc02.example.com\n  project")
		}, "deploys to \"https://mc02.example.com\""},
		{"another project", func() ([]byte, string) { return other("project: platform", "project: default") }, "of project \"default\""},
		{"a third object", func() ([]byte, string) {
			return other("---\n", "---\napiVersion: v1\nkind: Secret\nmetadata: {name: x, namespace: argocd}\n---\n")
		}, "only an Argo CD AppProject and Application"},
		{"no project", func() ([]byte, string) { return other("kind: AppProject", "kind: Application") }, "another Application"},
		// The Application in another namespace than its AppProject: each
		// would be applied where it says, the root outside Argo CD's own.
		{"two namespaces", func() ([]byte, string) {
			return other("  name: root\n  namespace: argocd", "  name: root\n  namespace: kube-system")
		}, "span namespaces argocd and kube-system"},
		// A root of another source hands the cluster to whoever controls
		// that repository; a second source would add one.
		{"another repository", func() ([]byte, string) {
			return other("repoURL: "+fleetRepo, "repoURL: https://git.example.net/attacker/fleet.git")
		}, "not the fleet repository"},
		{"a second source", func() ([]byte, string) {
			return other("  source:\n", "  sources:\n    - repoURL: https://git.example.net/attacker/fleet.git\n  source:\n")
		}, "spec.sources"},
		// The namespace is made with the root's Pod Security labels, and
		// only with them: a root that enforces none, or labels otherwise,
		// is not what render writes.
		{"no Pod Security level", func() ([]byte, string) {
			return other("        pod-security.kubernetes.io/enforce: restricted\n", "")
		}, "enforces no Pod Security level"},
		{"a privileged namespace", func() ([]byte, string) {
			return other("pod-security.kubernetes.io/enforce: restricted", "pod-security.kubernetes.io/enforce: privileged")
		}, "not a Pod Security level render writes"},
		{"another label", func() ([]byte, string) {
			return other("pod-security.kubernetes.io/audit: restricted", "istio-injection: enabled")
		}, "istio-injection"},
	} {
		b, s := tt.doc()
		if _, err := bootstrap.CheckRoot(b, s, fleetRepo); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.what, err, tt.want)
		}
	}
	// The rendered root passes; without a repository to hold it to, none.
	if _, err := bootstrap.CheckRoot(docs, sum, fleetRepo); err != nil {
		t.Errorf("the rendered root: %v", err)
	}
	if _, err := bootstrap.CheckRoot(docs, sum, ""); err == nil {
		t.Error("a root was accepted without a fleet repository")
	}
}

// fleetRepo is the example fleet's gitops.repo_url.
const fleetRepo = "https://git.platform.example.com/platform/fleet.git"

// TestPinnedArgoCDIsTheImagesPin: the version render holds the argo-cd
// component to is the one make image takes install.yaml of.
func TestPinnedArgoCDIsTheImagesPin(t *testing.T) {
	v, err := bootstrap.ArgoCDVersion("../../conformance/argocd/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if v != bootstrap.PinnedArgoCD {
		t.Fatalf("conformance/argocd/go.mod pins Argo CD %s, bootstrap.PinnedArgoCD says %s", v, bootstrap.PinnedArgoCD)
	}
}
