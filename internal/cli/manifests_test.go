package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/regionctl/regionctl/internal/manifests"
	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// TestDiffShowsRenderedManifests: render --diff of a chart value on the
// example fleet (per-cluster Argo CD, the platform's charts) shows the
// objects that change in every form, as the schema documents them;
// --manifests=false leaves them out.
func TestDiffShowsRenderedManifests(t *testing.T) {
	r := exampleFleet(t)
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

// exampleFleet is a new repository holding the example fleet's config,
// charts and Pipelines, nothing committed.
func exampleFleet(t *testing.T) *testrepo.Repo {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return testrepo.New(t, map[string]string{
		filepath.Join(root, "config"):              "config",
		filepath.Join(root, "charts"):              "charts",
		filepath.Join(root, "pipelines", "tekton"): "pipelines/tekton",
	})
}

// committedFleet is the example fleet in a new repository, with old
// replaced by new in its components, rendered and committed, and a run of
// regionctl in it that returns the exit code and what it printed.
func committedFleet(t *testing.T, old, new string) (*testrepo.Repo, func(args ...string) (int, string)) {
	t.Helper()
	r := exampleFleet(t)
	r.Edit("config/global/10-components.yaml", old, new)
	run := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := Run(append([]string{"--root", r.Dir, "--no-cache"}, args...), &out, &out)
		return code, out.String()
	}
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	r.Commit("fleet")
	return r, run
}

// TestChartUpgradeShownFromTheCache: charts pull fetches the Helm
// repository charts the fleet pins (over TLS, from a repository on
// loopback), --base those the base pins too; render --diff then shows a
// chart version's upgrade object by object, from the cache alone, and
// says which version is missing before it is pulled.
func TestChartUpgradeShownFromTheCache(t *testing.T) {
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
	r, run := committedFleet(t, "https://charts.external-secrets.io", s.URL+"/repo")
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
	rep := reviewOfHead(t, run)
	if len(rep.Manifests) != 1 || rep.Manifests[0].Object != "ConfigMap external-secrets-external-secrets" ||
		!strings.Contains(rep.Manifests[0].Unified, "-  chart: 0.16.2\n+  chart: 0.17.0\n") || len(rep.Manifests[0].Clusters) != 19 {
		t.Errorf("the upgrade's objects: %+v", rep.Manifests)
	}
	// Back down, with the upgrade committed: one component's pull pins the
	// working tree's version alone, whatever the base names.
	r.Commit("upgrade")
	r.Edit("config/global/10-components.yaml", "chart_revision: 0.17.0", "chart_revision: 0.16.2")
	if code, out := run("charts", "pull", "--component", "external-secrets", "--base", "HEAD"); code != 0 {
		t.Fatalf("charts pull of the downgrade: exit %d\n%s", code, out)
	}
	if lock := r.Read("charts.lock"); strings.Contains(lock, "0.17.0") || !strings.Contains(lock, `"revision":"0.16.2"`) {
		t.Errorf("the lock pins other than the working tree's version:\n%s", lock)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// maestroRepository is another project's git repository, served over TLS
// by git's http-backend: charts/maestro-server at the tags v0.8.1 and
// v0.9.0, whose ConfigMap says its chart's version. It returns the URL,
// the certificate to trust, and a function that moves a tag to a new
// commit, as a project that re-tags a release does.
func maestroRepository(t *testing.T) (string, []byte, func(tag string)) {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	chart := filepath.Join(src, "charts", "maestro-server")
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(chart, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("templates/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: maestro-settings\ndata:\n  chart: {{ .Chart.Version | quote }}\n  replicas: {{ .Values.replicas | quote }}\n")
	git := func(args ...string) { manifeststest.Git(t, src, args...) }
	git("init", "-q", "-b", "main")
	for _, v := range []string{"0.8.1", "0.9.0"} {
		write("Chart.yaml", "apiVersion: v2\nname: maestro-server\nversion: "+v+"\n")
		git("add", ".")
		git("commit", "-qm", "maestro "+v)
		git("tag", "-a", "-m", "release", "v"+v)
	}
	manifeststest.Git(t, root, "clone", "-q", "--bare", "src", "maestro.git")
	url, ca := manifeststest.GitServer(t, root)
	move := func(tag string) {
		write("templates/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: retagged\n")
		git("add", ".")
		git("commit", "-qm", "retagged")
		git("tag", "-f", "-a", "-m", "release again", tag)
		git("push", "-qf", filepath.Join(root, "maestro.git"), "refs/tags/"+tag)
	}
	return url + "/maestro.git", ca, move
}

// TestGitChartUpgradeShownFromTheCache: charts pull fetches a chart
// directory of another project's git repository at the tag the fleet pins
// and pins the commit in charts.lock; render --diff then shows the upgrade
// object by object from the cache alone, with the commit each tag named.
// A moved tag is refused until --update pins it, and a cache holding
// another commit than the side's lock pins is not rendered.
func TestGitChartUpgradeShownFromTheCache(t *testing.T) {
	url, ca, moveTag := maestroRepository(t)
	old := chartGitCA
	chartGitCA = ca
	defer func() { chartGitCA = old }()
	t.Setenv("REGIONCTL_CHART_CACHE", t.TempDir())
	const maestro = "      git_url: https://github.com/openshift-online/maestro.git\n      path: charts/maestro-server\n    chart_revision: "
	r, run := committedFleet(t, maestro+"v0.8.1", strings.Replace(maestro, "https://github.com/openshift-online/maestro.git", url, 1)+"v0.8.1")
	pull := func(args ...string) (int, string) {
		return run(append([]string{"charts", "pull", "--component", "maestro-server"}, args...)...)
	}

	if code, out := pull("--locked"); code != 1 || !strings.Contains(out, "charts.lock does not pin 1 of the fleet's charts") || !strings.Contains(out, "charts/maestro-server at v0.8.1 of "+url) {
		t.Fatalf("charts pull --locked without a lock: exit %d\n%s", code, out)
	}
	if code, out := pull(); code != 0 || !strings.Contains(out, "pulled charts/maestro-server at v0.8.1 of "+url+" (commit ") || !strings.Contains(out, "wrote charts.lock") {
		t.Fatalf("charts pull: exit %d\n%s", code, out)
	}
	r.Commit("pins")
	r.Edit("config/global/10-components.yaml", "path: charts/maestro-server\n    chart_revision: v0.8.1", "path: charts/maestro-server\n    chart_revision: v0.9.0")
	if code, out := pull(); code != 0 || !strings.Contains(out, "cached charts/maestro-server at v0.8.1") && !strings.Contains(out, "pulled charts/maestro-server at v0.9.0") {
		t.Fatalf("charts pull of v0.9.0: exit %d\n%s", code, out)
	}
	lock := r.Read("charts.lock")
	if strings.Contains(lock, "v0.8.1") || !strings.Contains(lock, `"revision":"v0.9.0"`) || strings.Count(lock, `"commit"`) != 1 {
		t.Errorf("the lock pins other than the working tree's charts:\n%s", lock)
	}
	if code, out := pull("--locked"); code != 0 || !strings.Contains(out, "cached charts/maestro-server at v0.9.0") {
		t.Fatalf("charts pull --locked, pinned and cached: exit %d\n%s", code, out)
	}

	review := func() (int, string, manifestsReport) {
		t.Helper()
		code, out := run("render", "--diff", "--base", "HEAD", "-o", "json")
		var rep manifestsReport
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
		}
		return code, out, rep
	}
	code, out, rep := review()
	if code != 0 {
		t.Fatalf("render --diff: exit %d\n%s", code, out)
	}
	if len(rep.Manifests) != 1 || rep.Manifests[0].Object != "ConfigMap maestro-settings" || rep.Manifests[0].Application != "maestro-server" ||
		!strings.Contains(rep.Manifests[0].Unified, "-  chart: 0.8.1\n+  chart: 0.9.0\n") || len(rep.Manifests[0].Clusters) != 7 {
		t.Errorf("the upgrade's objects: %+v", rep.Manifests)
	}
	if len(rep.Notes) != 2 || !strings.Contains(rep.Notes[1], "charts/maestro-server at v0.9.0 of "+url+" rendered as commit ") {
		t.Errorf("the review does not say which commit it rendered, or says more: %q", rep.Notes)
	}

	// The project moves the tag. A fresh cache cannot take it under the
	// lock; --update pins the new commit.
	moveTag("v0.9.0")
	pinned := r.Read("charts.lock")
	t.Setenv("REGIONCTL_CHART_CACHE", t.TempDir())
	if code, out := pull("--locked"); code != 1 || !strings.Contains(out, "charts/maestro-server at v0.9.0 of "+url+" is served at commit ") || !strings.Contains(out, "but charts.lock pins commit ") {
		t.Fatalf("charts pull --locked of a moved tag: exit %d\n%s", code, out)
	}
	if code, out := pull("--base", "HEAD"); code != 1 || !strings.Contains(out, "the tag moved") {
		t.Fatalf("charts pull of a moved tag: exit %d\n%s", code, out)
	}
	if code, out := pull("--update", "--base", "HEAD"); code != 0 || !strings.Contains(out, "wrote charts.lock") || r.Read("charts.lock") == pinned {
		t.Fatalf("charts pull --update: exit %d\n%s", code, out)
	}
	if _, out, rep := review(); len(rep.Manifests) != 2 || !strings.Contains(out, "ConfigMap retagged") {
		t.Errorf("the moved tag's chart is not what the review shows: %+v", rep.Manifests)
	}
	// The cache holds the moved tag's commit; a lock that pins the old one
	// is not rendered against it.
	r.Write("charts.lock", pinned)
	if _, out, rep := review(); len(rep.Manifests) != 0 || !strings.Contains(out, "maestro-server: the chart cache holds charts/maestro-server at v0.9.0 of "+url+" at commit ") ||
		!strings.Contains(out, "but the head's charts.lock pins ") {
		t.Errorf("a cache that is not what the lock pins is rendered: %+v\n%.2000s", rep.Manifests, out)
	}
	// A lock that is not one pull writes fails the review at its line.
	r.Write("charts.lock", strings.Replace(pinned, `"commit"`, `"comit"`, 1))
	if code, out, _ := review(); code != 1 || !strings.Contains(out, "charts.lock:2: json: unknown field \"comit\"") {
		t.Errorf("a malformed lock: exit %d\n%s", code, out)
	}
}

// reviewOfHead is render --diff --base HEAD -o json, which must pass.
func reviewOfHead(t *testing.T, run func(args ...string) (int, string)) manifestsReport {
	t.Helper()
	code, out := run("render", "--diff", "--base", "HEAD", "-o", "json")
	if code != 0 {
		t.Fatalf("render --diff: exit %d\n%s", code, out)
	}
	var rep manifestsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// manifestsReport is what the manifests tests read of render --diff -o json.
type manifestsReport struct {
	Manifests []struct {
		Application, Object, Unified string
		Clusters                     []string
	} `json:"manifests"`
	Notes []string `json:"manifest_notes"`
}

// TestOCIChartUpgradeShownFromTheCache: an OCI registry's chart is
// rendered as Argo CD's OCI source; charts pull fetches it at the tag the
// fleet pins (over TLS, from a registry on loopback) and pins its
// manifest in charts.lock; render --diff shows its upgrade object by
// object from the cache, with the manifest each tag named.
func TestOCIChartUpgradeShownFromTheCache(t *testing.T) {
	s, push := manifeststest.OCIRegistry(t)
	for _, v := range []string{"0.16.2", "0.17.0"} {
		push("charts/external-secrets", v, manifests.HelmConfigMediaType, manifeststest.Pack(t, fixtureChart, "external-secrets", v), manifests.HelmChartMediaType)
	}
	old := chartClient
	chartClient = func(time.Duration) *http.Client { return s.Client() }
	defer func() { chartClient = old }()
	t.Setenv("REGIONCTL_CHART_CACHE", t.TempDir())
	registry := "oci://" + strings.TrimPrefix(s.URL, "https://") + "/charts"
	r, run := committedFleet(t, "https://charts.external-secrets.io", registry)
	app := r.Read("deploy/production/us-east-1/argocd/mc01/apps/external-secrets.yaml")
	if !strings.Contains(app, "    path: .\n    repoURL: "+registry+"/external-secrets\n") || strings.Contains(app, "chart: external-secrets") {
		t.Fatalf("the OCI chart's Application is not Argo CD's OCI source:\n%s", app)
	}
	if code, out := run("charts", "pull", "--component", "external-secrets"); code != 0 || !strings.Contains(out, "pulled "+registry+"/external-secrets at 0.16.2 (sha256 ") {
		t.Fatalf("charts pull: exit %d\n%s", code, out)
	}
	r.Commit("pins")
	r.Edit("config/global/10-components.yaml", "chart_revision: 0.16.2", "chart_revision: 0.17.0")
	if code, out := run("charts", "pull", "--component", "external-secrets", "--locked"); code != 1 || !strings.Contains(out, "charts.lock does not pin 1 of the fleet's charts") {
		t.Fatalf("charts pull --locked of a new tag: exit %d\n%s", code, out)
	}
	if code, out := run("charts", "pull", "--component", "external-secrets"); code != 0 || !strings.Contains(out, "wrote charts.lock") {
		t.Fatalf("charts pull: exit %d\n%s", code, out)
	}
	rep := reviewOfHead(t, run)
	if len(rep.Manifests) != 1 || rep.Manifests[0].Object != "ConfigMap external-secrets-external-secrets" ||
		!strings.Contains(rep.Manifests[0].Unified, "-  chart: 0.16.2\n+  chart: 0.17.0\n") || len(rep.Manifests[0].Clusters) != 19 {
		t.Errorf("the upgrade's objects: %+v", rep.Manifests)
	}
	if len(rep.Notes) != 2 || !strings.Contains(rep.Notes[1], registry+"/external-secrets at 0.17.0 rendered as manifest sha256:") {
		t.Errorf("notes: %q", rep.Notes)
	}
}

// TestKustomizationUpgradeShownFromTheCache: a component that is another
// project's kustomization (chart.type: kustomize) is pulled with the tree
// that holds its bases, pinned by commit, and render --diff shows its
// upgrade object by object, built by kustomize's own packages.
func TestKustomizationUpgradeShownFromTheCache(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	git := func(args ...string) { manifeststest.Git(t, src, args...) }
	write := func(name, content string) {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("manifests/install/kustomization.yaml", "resources: [../base]\n")
	write("manifests/base/kustomization.yaml", "resources: [cm.yaml]\n")
	git("init", "-q", "-b", "main")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		write("manifests/base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fluent-bit\ndata:\n  version: \""+v+"\"\n")
		git("add", ".")
		git("commit", "-qm", v)
		git("tag", "v"+v)
	}
	manifeststest.Git(t, root, "clone", "-q", "--bare", "src", "logging.git")
	url, ca := manifeststest.GitServer(t, root)
	old := chartGitCA
	chartGitCA = ca
	defer func() { chartGitCA = old }()
	t.Setenv("REGIONCTL_CHART_CACHE", t.TempDir())
	const anchor = "  maestro-agent:\n"
	logging := "  logging:\n    runs_on: [management]\n    chart:\n      git_url: " + url + "/logging.git\n      path: manifests/install\n      type: kustomize\n    chart_revision: v1.0.0\n    namespace: logging\n"
	r, run := committedFleet(t, anchor, logging+anchor)
	if code, out := run("charts", "pull", "--component", "logging"); code != 0 || !strings.Contains(out, "pulled manifests/install at v1.0.0 of "+url+"/logging.git (commit ") {
		t.Fatalf("charts pull: exit %d\n%s", code, out)
	}
	r.Commit("pins")
	r.Edit("config/global/10-components.yaml", "type: kustomize\n    chart_revision: v1.0.0", "type: kustomize\n    chart_revision: v1.1.0")
	if code, out := run("charts", "pull", "--component", "logging"); code != 0 {
		t.Fatalf("charts pull: exit %d\n%s", code, out)
	}
	rep := reviewOfHead(t, run)
	if len(rep.Manifests) != 1 || rep.Manifests[0].Object != "ConfigMap fluent-bit" || rep.Manifests[0].Application != "logging" ||
		!strings.Contains(rep.Manifests[0].Unified, "-  version: 1.0.0\n+  version: 1.1.0\n") || len(rep.Manifests[0].Clusters) != 12 {
		t.Errorf("the upgrade's objects: %+v", rep.Manifests)
	}
	if len(rep.Notes) != 2 || !strings.Contains(rep.Notes[1], "kustomization manifests/install at v1.1.0 of "+url+"/logging.git built as commit ") {
		t.Errorf("notes: %q", rep.Notes)
	}
}
