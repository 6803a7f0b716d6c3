package argohealth

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// argocd answers /api/v1/applications as Argo CD does, from a fixed list,
// filtering by the label selector.
func argocd(t *testing.T, apps []map[string]any) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/applications" || r.Header.Get("Authorization") != "Bearer secret-token" {
			http.Error(w, `{"error":"unauthorized","code":16}`, http.StatusUnauthorized)
			return
		}
		want := map[string]string{}
		for _, kv := range strings.Split(r.URL.Query().Get("selector"), ",") {
			k, v, _ := strings.Cut(kv, "=")
			want[k] = v
		}
		var items []map[string]any
		for _, a := range apps {
			labels := a["metadata"].(map[string]any)["labels"].(map[string]string)
			match := true
			for k, v := range want {
				match = match && labels[k] == v
			}
			if match {
				items = append(items, a)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": items})
	}))
}

func app(name, sector, component, health, sync string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": name, "namespace": "argocd", "labels": map[string]string{"sector": sector, "component": component}},
		"spec":     map[string]any{"project": "platform"},
		"status": map[string]any{
			"health": map[string]any{"status": health},
			"sync":   map[string]any{"status": sync, "revision": "abc123"},
		},
	}
}

func TestCheck(t *testing.T) {
	srv := argocd(t, []map[string]any{
		app("us-west-2-mc01-hypershift-operator", "stage", "hypershift-operator", "Healthy", "Synced"),
		app("eu-west-1-mc01-hypershift-operator", "stage", "hypershift-operator", "Healthy", "Synced"),
		app("us-west-2-mc01-observability", "stage", "observability", "Degraded", "Synced"),
		app("us-east-1-mc01-hypershift-operator", "sector-1", "hypershift-operator", "Progressing", "OutOfSync"),
	})
	defer srv.Close()
	c := &Client{Server: srv.URL, Token: "secret-token"}
	if s, err := c.Check("stage", "hypershift-operator", ""); err != nil || !strings.Contains(s, "2 Applications") {
		t.Errorf("healthy component: %q %v", s, err)
	}
	if _, err := c.Check("stage", "", ""); err == nil || !strings.Contains(err.Error(), "us-west-2-mc01-observability is Degraded and Synced") {
		t.Errorf("whole sector with a degraded app: %v", err)
	}
	if _, err := c.Check("sector-1", "hypershift-operator", ""); err == nil || !strings.Contains(err.Error(), "Progressing and OutOfSync") {
		t.Errorf("syncing app: %v", err)
	}
	if _, err := c.Check("sector-2", "", ""); err == nil || !strings.Contains(err.Error(), "no Application matches sector=sector-2") {
		t.Errorf("no apps: %v", err)
	}
	bad := &Client{Server: strings.TrimPrefix(srv.URL, "http://"), Plaintext: true, Token: "wrong"}
	if _, err := bad.Check("stage", "", ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("bad token: %v", err)
	}
}

// rootApp and helmApp are Applications of the per-cluster topology: the
// root tracks the fleet repository's commit, a component its chart version.
func clusterApp(name, sector, region, cluster, component, health, sync, revision string, revisions ...string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": name, "namespace": "argocd", "labels": map[string]string{
			"sector": sector, "region": region, "cluster": cluster, "component": component}},
		"status": map[string]any{
			"health": map[string]any{"status": health},
			"sync":   map[string]any{"status": sync, "revision": revision, "revisions": revisions},
		},
	}
}

// TestGateAsksEachClustersArgoCD: the gate asks every cluster's own Argo
// CD, passes only when each cluster's Applications are Healthy and Synced
// and its root (or a multi-source Application's fleet source) is at the
// commit or after it, and names the clusters that block.
func TestGateAsksEachClustersArgoCD(t *testing.T) {
	r := testrepo.New(t, nil)
	r.Write("a", "1")
	introduced := r.Commit("introduce").String()
	r.Write("a", "2")
	later := r.Commit("later").String()
	r.Write("a", "3")
	repo, err := gitbase.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	before := "0123456789abcdef0123456789abcdef01234567" // not in the repository

	mc01 := argocd(t, []map[string]any{
		clusterApp("root", "stage", "eu-west-1", "mc01", "root", "Healthy", "Synced", later),
		clusterApp("hypershift-operator", "stage", "eu-west-1", "mc01", "hypershift-operator", "Healthy", "Synced", "hypershift-operator/v0.1.59"),
	})
	defer mc01.Close()
	mc02 := argocd(t, []map[string]any{
		clusterApp("root", "stage", "eu-west-1", "mc02", "root", "Healthy", "Synced", before),
		clusterApp("hypershift-operator", "stage", "eu-west-1", "mc02", "hypershift-operator", "Healthy", "Synced", "hypershift-operator/v0.1.58"),
	})
	defer mc02.Close()
	central := argocd(t, []map[string]any{
		// Multi-source: the chart's version and the $values commit.
		clusterApp("us-west-2-mc01-hypershift-operator", "stage", "us-west-2", "mc01", "hypershift-operator", "Healthy", "Synced", "", "v0.1.59", introduced),
	})
	defer central.Close()

	gate := func(targets ...Target) *Gate {
		return &Gate{Client: Client{Token: "secret-token", Repo: repo}, Targets: func(string) ([]Target, error) { return targets, nil }}
	}
	good := gate(Target{"eu-west-1", "mc01", mc01.URL}, Target{"us-west-2", "mc01", central.URL})
	if s, err := good.Check("stage", "hypershift-operator", introduced); err != nil || !strings.Contains(s, "2 Applications on 2 clusters") {
		t.Errorf("healthy at or after the commit: %q %v", s, err)
	}
	_, err = gate(Target{"eu-west-1", "mc01", mc01.URL}, Target{"eu-west-1", "mc02", mc02.URL}).Check("stage", "hypershift-operator", introduced)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 clusters of stage block:\n  eu-west-1/mc02: root is synced at 01234567") || strings.Contains(err.Error(), "eu-west-1/mc01:") {
		t.Errorf("a cluster whose root is behind: %v", err)
	}
	// Multi-source Applications carry their commits in revisions: an
	// Application synced at an older $values commit blocks.
	if _, err := good.Check("stage", "hypershift-operator", later); err == nil || !strings.Contains(err.Error(), "us-west-2/mc01: us-west-2-mc01-hypershift-operator is synced at") {
		t.Errorf("multi-source behind the commit: %v", err)
	}
	// A cluster whose Argo CD holds none of the component's Applications.
	if _, err := gate(Target{"eu-west-1", "mc01", mc01.URL}).Check("stage", "cert-manager", introduced); err == nil || !strings.Contains(err.Error(), "no Application of cert-manager") {
		t.Errorf("missing component: %v", err)
	}
	// An unreachable Argo CD blocks its cluster, said in a few words, one
	// line per cluster; without a token the refusal says none was given.
	_, err = gate(Target{"eu-west-1", "mc09", "http://127.0.0.1:1"}).Check("stage", "", introduced)
	if err == nil || !strings.Contains(err.Error(), "\n  eu-west-1/mc09: cannot reach Argo CD at http://127.0.0.1:1: the connection was refused") || strings.Contains(err.Error(), "token") {
		t.Errorf("unreachable: %v", err)
	}
	tokenless := &Gate{Client: Client{Repo: repo}, Targets: func(string) ([]Target, error) { return []Target{{"eu-west-1", "mc09", "http://127.0.0.1:1"}}, nil }}
	if _, err := tokenless.Check("stage", "", introduced); err == nil || !strings.Contains(err.Error(), "No Argo CD token was given (--argocd-auth-token or $ARGOCD_AUTH_TOKEN)") {
		t.Errorf("no token: %v", err)
	}
}

// TestUnreachableSaysWhy: a name that does not resolve is said as such,
// not as the resolver's whole answer.
func TestUnreachableSaysWhy(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "https://argocd.mc01.eu-west-1.internal/api/v1/applications", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "argocd.mc01.eu-west-1.internal", Server: "10.255.255.53:53", IsNotFound: true}}}
	if got := unreachable(err); got != "the name argocd.mc01.eu-west-1.internal does not resolve here" {
		t.Errorf("unreachable(%v) = %q", err, got)
	}
}

func TestWithEnvFillsOnlyWhatTheFlagsLeftOut(t *testing.T) {
	env := map[string]string{"ARGOCD_SERVER": "argocd.example.com", "ARGOCD_AUTH_TOKEN": "from-env"}
	c := Client{Token: "from-flag"}
	c.WithEnv(func(k string) string { return env[k] })
	if c.Server != "argocd.example.com" || c.Token != "from-flag" {
		t.Errorf("server %q token %q", c.Server, c.Token)
	}
}
