package charts_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"
)

// upstreamChart is another project's chart that the Go module proxy
// serves: its project's repository holds it, at the version of the module
// that carries the chart version the fleet pins.
type upstreamChart struct {
	component string
	module    string
	// version is the module version whose repository holds the chart at
	// the component's chart_revision ("" when none is known).
	version func(rev string) string
	dir     string // the chart's directory in the repository
	// serviceAccount is the ServiceAccount (namespace/name) a role of the
	// Terraform roots is given to through EKS Pod Identity, which the
	// chart's workload must run as ("" for none).
	serviceAccount string
	// prepare, when set, makes the chart of the repository's directory as
	// the project's release does, returning the chart's directory.
	prepare func(t *testing.T, dir, version string) string
}

var upstreamCharts = []upstreamChart{
	// The chart's releases are tagged apart from the app's; the app's
	// v0.20.0 carries chart 1.19.0 (charts/external-dns/Chart.yaml).
	{component: "external-dns", module: "sigs.k8s.io/external-dns", version: func(rev string) string { return map[string]string{"1.19.0": "v0.20.0"}[rev] },
		dir: "charts/external-dns", serviceAccount: "external-dns/external-dns"},
	// The chart's Chart.yaml is written by cert-manager's release tool
	// from Chart.template.yaml, the tag as its version; its CRDs are
	// templates of the chart (crds.enabled).
	{component: "cert-manager", module: "github.com/cert-manager/cert-manager", version: func(rev string) string { return rev },
		dir: "deploy/charts/cert-manager", serviceAccount: "cert-manager/cert-manager", prepare: releaseFromTemplate},
	// A git chart: the Application's targetRevision is the module's tag.
	{component: "tekton-operator", module: "github.com/tektoncd/operator", version: func(rev string) string { return rev }, dir: "charts/tekton-operator"},
}

// componentConfig is a component of the example fleet's global layer.
type componentConfig struct {
	ChartRevision string `json:"chart_revision"`
	Namespace     string `json:"namespace"`
	Chart         struct {
		RepoURL string `json:"repo_url"`
		Name    string `json:"name"`
		GitURL  string `json:"git_url"`
		Path    string `json:"path"`
	} `json:"chart"`
}

func componentsConfig(t *testing.T) map[string]componentConfig {
	t.Helper()
	var global struct {
		Components map[string]componentConfig `json:"components"`
	}
	b, err := os.ReadFile(filepath.Join(repo, "config", "global", "10-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &global); err != nil {
		t.Fatal(err)
	}
	return global.Components
}

// TestOtherProjectsChartsAreAdmitted: each chart of another project that the
// Go module proxy serves, taken from its project's repository at the version
// the fleet pins (the chart's own version, or the git ref and path the
// Application names), is rendered by Helm with the values of every rendered
// Application of it and admitted by a real API server in the namespace Argo
// CD makes for it (its CRDs installed first, as Argo CD syncs them first),
// without a Pod Security warning; where a role of the roots is given to one
// of its ServiceAccounts, the chart makes that ServiceAccount and a
// Deployment runs as it.
func TestOtherProjectsChartsAreAdmitted(t *testing.T) {
	comps := componentsConfig(t)
	j := newJudge(t)
	for _, u := range upstreamCharts {
		c, ok := comps[u.component]
		if !ok {
			t.Errorf("the example fleet runs no %s", u.component)
			continue
		}
		version := u.version(c.ChartRevision)
		if version == "" {
			t.Errorf("%s: no module version of %s is known to hold its chart %s; find the tag whose %s/Chart.yaml says version %s and add it",
				u.component, u.module, c.ChartRevision, u.dir, c.ChartRevision)
			continue
		}
		if c.Chart.GitURL != "" && c.Chart.Path != u.dir {
			t.Errorf("%s: the Application's chart is %s of %s, the test's %s", u.component, c.Chart.Path, c.Chart.GitURL, u.dir)
		}
		dir := filepath.Join(moduleSource(t, u.module, version), u.dir)
		if u.prepare != nil {
			dir = u.prepare(t, dir, version)
		}
		ch, err := loader.Load(dir)
		if err != nil {
			t.Fatalf("%s: Helm loads %s: %v", u.component, dir, err)
		}
		if c.Chart.RepoURL != "" && ch.Metadata.Version != c.ChartRevision {
			t.Errorf("%s: %s@%s holds chart %s %s, the fleet pins %s", u.component, u.module, version, ch.Metadata.Name, ch.Metadata.Version, c.ChartRevision)
		}
		apps := renderedApps(t, u.component)
		if len(apps) == 0 {
			t.Errorf("no %s Application rendered", u.component)
			continue
		}
		objects := 0
		crdsInstalled := false
		for _, a := range apps {
			objs, err := renderAbs(dir, a.release, a.namespace, a.values, false)
			if err != nil {
				t.Errorf("%s: Helm renders %s: %v", a.file, u.component, err)
				continue
			}
			j.namespace(t, a.namespace, a.namespaceLabels)
			crds, rest := splitCRDs(objs)
			if !crdsInstalled && len(crds) > 0 {
				if err := j.s.InstallCRDs(context.Background(), crds); err != nil {
					t.Fatalf("%s: the chart's CRDs: %v", a.file, err)
				}
				crdsInstalled = true
			}
			sas, runAs := map[string]bool{}, map[string]bool{}
			for _, o := range rest {
				objects++
				j.admit(t, a.file, o, a.namespace, "argocd-controller")
				meta, _ := o["metadata"].(map[string]any)
				switch o["kind"] {
				case "ServiceAccount":
					sas[a.namespace+"/"+fmt.Sprint(meta["name"])] = true
				case "Deployment":
					spec, _ := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
					runAs[a.namespace+"/"+fmt.Sprint(spec["serviceAccountName"])] = true
				}
			}
			if u.serviceAccount != "" && (!sas[u.serviceAccount] || !runAs[u.serviceAccount]) {
				t.Errorf("%s: a role is given to %s, but the chart makes ServiceAccounts %v and runs Deployments as %v",
					a.file, u.serviceAccount, sorted(sas), sorted(runAs))
			}
		}
		t.Logf("%s: chart %s %s from %s@%s, %d Applications, %d objects admitted", u.component, ch.Metadata.Name, ch.Metadata.Version, u.module, version, len(apps), objects)
	}
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// releaseFromTemplate copies a chart whose Chart.yaml its project's release
// tool writes (from Chart.template.yaml, version and appVersion the tag) and
// writes it so.
func releaseFromTemplate(t *testing.T, dir, version string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(dir, "Chart.template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	chart := regexp.MustCompile(`(?m)^(version|appVersion): v0\.0\.0$`).ReplaceAllString(string(tmpl), "${1}: "+version)
	chart = strings.ReplaceAll(chart, "{{IS_PRERELEASE}}", "false")
	if chart == string(tmpl) {
		t.Fatalf("%s: no version placeholder in Chart.template.yaml", dir)
	}
	if err := os.WriteFile(filepath.Join(out, "Chart.yaml"), []byte(chart), 0o644); err != nil {
		t.Fatal(err)
	}
	// The copy of the module cache's read-only files stays read-only:
	// make it removable.
	_ = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return out
}
