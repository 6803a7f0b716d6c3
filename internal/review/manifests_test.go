package review

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/testrepo"
)

const (
	componentsFile = "config/global/10-components.yaml"
	frontendFile   = "charts/platform-api/templates/deployment.yaml"
	schemaFile     = "charts/platform-api/values.schema.json"
)

// exampleRepo is the project's own example fleet (per-cluster Argo CD, the
// platform's charts), rendered and committed on main, with the platform
// API's chart tagged at the revision its Application names.
func exampleRepo(t *testing.T) *testrepo.Repo {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	r := testrepo.New(t, map[string]string{
		filepath.Join(root, "config"):              "config",
		filepath.Join(root, "charts"):              "charts",
		filepath.Join(root, "pipelines", "tekton"): "pipelines/tekton",
	})
	renderInto(t, r)
	tag(t, r, "platform-api/v2.14.0", r.Commit("fleet"))
	return r
}

func tag(t *testing.T, r *testrepo.Repo, name string, h plumbing.Hash) {
	t.Helper()
	if _, err := r.Git.CreateTag(name, h, nil); err != nil {
		t.Fatal(err)
	}
}

func manifestReview(t *testing.T, r *testrepo.Repo) (*diff.Report, error) {
	t.Helper()
	return manifestReviewOf(t, r, false)
}

// manifestReviewOf is manifestReview, of every cluster on both sides when
// full (--full: the files the same on both sides are settled, left out).
func manifestReviewOf(t *testing.T, r *testrepo.Repo, full bool) (*diff.Report, error) {
	t.Helper()
	res, err := Run(Options{Root: r.Dir, Base: "HEAD", Drift: true, Manifests: true, Full: full, Checker: testChecker(t),
		Render: render.Options{Renderer: testRenderer}, Trusted: true})
	if err != nil {
		return nil, err
	}
	return res.Report, nil
}

// manifest is the change of object in the report, or fails the test.
func manifest(t *testing.T, rep *diff.Report, object string) diff.ManifestChange {
	t.Helper()
	for _, m := range rep.Manifests {
		if m.Object == object {
			return m
		}
	}
	t.Fatalf("no change of %s in %+v (notes %q)", object, rep.Manifests, rep.ManifestNotes)
	return diff.ManifestChange{}
}

// TestReviewShowsRenderedManifests: render --diff renders the platform's
// charts at each side's targetRevision with each cluster's values and
// shows the objects that change, folded across the clusters they change
// on alike.
func TestReviewShowsRenderedManifests(t *testing.T) {
	r := exampleRepo(t)

	t.Run("a value", func(t *testing.T) {
		r.Edit(componentsFile, "      replicas: 3\n", "      replicas: 4\n")
		defer r.Edit(componentsFile, "      replicas: 4\n", "      replicas: 3\n")
		rep, err := manifestReview(t, r)
		if err != nil {
			t.Fatal(err)
		}
		m := manifest(t, rep, "Deployment.apps frontend")
		if m.Status != "changed" || len(m.Clusters) != 7 || m.Application != "platform-api" ||
			!strings.Contains(m.Unified, "-  replicas: 3\n+  replicas: 4\n") {
			t.Errorf("the frontend's change: %+v", m)
		}
		// The settings name each cluster's region beside the changed line:
		// folded all the same, one cluster's diff shown.
		if c := manifest(t, rep, "ConfigMap platform-api-settings"); len(c.Clusters) != 7 || !c.Varies || c.Shown != c.Clusters[0] {
			t.Errorf("the settings' change is not folded: %+v", c)
		}
		if len(rep.ManifestNotes) != 0 {
			t.Errorf("the tag is in the clone, yet: %q", rep.ManifestNotes)
		}
	})

	t.Run("a revision", func(t *testing.T) {
		// The next chart revision, tagged; the working tree's chart moves
		// on past it: the head's Application renders the tag's chart.
		r.Edit(frontendFile, "kind: Deployment\n", "kind: Deployment\n# v2.15.0\n")
		r.Edit(frontendFile, "  name: frontend\n", "  name: frontend\n  annotations:\n    revision: v2.15.0\n")
		tag(t, r, "platform-api/v2.15.0", r.Commit("platform-api v2.15.0"))
		r.Edit(frontendFile, "revision: v2.15.0", "revision: untagged")
		r.Edit(componentsFile, "platform-api/v2.14.0", "platform-api/v2.15.0")
		defer r.Edit(componentsFile, "platform-api/v2.15.0", "platform-api/v2.14.0")
		rep, err := manifestReview(t, r)
		if err != nil {
			t.Fatal(err)
		}
		m := manifest(t, rep, "Deployment.apps frontend")
		if !strings.Contains(m.Unified, "+    revision: v2.15.0\n") || strings.Contains(m.Unified, "untagged") || len(m.Clusters) != 7 {
			t.Errorf("the head's chart is not the tag's: %+v", m)
		}
	})

	t.Run("a revision this clone does not have", func(t *testing.T) {
		r.Edit(componentsFile, "platform-api/v2.14.0", "platform-api/v9.9.9")
		defer r.Edit(componentsFile, "platform-api/v9.9.9", "platform-api/v2.14.0")
		rep, err := manifestReview(t, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.ManifestNotes) != 1 || !strings.Contains(rep.ManifestNotes[0], "platform-api/v9.9.9 is not a tag or commit of this clone") {
			t.Errorf("notes: %q", rep.ManifestNotes)
		}
		m := manifest(t, rep, "Deployment.apps frontend")
		if !strings.Contains(m.Unified, "+    revision: untagged\n") {
			t.Errorf("the head's chart is not the working tree's: %+v", m)
		}
	})

	t.Run("a value the revision's schema refuses", func(t *testing.T) {
		// v2.16.0 allows at most three frontends; the working tree's chart
		// has no such limit, so render passes what the tag refuses.
		r.Edit(schemaFile, `"minimum": 1`, `"minimum": 1, "maximum": 3`)
		tag(t, r, "platform-api/v2.16.0", r.Commit("platform-api v2.16.0"))
		r.Edit(schemaFile, `"minimum": 1, "maximum": 3`, `"minimum": 1`)
		r.Edit(componentsFile, "platform-api/v2.14.0", "platform-api/v2.16.0")
		r.Edit(componentsFile, "      replicas: 3\n", "      replicas: 4\n")
		defer r.Edit(componentsFile, "      replicas: 4\n", "      replicas: 3\n")
		defer r.Edit(componentsFile, "platform-api/v2.16.0", "platform-api/v2.14.0")
		_, err := manifestReview(t, r)
		var nr *NotRendered
		if !errors.As(err, &nr) || len(nr.Diags) != 7 {
			t.Fatalf("err = %v", err)
		}
		d := nr.Diags[0]
		if d.Pos.File != componentsFile || d.Pos.Line == 0 || d.Path != "components.platform-api.values.replicas" ||
			!strings.Contains(d.Summary, "charts/platform-api/values.schema.json at platform-api/v2.16.0") {
			t.Errorf("the refusal is not at the value: %+v", d)
		}
		t.Logf("%s:%d: %s", d.Pos.File, d.Pos.Line, d.Summary)
	})

	t.Run("a chart that does not render", func(t *testing.T) {
		r.Edit(frontendFile, "# v2.15.0\n", "{{ fail \"broken on purpose\" }}\n")
		r.Edit(componentsFile, "platform-api/v2.14.0", "platform-api/v9.9.9")
		defer r.Edit(componentsFile, "platform-api/v9.9.9", "platform-api/v2.14.0")
		_, err := manifestReview(t, r)
		var me *ManifestError
		if !errors.As(err, &me) || len(me.Errs) != 7 || !strings.Contains(err.Error(), "broken on purpose") ||
			!strings.Contains(err.Error(), "us-east-1/regional platform-api") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestCentralReviewShowsRenderedManifests: in the central topology an
// Application is an ApplicationSet's template, a cluster Secret's
// annotations and the cluster's values file; the review renders what they
// make on both sides, for the clusters whose values or revision changed.
func TestCentralReviewShowsRenderedManifests(t *testing.T) {
	r := testrepo.Golden(t, "uneven-sectors")
	r.Write("charts/platform-api/templates/deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
  labels:
    region: {{ .Values.global.regionctl.region }}
spec:
  replicas: {{ .Values.replicas | default 1 }}
`)
	renderInto(t, r)
	tag(t, r, "platform-api/v2.14.0", r.Commit("fleet"))
	r.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\ncomponents:\n  platform-api:\n    values:\n      replicas: 5")
	for _, full := range []bool{false, true} {
		rep, err := manifestReviewOf(t, r, full)
		if err != nil {
			t.Fatal(err)
		}
		centralFrontend(t, rep)
	}
}

func centralFrontend(t *testing.T, rep *diff.Report) {
	t.Helper()
	m := manifest(t, rep, "Deployment.apps frontend")
	if m.Application != "platform-api" || !strings.Contains(m.Unified, "-  replicas: 1\n+  replicas: 5\n") || len(m.Clusters) == 0 {
		t.Fatalf("the frontend's change: %+v", m)
	}
	for _, c := range m.Clusters {
		if !strings.HasSuffix(c, "/regional") {
			t.Errorf("a cluster that runs no platform API: %s", c)
		}
	}
	if len(rep.Manifests) != 1 || len(rep.ManifestNotes) != 0 {
		t.Errorf("manifests %+v, notes %q", rep.Manifests, rep.ManifestNotes)
	}
	t.Logf("%d clusters: %v", len(m.Clusters), m.Clusters)
}

// A side's file the whole review settled (the same on both sides) is read
// from the base's committed deploy/; one it neither holds nor settled is
// not there, though the base committed it (a cluster the head removes).
func TestCentralSideReadsSettledFilesFromTheBase(t *testing.T) {
	base := fstest.MapFS{
		"deploy/production/argocd/clusters/eu-west-1-mc01.yaml": {Data: []byte("settled")},
		"deploy/production/argocd/clusters/eu-west-1-mc02.yaml": {Data: []byte("removed")},
	}
	s := centralSide{files: map[string][]byte{"production/argocd/applicationset-x.yaml": []byte("held")},
		settled: map[string]plumbing.Hash{"production/argocd/clusters/eu-west-1-mc01.yaml": {}}, base: base}
	for p, want := range map[string]string{
		"production/argocd/applicationset-x.yaml":        "held",
		"production/argocd/clusters/eu-west-1-mc01.yaml": "settled",
		"production/argocd/clusters/eu-west-1-mc02.yaml": "",
	} {
		if b, ok := s.get(p); string(b) != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", p, b, ok, want)
		}
	}
}
