package argohealth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
