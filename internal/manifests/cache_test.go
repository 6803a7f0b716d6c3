package manifests

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
)

// repository serves a Helm repository over TLS on loopback: index.yaml and
// the archives, each entry's digest given by digest (the archive's own
// when it returns "").
func repository(t *testing.T, archives map[string][]byte, digest func(name string) string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var index strings.Builder
	index.WriteString("apiVersion: v1\nentries:\n")
	for file, b := range archives {
		name, version, _ := strings.Cut(strings.TrimSuffix(file, ".tgz"), "@")
		d := digest(name)
		if d == "" {
			d = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		fmt.Fprintf(&index, "  %s:\n  - version: %s\n    urls: [charts/%s-%s.tgz]\n    digest: %q\n", name, version, name, version, d)
		body := b
		mux.HandleFunc("/repo/charts/"+name+"-"+version+".tgz", func(w http.ResponseWriter, _ *http.Request) { w.Write(body) })
	}
	mux.HandleFunc("/repo/index.yaml", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, index.String()) })
	s := httptest.NewTLSServer(mux)
	t.Cleanup(s.Close)
	return s
}

// TestPullChecksWhatItCaches: Pull takes a chart whose archive has the
// digest its repository's index gives and holds the chart it names, and
// the review reads it back from the cache; anything else is refused and
// nothing is cached.
func TestPullChecksWhatItCaches(t *testing.T) {
	good := manifeststest.Pack(t, filepath.Join("testdata", "c"), "eso", "1.2.3")
	s := repository(t, map[string][]byte{"eso@1.2.3.tgz": good, "liar@1.0.0.tgz": manifeststest.Pack(t, filepath.Join("testdata", "c"), "other", "1.0.0"), "bad@2.0.0.tgz": manifeststest.Pack(t, filepath.Join("testdata", "c"), "bad", "2.0.0")},
		func(name string) string {
			if name == "bad" {
				return fmt.Sprintf("%x", sha256.Sum256([]byte("something else")))
			}
			return ""
		})
	c := Cache{Dir: t.TempDir()}
	repo := s.URL + "/repo"
	ctx := context.Background()
	if _, err := c.Chart(repo, "eso", "1.2.3"); err != ErrNotCached {
		t.Fatalf("before a pull: %v", err)
	}
	if _, err := c.Pull(ctx, s.Client(), repo, "eso", "1.2.3", ""); err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chart(repo+"/", "eso", "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if objs, err := ch.Render(Release{Name: "eso", Namespace: "ns"}); err != nil || len(objs) != 5 {
		t.Fatalf("the cached chart renders %d objects: %v", len(objs), err)
	}
	for name, tc := range map[string]struct {
		repo, chart, version, want string
	}{
		"a digest that is not the archive's": {repo, "bad", "2.0.0", "but the index says"},
		"an archive of another chart":        {repo, "liar", "1.0.0", "holds chart other"},
		"a version the index lacks":          {repo, "eso", "9.9.9", "no chart eso at version 9.9.9"},
		"plain http":                         {strings.Replace(repo, "https:", "http:", 1), "eso", "1.2.3", "https URL"},
		"a name that is a path":              {repo, "../eso", "1.2.3", "not a chart name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Pull(ctx, s.Client(), tc.repo, tc.chart, tc.version, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if c.Has(tc.repo, tc.chart, tc.version) {
				t.Error("refused, yet cached")
			}
		})
	}
	// An archive changed in the cache is not read.
	p, _ := c.path(repo, "eso", "1.2.3")
	if err := os.WriteFile(p, manifeststest.Pack(t, filepath.Join("testdata", "c"), "eso", "1.2.3")[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chart(repo, "eso", "1.2.3"); err == nil || !strings.Contains(err.Error(), "pull it again") {
		t.Errorf("a changed archive: %v", err)
	}
}
