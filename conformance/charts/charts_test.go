package charts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/kube/apiserver"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

const repo = "../.."

// app is what a rendered Application gives its chart.
type app struct {
	file, kind, repoURL       string
	chart, release, namespace string
	values                    map[string]any
	// namespaceLabels are what Argo CD puts on the namespace it creates
	// (managedNamespaceMetadata).
	namespaceLabels map[string]any
}

// platformApps are the rendered Applications of charts in charts/ (the
// fleet repository's own), one per distinct chart, namespace and values.
func platformApps(t *testing.T) []app {
	t.Helper()
	fleet := fleetRepoURL(t)
	return appsOf(t, "*", func(a app) bool {
		return a.kind == "Application" && a.repoURL == fleet && strings.HasPrefix(a.chart, "charts/")
	})
}

// fleetRepoURL is the example fleet's gitops.repo_url.
func fleetRepoURL(t *testing.T) string {
	t.Helper()
	var global struct {
		Gitops struct {
			RepoURL string `json:"repo_url"`
		} `json:"gitops"`
	}
	b, err := os.ReadFile(filepath.Join(repo, "config", "global", "00-platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &global); err != nil || global.Gitops.RepoURL == "" {
		t.Fatalf("the fleet's gitops.repo_url: %v", err)
	}
	return global.Gitops.RepoURL
}

// appsOf are the rendered Applications of component comp (a glob) that
// keep says yes to, one per distinct chart, namespace and values.
func appsOf(t *testing.T, comp string, keep func(app) bool) []app {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repo, "deploy", "*", "*", "argocd", "*", "apps", comp+".yaml"))
	seen := map[string]bool{}
	var out []app
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a := decodeApp(t, f, b)
		if !keep(a) {
			continue
		}
		v, _ := json.Marshal(a.values)
		key := a.chart + "|" + a.namespace + "|" + string(v)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, a)
	}
	return out
}

// decodeApp reads the rendered Application in file f (contents b).
func decodeApp(t *testing.T, f string, b []byte) app {
	t.Helper()
	var a struct {
		Kind string `json:"kind"`
		Spec struct {
			Destination struct{ Namespace string } `json:"destination"`
			Source      struct {
				RepoURL string `json:"repoURL"`
				Path    string `json:"path"`
				Helm    struct {
					ReleaseName  string         `json:"releaseName"`
					ValuesObject map[string]any `json:"valuesObject"`
				} `json:"helm"`
			} `json:"source"`
			SyncPolicy struct {
				ManagedNamespaceMetadata struct {
					Labels map[string]any `json:"labels"`
				} `json:"managedNamespaceMetadata"`
			} `json:"syncPolicy"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	rel, _ := filepath.Rel(repo, f)
	return app{file: rel, kind: a.Kind, repoURL: a.Spec.Source.RepoURL, chart: a.Spec.Source.Path, release: a.Spec.Source.Helm.ReleaseName,
		namespace: a.Spec.Destination.Namespace, values: a.Spec.Source.Helm.ValuesObject,
		namespaceLabels: a.Spec.SyncPolicy.ManagedNamespaceMetadata.Labels}
}

// render renders a chart as helm template does (Helm's own Go SDK,
// client-only), validating values against the chart's values.schema.json.
func render(chartDir, release, namespace string, values map[string]any) ([]map[string]any, error) {
	return renderWith(chartDir, release, namespace, values, false)
}

// renderWith is render, for a cluster that serves the AWS Load Balancer
// Controller's TargetGroupBinding kind when withController (Argo CD passes
// the cluster's API versions to Helm).
func renderWith(chartDir, release, namespace string, values map[string]any, withController bool) ([]map[string]any, error) {
	return renderAbs(filepath.Join(repo, chartDir), release, namespace, values, withController)
}

// renderAbs is renderWith of the chart in directory dir.
func renderAbs(dir, release, namespace string, values map[string]any, withController bool) ([]map[string]any, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = release, namespace
	// The Kubernetes the API server judge runs (apiserver.Version).
	install.KubeVersion = &chartutil.KubeVersion{Version: apiserver.Version, Major: "1", Minor: strings.Split(apiserver.Version, ".")[1]}
	if withController {
		install.APIVersions = chartutil.VersionSet{"elbv2.k8s.aws/v1beta1", "elbv2.k8s.aws/v1beta1/TargetGroupBinding"}
	}
	rel, err := install.Run(ch, values)
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	for _, doc := range strings.Split(rel.Manifest, "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return nil, err
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// TestPlatformChartsAreAdmitted renders each of the platform's own charts
// with the values every rendered Application gives it, with Helm's own Go
// SDK (which holds the values to the chart's values.schema.json), and
// applies every object it makes, as a server-side dry run, to a real
// kube-apiserver in the Application's namespace, made as Argo CD makes it
// (with the Application's managedNamespaceMetadata, which must enforce and
// warn on the restricted Pod Security Standard): each is admitted without
// a warning (PodSecurity warns on a Deployment whose pods it would refuse).
func TestPlatformChartsAreAdmitted(t *testing.T) {
	apps := platformApps(t)
	charts := map[string]bool{}
	for _, a := range apps {
		charts[a.chart] = true
	}
	dirs, _ := filepath.Glob(filepath.Join(repo, "charts", "*", "Chart.yaml"))
	if len(charts) != len(dirs) || len(dirs) < 4 {
		t.Fatalf("the rendered Applications use %d of the %d charts in charts/", len(charts), len(dirs))
	}
	j := newJudge(t)
	objects := 0
	for _, a := range apps {
		if filepath.Base(a.chart) == "secrets-sync" {
			// Its kinds are External Secrets Operator's: judged with the
			// operator's CRDs (TestExternalSecretsIsAdmittedAndSyncsWhatRenderLists).
			continue
		}
		objs, err := render(a.chart, a.release, a.namespace, a.values)
		if err != nil {
			t.Errorf("%s: Helm renders %s: %v", a.file, a.chart, err)
			continue
		}
		if a.namespaceLabels["pod-security.kubernetes.io/enforce"] != "restricted" || a.namespaceLabels["pod-security.kubernetes.io/warn"] != "restricted" {
			t.Errorf("%s: Argo CD makes namespace %s with labels %v: it neither enforces nor warns on the restricted standard", a.file, a.namespace, a.namespaceLabels)
		}
		j.namespace(t, a.namespace, a.namespaceLabels)
		for _, o := range objs {
			objects++
			j.admit(t, a.file, o, a.namespace, "argocd-controller")
		}
	}
	t.Logf("%d Applications of %d charts, %d objects admitted", len(apps), len(charts), objects)
}

// judge is a real API server the tests apply objects to as Argo CD syncs
// them: namespaces made once each, with the labels Argo CD gives them;
// every object a server-side dry run that must be admitted without a
// warning (PodSecurity warns on a workload whose pods it would refuse).
type judge struct {
	s    *apiserver.Server
	made map[string]bool
}

func newJudge(t *testing.T) *judge {
	return &judge{s: apiserver.StartTest(t), made: map[string]bool{}}
}

// namespace makes namespace name with labels, once.
func (j *judge) namespace(t *testing.T, name string, labels map[string]any) {
	t.Helper()
	if j.made[name] {
		return
	}
	j.made[name] = true
	resp, err := j.s.Create(context.Background(), "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "labels": labels}})
	if err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("namespace %s: %v %v", name, err, resp)
	}
}

// admit applies o into ns as manager, and fails the test unless it is
// admitted without a warning; file says whose object it is.
func (j *judge) admit(t *testing.T, file string, o map[string]any, ns, manager string) {
	t.Helper()
	resp, err := j.s.Apply(context.Background(), o, ns, manager, true, nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	meta, _ := o["metadata"].(map[string]any)
	what := fmt.Sprintf("%s: %v %v", file, o["kind"], meta["name"])
	if resp.Status != http.StatusOK && resp.Status != http.StatusCreated {
		t.Errorf("%s: refused (%d): %s", what, resp.Status, resp.Message())
	}
	for _, w := range resp.Warnings {
		t.Errorf("%s: admitted with a warning: %s", what, w)
	}
}

// TestChartsHoldValuesToTheirSchemas: each chart of charts/ has a
// values.schema.json, and Helm refuses values it does not allow (a typo
// of a key, a wrong type) instead of rendering them.
func TestChartsHoldValuesToTheirSchemas(t *testing.T) {
	apps := platformApps(t)
	sort.Slice(apps, func(i, j int) bool { return apps[i].file < apps[j].file })
	done := map[string]bool{}
	for _, a := range apps {
		if done[a.chart] {
			continue
		}
		done[a.chart] = true
		if _, err := os.Stat(filepath.Join(repo, a.chart, "values.schema.json")); err != nil {
			t.Errorf("%s has no values.schema.json", a.chart)
			continue
		}
		for name, change := range map[string]func(v map[string]any){
			"replicas as a string": func(v map[string]any) { v["replicas"] = "two" },
			"no cluster identity":  func(v map[string]any) { delete(v, "global") },
			"a cluster of no type": func(v map[string]any) {
				v["global"].(map[string]any)["regionctl"].(map[string]any)["cluster_type"] = "other"
			},
		} {
			v := deepCopy(t, a.values)
			change(v)
			if _, err := render(a.chart, a.release, a.namespace, v); err == nil || !strings.Contains(err.Error(), "schema") {
				t.Errorf("%s with %s: %v, want a schema error", a.chart, name, err)
			}
		}
	}
}

func deepCopy(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRendersSchemaCheckAgreesWithHelms: regionctl render holds each
// component of a chart of this repository to its values.schema.json
// (argocd.ChartValues) so that a refused value fails the render at its line
// in config/. Helm's own validation is the judge: for every rendered
// Application and each change, the two must agree on whether the values
// pass.
func TestRendersSchemaCheckAgreesWithHelms(t *testing.T) {
	changes := map[string]func(v map[string]any){
		"as rendered":             func(map[string]any) {},
		"replicas as a string":    func(v map[string]any) { v["replicas"] = "two" },
		"replicas zero":           func(v map[string]any) { v["replicas"] = 0 },
		"replicas removed (null)": func(v map[string]any) { v["replicas"] = nil },
		"no cluster identity":     func(v map[string]any) { delete(v, "global") },
		"an unknown identity key": func(v map[string]any) {
			v["global"].(map[string]any)["regionctl"].(map[string]any)["account"] = "123456789012"
		},
		"a cluster of no type": func(v map[string]any) {
			v["global"].(map[string]any)["regionctl"].(map[string]any)["cluster_type"] = "other"
		},
		"an image without its digest": func(v map[string]any) { v["image"] = map[string]any{"repository": "quay.io/x"} },
		"an extra value":              func(v map[string]any) { v["extra"] = map[string]any{"nested": true} },
	}
	apps := platformApps(t)
	checked := 0
	for _, a := range apps {
		cv, err := argocd.ReadChartValues(os.DirFS(repo), filepath.Base(a.chart))
		if err != nil {
			t.Fatal(err)
		}
		for name, change := range changes {
			v := deepCopy(t, a.values)
			change(v)
			_, helmErr := render(a.chart, a.release, a.namespace, deepCopy(t, v))
			helmRefuses := helmErr != nil && strings.Contains(helmErr.Error(), "schema")
			if helmErr != nil && !helmRefuses {
				t.Fatalf("%s with %s: Helm failed otherwise: %v", a.file, name, helmErr)
			}
			found, err := cv.Check(v)
			if err != nil {
				t.Fatal(err)
			}
			if (len(found) > 0) != helmRefuses {
				t.Errorf("%s with %s: Helm refuses: %v (%v); render's check finds %v", a.file, name, helmRefuses, helmErr, found)
			}
			checked++
		}
	}
	t.Logf("%d Applications × %d changes judged by both", len(apps), len(changes))
	if checked == 0 {
		t.Fatal("nothing judged")
	}
}

// TestPlatformAPIBindsTheRegionalTargetGroup: where the cluster serves the
// load balancer controller's TargetGroupBinding, the platform-api chart
// (rendered by Helm with that API version) binds its frontend Service to
// the target group the regional root makes for the region's API, by the
// name the root gives it, on the port the target group sends to, and its
// pods are ready on the path the target group checks. Without that API
// version nothing of the kind is rendered.
func TestPlatformAPIBindsTheRegionalTargetGroup(t *testing.T) {
	root, err := os.ReadFile(filepath.Join(repo, "terraform", "regional-cluster", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	module, err := os.ReadFile(filepath.Join(repo, "terraform", "modules", "api-gateway", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	vars, err := os.ReadFile(filepath.Join(repo, "terraform", "modules", "api-gateway", "variables.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`module "api_gateway" \{[^}]*\n\s*name\s*=\s*"\$\{var\.region\}-api"`).Match(root) ||
		!regexp.MustCompile(`resource "aws_lb_target_group" "frontend" \{\n\s*name\s*=\s*var\.name\n`).Match(module) {
		t.Fatal("the regional root no longer names the API's target group <region>-api: the binding's name must follow it")
	}
	health := regexp.MustCompile(`health_check \{\n\s*path\s*=\s*"([^"]+)"`).FindSubmatch(module)
	port := regexp.MustCompile(`variable "frontend_port" \{[^}]*default\s*=\s*(\d+)`).FindSubmatch(vars)
	if health == nil || port == nil {
		t.Fatal("the api-gateway module's target group health check path or frontend_port default not found")
	}
	bound := 0
	for _, a := range platformApps(t) {
		if filepath.Base(a.chart) != "platform-api" {
			continue
		}
		for _, withController := range []bool{false, true} {
			objs, err := renderWith(a.chart, a.release, a.namespace, a.values, withController)
			if err != nil {
				t.Fatal(err)
			}
			byKind := map[string]map[string]any{}
			for _, o := range objs {
				byKind[fmt.Sprint(o["kind"])] = o
			}
			tgb := byKind["TargetGroupBinding"]
			if !withController {
				if tgb != nil {
					t.Errorf("%s: a TargetGroupBinding rendered for a cluster without the kind", a.file)
				}
				continue
			}
			if tgb == nil {
				t.Fatalf("%s: no TargetGroupBinding", a.file)
			}
			region := a.values["global"].(map[string]any)["regionctl"].(map[string]any)["region"]
			spec := tgb["spec"].(map[string]any)
			ref := spec["serviceRef"].(map[string]any)
			svc := byKind["Service"]["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
			probe := byKind["Deployment"]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["readinessProbe"].(map[string]any)["httpGet"].(map[string]any)
			if spec["targetGroupName"] != fmt.Sprintf("%s-api", region) || spec["targetType"] != "ip" ||
				ref["name"] != byKind["Service"]["metadata"].(map[string]any)["name"] || fmt.Sprint(ref["port"]) != string(port[1]) ||
				fmt.Sprint(svc["port"]) != string(port[1]) || probe["path"] != string(health[1]) {
				t.Errorf("%s: binding %v, service port %v, probe %v; want target group %s-api, port %s, path %s", a.file, spec, svc, probe, region, port[1], health[1])
			}
			bound++
		}
	}
	if bound == 0 {
		t.Fatal("no platform-api Application rendered")
	}
	t.Logf("%d platform-api Applications bind <region>-api on port %s, ready on %s", bound, port[1], health[1])
}
