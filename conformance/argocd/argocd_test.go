package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/progressivesync"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	argov1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	appfake "github.com/argoproj/argo-cd/v3/pkg/client/clientset/versioned/fake"
	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

// repoRoot is the regionctl repository this module sits in.
const repoRoot = "../.."

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := argov1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

func init() { log.SetOutput(io.Discard) }

// planned is one Application as `regionctl argocd apps -o json` plans it.
type planned struct {
	Name      string            `json:"name"`
	Cluster   string            `json:"cluster"`
	Component string            `json:"component"`
	Sector    string            `json:"sector"`
	Namespace string            `json:"namespace"`
	RepoURL   string            `json:"repo_url"`
	Chart     string            `json:"chart"`
	Path      string            `json:"path"`
	Revision  string            `json:"target_revision"`
	Labels    map[string]string `json:"labels"`
	Step      int               `json:"step"`
}

// regionctl runs the binary under test (REGIONCTL_BIN, which make sets) in
// dir.
func regionctl(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	bin := os.Getenv("REGIONCTL_BIN")
	if bin == "" {
		t.Skip("REGIONCTL_BIN is not set: run through `make conformance-argocd`")
	}
	cmd := exec.Command(bin, append(args, "--no-cache", "--no-color")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("regionctl %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out
}

func plan(t *testing.T, dir string) map[string]planned {
	t.Helper()
	var list []planned
	if err := json.Unmarshal(regionctl(t, dir, "argocd", "apps", "-o", "json"), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]planned{}
	for _, p := range list {
		key := p.Cluster + "/" + p.Name
		if _, dup := out[key]; dup {
			t.Fatalf("regionctl plans %s twice", key)
		}
		out[key] = p
	}
	return out
}

// copyTree copies the named top-level directories of src into dst.
func copyTree(t *testing.T, src, dst string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(src, d), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if e.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			if !e.Type().IsRegular() {
				return fmt.Errorf("%s is not a regular file", p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// exampleCentral renders the repository's example fleet with the central
// topology into a temporary directory.
func exampleCentral(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, repoRoot, dir, "config", "charts", "pipelines")
	if err := os.WriteFile(filepath.Join(dir, "config/global/99-central.yaml"),
		[]byte("gitops:\n  argocd_topology: central\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A fleet is a git repository: render checks waves against its history,
	// and on CI (CI=true) refuses to render outside one.
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "fleet"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	regionctl(t, dir, "render")
	return dir
}

func decodeStrict(t *testing.T, data []byte, into any, where string) {
	t.Helper()
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s does not decode as Argo CD's %T: %v", where, into, err)
	}
}

// central is what the central topology renders for one environment.
type central struct {
	env     string
	sets    []*argov1.ApplicationSet
	secrets []*corev1.Secret
	project *argov1.AppProject
}

// secretPlaceholders are what `regionctl argocd cluster-secret` fills from
// the cluster's Terraform outputs.
var secretPlaceholders = strings.NewReplacer(
	"${eks_endpoint}", "https://eks.test.internal",
	"${eks_ca_data}", "LS0tLS1CRUdJTg==",
	"${account_id}", "123456789012",
)

func readCentral(t *testing.T, root, env string) *central {
	t.Helper()
	dir := filepath.Join(root, "deploy", env, "argocd")
	c := &central{env: env}
	sets, _ := filepath.Glob(filepath.Join(dir, "applicationset-*.yaml"))
	secrets, _ := filepath.Glob(filepath.Join(dir, "clusters", "*.yaml"))
	if len(sets) == 0 || len(secrets) == 0 {
		t.Fatalf("%s holds %d ApplicationSets and %d cluster Secrets", dir, len(sets), len(secrets))
	}
	for _, p := range sets {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		set := &argov1.ApplicationSet{}
		decodeStrict(t, b, set, p)
		c.sets = append(c.sets, set)
	}
	for _, p := range secrets {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := &corev1.Secret{}
		decodeStrict(t, []byte(secretPlaceholders.Replace(string(b))), s, p)
		c.secrets = append(c.secrets, stored(s))
	}
	b, err := os.ReadFile(filepath.Join(dir, "project.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c.project = &argov1.AppProject{}
	decodeStrict(t, b, c.project, "project.yaml")
	return c
}

// stored is the Secret as the API server keeps it: stringData folded into
// data (what the cluster generator reads).
func stored(s *corev1.Secret) *corev1.Secret {
	s = s.DeepCopy()
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	return s
}

func fakeClient(secrets []*corev1.Secret) client.Client {
	objs := make([]client.Object, len(secrets))
	for i, s := range secrets {
		objs[i] = s.DeepCopy()
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// expand is the ApplicationSet controller's generation step: the cluster
// generator over the Secrets, then the template, by Argo CD's own code.
func expand(set *argov1.ApplicationSet, secrets []*corev1.Secret) ([]argov1.Application, error) {
	c := fakeClient(secrets)
	gens := map[string]generators.Generator{"Clusters": generators.NewClusterGenerator(c, set.Namespace)}
	apps, _, err := template.GenerateApplications(log.NewEntry(log.StandardLogger()), *set, gens, &utils.Render{}, c)
	return apps, err
}

// recorder keeps the per-Application status the progressive sync manager
// writes: its RollingSync step.
type recorder struct {
	statuses []argov1.ApplicationSetApplicationStatus
}

func (r *recorder) SetAppSetApplicationStatus(_ context.Context, _ *log.Entry, set *argov1.ApplicationSet, s []argov1.ApplicationSetApplicationStatus) error {
	// As the controller does: the status becomes the set's.
	set.Status.ApplicationStatus = s
	r.statuses = s
	return nil
}
func (r *recorder) SetApplicationSetStatusCondition(context.Context, *argov1.ApplicationSet, []argov1.ApplicationSetCondition, bool) error {
	return nil
}
func (r *recorder) RecordProgressiveSyncTriggered(*argov1.ApplicationSet, string) {}
func (r *recorder) IncRefreshTriggeredCount(*argov1.ApplicationSet)               {}

// rollingSync runs RollingSync's first pass over freshly generated
// Applications (all OutOfSync): it returns the step of each Application and
// the ones allowed to sync now.
func rollingSync(t *testing.T, set *argov1.ApplicationSet, apps []argov1.Application) (map[string]int, map[string]bool) {
	t.Helper()
	current := make([]argov1.Application, len(apps))
	for i, a := range apps {
		a.Status.Sync.Status = argov1.SyncStatusCodeOutOfSync
		a.Status.Health.Status = "Healthy"
		current[i] = a
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	rec := &recorder{}
	m := progressivesync.NewManager(c, c, appfake.NewSimpleClientset(), rec)
	toSync, err := m.PerformProgressiveSyncs(context.Background(), log.NewEntry(log.StandardLogger()), *set, current, apps, 0)
	if err != nil {
		t.Fatalf("%s: RollingSync: %v", set.Name, err)
	}
	steps := map[string]int{}
	for _, s := range rec.statuses {
		n, err := strconv.Atoi(s.Step)
		if err != nil {
			t.Fatalf("%s: %s has step %q", set.Name, s.Application, s.Step)
		}
		steps[s.Application] = n
	}
	return steps, toSync
}

func secretOf(secrets []*corev1.Secret, name string) *corev1.Secret {
	for _, s := range secrets {
		if string(s.Data["name"]) == name {
			return s
		}
	}
	return nil
}

// checkCentral expands every ApplicationSet of env with Argo CD's code and
// holds each Application against regionctl's plan.
func checkCentral(t *testing.T, root, env string) {
	c := readCentral(t, root, env)
	want := plan(t, root)
	got := map[string]bool{}
	firstSector := ""
	for _, set := range c.sets {
		if set.Spec.SyncPolicy != nil && set.Spec.Strategy != nil && set.Spec.Strategy.Type == "RollingSync" {
			if tp := set.Spec.Template.Spec.SyncPolicy; tp != nil && tp.Automated != nil {
				t.Errorf("%s: RollingSync with automated sync in the template", set.Name)
			}
		}
		apps, err := expand(set, c.secrets)
		if err != nil {
			t.Fatalf("%s: Argo CD cannot generate its Applications: %v", set.Name, err)
		}
		if len(apps) == 0 {
			t.Errorf("%s generates no Application", set.Name)
		}
		steps, toSync := rollingSync(t, set, apps)
		for _, app := range apps {
			cluster := app.Labels["region"] + "/" + app.Labels["cluster"]
			key := cluster + "/" + app.Name
			got[key] = true
			p, ok := want[key]
			if !ok {
				t.Errorf("%s: Argo CD generates %s, which regionctl does not plan", set.Name, key)
				continue
			}
			if p.Component != app.Labels["component"] || p.Sector != app.Labels["sector"] {
				t.Errorf("%s: component %q sector %q, planned %q %q", key, app.Labels["component"], app.Labels["sector"], p.Component, p.Sector)
			}
			for k, v := range p.Labels {
				if app.Labels[k] != v {
					t.Errorf("%s: label %s=%q, planned %q", key, k, app.Labels[k], v)
				}
			}
			if app.Spec.Destination.Namespace != p.Namespace {
				t.Errorf("%s: destination namespace %q, planned %q", key, app.Spec.Destination.Namespace, p.Namespace)
			}
			s := secretOf(c.secrets, app.Spec.Destination.Name)
			if s == nil || s.Labels["cluster"] != app.Labels["cluster"] || s.Labels["region"] != app.Labels["region"] {
				t.Errorf("%s: destination %q is not the cluster's own Secret", key, app.Spec.Destination.Name)
			}
			srcs := app.Spec.GetSources()
			if len(srcs) == 0 {
				t.Fatalf("%s has no source", key)
			}
			chart := srcs[0]
			if chart.RepoURL != p.RepoURL || chart.Chart != p.Chart || chart.Path != p.Path || chart.TargetRevision != p.Revision {
				t.Errorf("%s: source %s chart %q path %q at %q; planned %s %q %q at %q", key,
					chart.RepoURL, chart.Chart, chart.Path, chart.TargetRevision, p.RepoURL, p.Chart, p.Path, p.Revision)
			}
			for _, src := range srcs {
				if !c.project.IsSourcePermitted(src) {
					t.Errorf("%s: project %s does not permit source %s", key, c.project.Name, src.RepoURL)
				}
			}
			ok, err = c.project.IsDestinationPermitted(&argov1.Cluster{Name: app.Spec.Destination.Name, Server: string(s.Data["server"])},
				app.Spec.Destination.Namespace, func(string) ([]*argov1.Cluster, error) { return nil, nil })
			if err != nil || !ok {
				t.Errorf("%s: project %s does not permit destination %s/%s", key, c.project.Name, app.Spec.Destination.Name, app.Spec.Destination.Namespace)
			}
			if chart.Helm != nil {
				for _, vf := range chart.Helm.ValueFiles {
					rel, ok := strings.CutPrefix(vf, "$values/")
					if !ok {
						continue
					}
					if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
						t.Errorf("%s: values file %s is not in the rendered tree", key, rel)
					}
				}
			}
			if steps[app.Name] != p.Step {
				t.Errorf("%s: RollingSync puts it in step %d, planned %d", key, steps[app.Name], p.Step)
			}
			if p.Step == 1 {
				firstSector = p.Sector
			}
			if toSync[app.Name] != (steps[app.Name] == 1) {
				t.Errorf("%s: step %d, allowed to sync first: %v", key, steps[app.Name], toSync[app.Name])
			}
		}
	}
	for key, p := range want {
		if strings.HasPrefix(p.Labels["environment"], env) && !got[key] {
			t.Errorf("regionctl plans %s, which Argo CD does not generate", key)
		}
	}
	if firstSector == "" {
		t.Errorf("%s: no Application syncs in step 1", env)
	}
	t.Logf("%s: %d ApplicationSets over %d cluster Secrets; %d Applications as planned; step 1 is sector %s",
		env, len(c.sets), len(c.secrets), len(got), firstSector)
}

func envs(t *testing.T, root string) []string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(root, "deploy", "*", "argocd", "applicationset-*.yaml"))
	seen := map[string]bool{}
	var out []string
	for _, m := range matches {
		env := filepath.Base(filepath.Dir(filepath.Dir(m)))
		if !seen[env] {
			seen[env] = true
			out = append(out, env)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("%s renders no ApplicationSet", root)
	}
	return out
}

func TestCentralApplicationSetsExpandAsPlanned(t *testing.T) {
	for name, root := range map[string]string{
		"golden/uneven-sectors": filepath.Join(repoRoot, "golden", "uneven-sectors"),
		"example, central":      exampleCentral(t),
	} {
		t.Run(name, func(t *testing.T) {
			for _, env := range envs(t, root) {
				t.Run(env, func(t *testing.T) { checkCentral(t, root, env) })
			}
		})
	}
}

// A cluster Secret that lacks what the template reads must stop the
// ApplicationSet, never produce an Application that joins no step.
func TestIncompleteSecretStopsTheSet(t *testing.T) {
	root := filepath.Join(repoRoot, "golden", "uneven-sectors")
	c := readCentral(t, root, envs(t, root)[0])
	set := c.sets[0]
	if _, err := expand(set, c.secrets); err != nil {
		t.Fatalf("the rendered Secrets do not expand: %v", err)
	}
	for _, drop := range []string{"label sector", "label region", "annotation revision", "annotation namespace"} {
		t.Run(drop, func(t *testing.T) {
			secrets := make([]*corev1.Secret, len(c.secrets))
			hit := false
			for i, s := range c.secrets {
				s = s.DeepCopy()
				if !hit && selects(set, s) {
					hit = true
					kind, what, _ := strings.Cut(drop, " ")
					if kind == "label" {
						delete(s.Labels, what)
					} else {
						for k := range s.Annotations {
							if strings.HasSuffix(k, "-"+what) {
								delete(s.Annotations, k)
							}
						}
					}
				}
				secrets[i] = s
			}
			if !hit {
				t.Fatalf("%s selects no Secret", set.Name)
			}
			apps, err := expand(set, secrets)
			if err == nil {
				t.Fatalf("without the %s, Argo CD generates %d Applications and no error", drop, len(apps))
			}
			t.Logf("without the %s: %v", drop, err)
		})
	}
}

func selects(set *argov1.ApplicationSet, s *corev1.Secret) bool {
	for k, v := range set.Spec.Generators[0].Clusters.Selector.MatchLabels {
		if s.Labels[k] != v {
			return false
		}
	}
	return true
}

// Values from config reach the template as data: a revision or namespace
// that looks like a template or a Tekton reference is passed through
// literally, never evaluated.
func TestTemplateSyntaxInSecretsStaysData(t *testing.T) {
	root := filepath.Join(repoRoot, "golden", "uneven-sectors")
	c := readCentral(t, root, envs(t, root)[0])
	set := c.sets[0]
	for _, hostile := range []string{`{{ .server }}`, `$(params.x)`, `{{ fail "x" }}`, `{{`} {
		secrets := make([]*corev1.Secret, len(c.secrets))
		for i, s := range c.secrets {
			s = s.DeepCopy()
			for k := range s.Annotations {
				if strings.HasSuffix(k, "-revision") {
					s.Annotations[k] = hostile
				}
			}
			secrets[i] = s
		}
		apps, err := expand(set, secrets)
		if err != nil {
			t.Fatalf("%q: %v", hostile, err)
		}
		for _, app := range apps {
			if got := app.Spec.GetSources()[0].TargetRevision; got != hostile {
				t.Errorf("%q became %q", hostile, got)
			}
		}
	}
}

// The per-cluster topology: each cluster's root Application, AppProject and
// component Applications decode as Argo CD's types, the project admits
// every Application by Argo CD's own rules, and each Application is what
// regionctl planned.
func TestPerClusterApplicationsAsPlanned(t *testing.T) {
	want := plan(t, repoRoot)
	roots, _ := filepath.Glob(filepath.Join(repoRoot, "deploy", "*", "*", "argocd", "*", "root.yaml"))
	if len(roots) == 0 {
		t.Fatal("the example renders no root Application")
	}
	seen := 0
	for _, rootPath := range roots {
		dir := filepath.Dir(rootPath)
		b, err := os.ReadFile(rootPath)
		if err != nil {
			t.Fatal(err)
		}
		root := &argov1.Application{}
		decodeStrict(t, b, root, rootPath)
		if root.Spec.Source == nil {
			t.Fatalf("%s has no source", rootPath)
		}
		if filepath.Join(repoRoot, root.Spec.Source.Path) != filepath.Join(dir, "apps") {
			t.Errorf("%s points at %s, not its apps/", rootPath, root.Spec.Source.Path)
		}
		b, err = os.ReadFile(filepath.Join(dir, "apps", "project.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		proj := &argov1.AppProject{}
		decodeStrict(t, b, proj, filepath.Join(dir, "apps", "project.yaml"))
		inCluster := &argov1.Cluster{Server: argov1.KubernetesInternalAPIServerAddr, Name: argov1.KubernetesInClusterName}
		noClusters := func(string) ([]*argov1.Cluster, error) { return nil, nil }
		apps, _ := filepath.Glob(filepath.Join(dir, "apps", "*.yaml"))
		for _, p := range apps {
			if filepath.Base(p) == "project.yaml" {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			app := &argov1.Application{}
			decodeStrict(t, b, app, p)
			cluster := app.Labels["region"] + "/" + app.Labels["cluster"]
			key := cluster + "/" + app.Name
			pl, ok := want[key]
			if !ok {
				t.Errorf("%s: %s is not planned", p, key)
				continue
			}
			seen++
			if app.Spec.Project != proj.Name || root.Spec.Project != proj.Name {
				t.Errorf("%s: project %q, the cluster's is %q", p, app.Spec.Project, proj.Name)
			}
			src := app.Spec.Source
			if src == nil || src.RepoURL != pl.RepoURL || src.Chart != pl.Chart || src.Path != pl.Path || src.TargetRevision != pl.Revision {
				t.Errorf("%s: source %+v, planned %+v", p, src, pl)
				continue
			}
			if app.Spec.Destination.Namespace != pl.Namespace {
				t.Errorf("%s: namespace %q, planned %q", p, app.Spec.Destination.Namespace, pl.Namespace)
			}
			if !proj.IsSourcePermitted(*src) {
				t.Errorf("%s: project does not permit %s", p, src.RepoURL)
			}
			if ok, err := proj.IsDestinationPermitted(inCluster, app.Spec.Destination.Namespace, noClusters); err != nil || !ok {
				t.Errorf("%s: project does not permit namespace %s of this cluster", p, app.Spec.Destination.Namespace)
			}
			if ok, _ := proj.IsDestinationPermitted(inCluster, "kube-system", noClusters); ok && app.Spec.Destination.Namespace != "kube-system" {
				t.Errorf("%s: project permits kube-system", p)
			}
		}
		if ok, _ := proj.IsDestinationPermitted(&argov1.Cluster{Server: "https://other.example.com"}, "argocd", noClusters); ok {
			t.Errorf("%s: project permits another cluster", dir)
		}
		// Cluster-scoped kinds, by Argo CD's own rule: those the
		// components' charts install (cluster_resources), and no other.
		if len(proj.Spec.ClusterResourceWhitelist) == 0 {
			t.Errorf("%s: project admits no cluster-scoped kind, though its components install CRDs", dir)
		}
		for _, gk := range proj.Spec.ClusterResourceWhitelist {
			if gk.Group == "*" || gk.Kind == "*" {
				t.Errorf("%s: project admits every %s/%s", dir, gk.Group, gk.Kind)
			}
			if !proj.IsGroupKindNamePermitted(schema.GroupKind{Group: gk.Group, Kind: gk.Kind}, "any", false) {
				t.Errorf("%s: project lists %s/%s but does not admit it", dir, gk.Group, gk.Kind)
			}
		}
		for _, gk := range []schema.GroupKind{{Group: "storage.k8s.io", Kind: "StorageClass"}, {Kind: "Namespace"}, {Kind: "PersistentVolume"},
			{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}, {Group: "argoproj.io", Kind: "AppProject"}} {
			if proj.IsGroupKindNamePermitted(gk, "any", false) {
				t.Errorf("%s: project admits the cluster-scoped %s, which no component installs", dir, gk)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d Applications rendered per cluster, %d planned", seen, len(want))
	}
	t.Logf("%d clusters, %d Applications as planned", len(roots), seen)
}
