// Package kubetest is an in-memory Kubernetes API of Tekton PipelineRuns
// for tests: the list, create and merge-patch calls kube.Client makes.
package kubetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/kube"
)

// Start serves a Server for the test's life; its client's token is "token"
// and its namespace "pipelines".
func Start(t *testing.T) (*Server, *kube.Client) {
	s := &Server{runs: map[string]map[string]any{}, now: time.Unix(0, 0)}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, &kube.Client{Base: srv.URL, Token: "token"}
}

// Runs returns the PipelineRuns by name.
func (s *Server) Runs() map[string]map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[string]any{}
	for k, v := range s.runs {
		out[k] = v
	}
	return out
}

// Server is an in-memory stand-in of the Kubernetes API for Tekton
// PipelineRuns: list by label selector, create (generateName), and JSON
// merge patch, the calls kube.Client makes; it also checks the bearer
// token.
type Server struct {
	mu   sync.Mutex
	runs map[string]map[string]any // name → object
	n    int
	now  time.Time
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer token" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	const base = "/apis/tekton.dev/v1/namespaces/pipelines/pipelineruns"
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == base:
		var items []any
		for _, o := range s.runs {
			if matches(o, r.URL.Query().Get("labelSelector")) {
				items = append(items, o)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"items": items})
	case r.Method == http.MethodPost && r.URL.Path == base:
		var o map[string]any
		if err := json.Unmarshal(body, &o); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		meta := o["metadata"].(map[string]any)
		s.n++
		s.now = s.now.Add(time.Minute)
		name := fmt.Sprintf("%s%d", meta["generateName"], s.n)
		meta["name"], meta["creationTimestamp"] = name, s.now.Format(time.RFC3339)
		s.runs[name] = o
		_ = json.NewEncoder(w).Encode(o)
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, base+"/"):
		name := strings.TrimPrefix(r.URL.Path, base+"/")
		o, ok := s.runs[name]
		if !ok || r.Header.Get("Content-Type") != "application/merge-patch+json" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var patch map[string]any
		_ = json.Unmarshal(body, &patch)
		spec := o["spec"].(map[string]any)
		for k, v := range patch["spec"].(map[string]any) {
			if v == nil {
				delete(spec, k)
			} else {
				spec[k] = v
			}
		}
		_ = json.NewEncoder(w).Encode(o)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// matches is the API server's equality-based label selector: k=v (or
// k==v) needs the label with that value, k!=v its absence or another value.
func matches(o map[string]any, selector string) bool {
	labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
	for _, kv := range strings.Split(selector, ",") {
		if k, v, ok := strings.Cut(kv, "!="); ok {
			if got, has := labels[k]; has && got == v {
				return false
			}
			continue
		}
		k, v, _ := strings.Cut(strings.Replace(kv, "==", "=", 1), "=")
		if k != "" && labels[k] != v {
			return false
		}
	}
	return true
}

// Finish sets a run's Succeeded condition, as Tekton does when it ends.
func (s *Server) Finish(name, status, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[name]["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Succeeded", "status": status, "reason": reason}}}
}
