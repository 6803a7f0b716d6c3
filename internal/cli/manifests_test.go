package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

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
