package charts_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/argohealth"
	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

// TestHealthReporterReadsItsClustersApplications: the reporter's chart,
// rendered by Helm with a rendered Application's values, is applied for
// real into a namespace labelled as Argo CD labels it; with Argo CD's own
// Application CRD at the bootstrap's pin installed, regionctl argocd
// report's collection, run with a token the API server issues to the
// chart's ServiceAccount, reads the Applications of its cluster as that
// CRD stores them. The API server's own authorizer says the ServiceAccount
// may get and list Applications in its namespace and do nothing else asked
// here (write them, read Secrets, list another namespace's).
func TestHealthReporterReadsItsClustersApplications(t *testing.T) {
	apps := renderedApps(t, argocd.HealthReporter)
	if len(apps) == 0 {
		t.Fatal("no argocd-health-reporter Application rendered")
	}
	a := apps[0]
	objs, err := render(a.chart, a.release, a.namespace, a.values)
	if err != nil {
		t.Fatalf("%s: Helm renders %s: %v", a.file, a.chart, err)
	}
	j := newJudge(t)
	ctx := context.Background()
	src := moduleSource(t, bootstrap.ArgoCDModule, bootstrap.PinnedArgoCD)
	crd, err := os.ReadFile(filepath.Join(src, "manifests", "crds", "application-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.s.InstallCRDs(ctx, decodeStream(t, string(crd))); err != nil {
		t.Fatal(err)
	}
	j.namespace(t, a.namespace, a.namespaceLabels)
	j.namespace(t, "elsewhere", nil)
	for _, o := range objs {
		resp, err := j.s.Apply(ctx, o, a.namespace, "argocd-controller", false, nil)
		if err != nil || (resp.Status != http.StatusOK && resp.Status != http.StatusCreated) || len(resp.Warnings) > 0 {
			t.Fatalf("%s: %v %v: %v %s %v", a.file, o["kind"], o["metadata"], err, resp.Message(), resp.Warnings)
		}
	}
	global := a.values["global"].(map[string]any)["regionctl"].(map[string]any)
	cluster, region := global["cluster"].(string), global["region"].(string)
	application := func(name, clusterName, health string) map[string]any {
		return map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"cluster": clusterName, "sector": "stage", "component": name, "team": "platform"}},
			"spec": map[string]any{"project": "platform", "destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": name},
				"source": map[string]any{"repoURL": "https://git.example.com/fleet.git", "path": "charts/" + name, "targetRevision": name + "/v1.0.0"}},
			"status": map[string]any{"health": map[string]any{"status": health},
				"sync": map[string]any{"status": "Synced", "revision": strings.Repeat("a", 40)}}}
	}
	for _, o := range []map[string]any{application("root", cluster, "Healthy"), application("observability", cluster, "Degraded"), application("other", "not-"+cluster, "Healthy")} {
		if resp, err := j.s.Create(ctx, "/apis/argoproj.io/v1alpha1/namespaces/"+a.namespace+"/applications", o); err != nil || resp.Status != http.StatusCreated {
			t.Fatalf("creating Application %v: %v %s", o["metadata"], err, resp.Message())
		}
	}
	sa := "argocd-health-reporter"
	resp, err := j.s.Create(ctx, "/api/v1/namespaces/"+a.namespace+"/serviceaccounts/"+sa+"/token",
		map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}})
	if err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("a token for %s: %v %s", sa, err, resp.Message())
	}
	var token struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(resp.Body, &token); err != nil || token.Status.Token == "" {
		t.Fatalf("a token for %s: %v %s", sa, err, resp.Body)
	}
	k := &argohealth.Kube{Server: j.s.URL, Token: token.Status.Token, HTTP: j.s.HTTPClient()}
	r, err := argohealth.Collect(ctx, k, a.namespace, region, cluster, time.Now())
	if err != nil {
		t.Fatalf("the reporter, as its ServiceAccount: %v", err)
	}
	b, _ := json.Marshal(r)
	got := string(b)
	for _, want := range []string{`"name":"root"`, `"name":"observability"`, `"status":"Degraded"`, `"status":"Healthy"`, strings.Repeat("a", 40)} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %s: %s", want, got)
		}
	}
	for _, not := range []string{`"other"`, "team", "repoURL"} {
		if strings.Contains(got, not) {
			t.Errorf("the report holds %s: %s", not, got)
		}
	}
	if _, err := argohealth.Collect(ctx, k, "elsewhere", region, cluster, time.Now()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("listing another namespace's Applications: %v", err)
	}
	user := "system:serviceaccount:" + a.namespace + ":" + sa
	for _, c := range []struct {
		verb, group, resource, ns string
		want                      bool
	}{
		{"list", "argoproj.io", "applications", a.namespace, true},
		{"get", "argoproj.io", "applications", a.namespace, true},
		{"list", "argoproj.io", "applications", "elsewhere", false},
		{"update", "argoproj.io", "applications", a.namespace, false},
		{"create", "argoproj.io", "applications", a.namespace, false},
		{"list", "", "secrets", a.namespace, false},
		{"get", "argoproj.io", "appprojects", a.namespace, false},
	} {
		ok, err := j.s.Can(ctx, user, c.verb, c.group, c.resource, c.ns)
		if err != nil {
			t.Fatal(err)
		}
		if ok != c.want {
			t.Errorf("%s may %s %s.%s in %q: %v, want %v", user, c.verb, c.resource, c.group, c.ns, ok, c.want)
		}
	}
}
