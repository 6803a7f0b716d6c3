package prcomment

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestGitLabTokenFollowsNoRedirectElsewhere: an API that redirects to
// another host (or to plain http) never receives the token there.
func TestGitLabTokenFollowsNoRedirectElsewhere(t *testing.T) {
	var leaked []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("PRIVATE-TOKEN"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	defer thief.Close()
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+r.URL.Path, http.StatusFound)
	}))
	defer api.Close()
	u, _ := url.Parse(api.URL + "/api/v4")
	g := NewGitLab(u, "secret-token", "group/proj", 7)
	g.http.Transport = api.Client().Transport
	_, err := g.Comments(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refusing to follow a redirect") {
		t.Errorf("a redirect to another host: %v", err)
	}
	if len(leaked) > 0 {
		t.Errorf("the token reached %s: %q", thief.URL, leaked)
	}
}
