package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// TestDiffShowsRenderedManifests: render --diff of a chart value on the
// example fleet (per-cluster Argo CD, the platform's charts) shows the
// objects that change in every form, as the schema documents them;
// --manifests=false leaves them out.
func TestDiffShowsRenderedManifests(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := testrepo.New(t, map[string]string{
		filepath.Join(root, "config"):              "config",
		filepath.Join(root, "charts"):              "charts",
		filepath.Join(root, "pipelines", "tekton"): "pipelines/tekton",
	})
	run := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := Run(append([]string{"--root", r.Dir, "--no-cache"}, args...), &out, &errs)
		return code, out.String(), errs.String()
	}
	if code, _, errs := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, errs)
	}
	r.Commit("fleet")
	r.Edit("config/global/10-components.yaml", "      replicas: 3\n", "      replicas: 4\n")
	if code, _, errs := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, errs)
	}
	r.Commit("four frontends")

	code, out, errs := run("render", "--diff", "--base", "HEAD~1", "-o", "json")
	if code != 0 {
		t.Fatalf("render --diff: exit %d\n%s", code, errs)
	}
	report, err := diffSchema(t).Compile("diff-json.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := report.Validate(v); err != nil {
		t.Errorf("render --diff -o json:\n%v", err)
	}
	var rep struct {
		Manifests []struct {
			Object   string   `json:"object"`
			Unified  string   `json:"unified"`
			Clusters []string `json:"clusters"`
		} `json:"manifests"`
		Notes []string `json:"manifest_notes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range rep.Manifests {
		if m.Object == "Deployment.apps frontend" && strings.Contains(m.Unified, "+  replicas: 4\n") && len(m.Clusters) == 7 {
			found = true
		}
	}
	// The example's chart revisions are not tags of this repository: each
	// side's charts/ is rendered, and the note says so.
	if !found || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "platform-api/v2.14.0 is not a tag or commit of this clone") {
		t.Errorf("manifests %+v, notes %q", rep.Manifests, rep.Notes)
	}
	if _, out, _ := run("render", "--diff", "--base", "HEAD~1"); !strings.Contains(out, "RENDERED MANIFESTS") || !strings.Contains(out, "Deployment.apps frontend changed") {
		t.Errorf("the text report shows no manifests:\n%s", out)
	}
	if _, out, _ := run("render", "--diff", "--base", "HEAD~1", "--manifests=false", "-o", "json"); strings.Contains(out, `"manifests"`) {
		t.Errorf("--manifests=false renders them:\n%.400s", out)
	}
}

// fixtureChart is internal/manifests' test chart.
var fixtureChart = filepath.Join("..", "manifests", "testdata", "c")

// TestChartUpgradeShownFromTheCache: charts pull fetches the Helm
// repository charts the fleet pins (over TLS, from a repository on
// loopback), --base those the base pins too; render --diff then shows a
// chart version's upgrade object by object, from the cache alone, and
// says which version is missing before it is pulled.
func TestChartUpgradeShownFromTheCache(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	archives := map[string][]byte{"0.16.2": manifeststest.Pack(t, fixtureChart, "external-secrets", "0.16.2"), "0.17.0": manifeststest.Pack(t, fixtureChart, "external-secrets", "0.17.0")}
	fetched := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/repo/index.yaml", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "apiVersion: v1\nentries:\n  external-secrets:\n")
		for v, b := range archives {
			fmt.Fprintf(w, "  - version: %s\n    urls: [charts/external-secrets-%s.tgz]\n    digest: %x\n", v, v, sha256.Sum256(b))
		}
	})
	mux.HandleFunc("/repo/charts/", func(w http.ResponseWriter, req *http.Request) {
		v := strings.TrimSuffix(strings.TrimPrefix(req.URL.Path, "/repo/charts/external-secrets-"), ".tgz")
		fetched++
		w.Write(archives[v])
	})
	s := httptest.NewTLSServer(mux)
	defer s.Close()
	old := chartClient
	// The test's client reaches its server and nothing else.
	client := s.Client()
	inner := client.Transport
	client.Transport = roundTripper(func(req *http.Request) (*http.Response, error) {
		if "https://"+req.URL.Host != s.URL {
			t.Errorf("charts pull fetched %s", req.URL)
			return nil, fmt.Errorf("not the test's server")
		}
		return inner.RoundTrip(req)
	})
	chartClient = func(time.Duration) *http.Client { return client }
	defer func() { chartClient = old }()
	t.Setenv("REGIONCTL_CHART_CACHE", t.TempDir())

	r := testrepo.New(t, map[string]string{
		filepath.Join(root, "config"):              "config",
		filepath.Join(root, "charts"):              "charts",
		filepath.Join(root, "pipelines", "tekton"): "pipelines/tekton",
	})
	r.Edit("config/global/10-components.yaml", "https://charts.external-secrets.io", s.URL+"/repo")
	run := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := Run(append([]string{"--root", r.Dir, "--no-cache"}, args...), &out, &out)
		return code, out.String()
	}
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	r.Commit("fleet")
	r.Edit("config/global/10-components.yaml", "chart_revision: 0.16.2", "chart_revision: 0.17.0")

	if code, out := run("charts", "pull", "--component", "external-secrets"); code != 0 || !strings.Contains(out, "pulled external-secrets 0.17.0 of "+s.URL+"/repo") || fetched != 1 {
		t.Fatalf("charts pull: exit %d, %d fetched\n%s", code, fetched, out)
	}
	_, out := run("render", "--diff", "--base", "HEAD", "-o", "json")
	if !strings.Contains(out, "chart external-secrets 0.16.2 of "+s.URL+"/repo is not in the chart cache (regionctl charts pull)") ||
		strings.Contains(out, `"application":"external-secrets"`) {
		t.Errorf("the base's version is not cached, yet:\n%.2000s", out)
	}

	if code, out := run("charts", "pull", "--component", "external-secrets", "--base", "HEAD"); code != 0 || !strings.Contains(out, "cached external-secrets 0.17.0") ||
		!strings.Contains(out, "pulled external-secrets 0.16.2") || fetched != 2 {
		t.Fatalf("charts pull --base: exit %d, %d fetched\n%s", code, fetched, out)
	}
	code, out := run("render", "--diff", "--base", "HEAD", "-o", "json")
	if code != 0 {
		t.Fatalf("render --diff: exit %d\n%s", code, out)
	}
	var rep struct {
		Manifests []struct {
			Application, Object, Unified string
			Clusters                     []string
		} `json:"manifests"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Manifests) != 1 || rep.Manifests[0].Object != "ConfigMap external-secrets-external-secrets" ||
		!strings.Contains(rep.Manifests[0].Unified, "-  chart: 0.16.2\n+  chart: 0.17.0\n") || len(rep.Manifests[0].Clusters) != 19 {
		t.Errorf("the upgrade's objects: %+v", rep.Manifests)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
