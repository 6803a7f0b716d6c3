package argocd_test

import (
	"os"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/schema"
)

func loadFleet(t *testing.T, root string) (*config.Fleet, map[string]bool) {
	t.Helper()
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(os.DirFS(root), "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	charts, err := render.ReadCharts(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	owned := map[string]bool{}
	for _, c := range charts {
		owned[c] = true
	}
	return f, owned
}

// central renders the central Argo CD of env for the fleet at root.
func central(t *testing.T, f *config.Fleet, owned map[string]bool, env string) (map[string]any, []map[string]any, []*config.Sector) {
	t.Helper()
	g := render.GitOpsOf(f)
	var refs []argocd.ClusterRef
	for _, c := range f.Clusters {
		if c.Environment() != env || c.Deleting() {
			continue
		}
		comps, problems := argocd.Components(c, g, owned)
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		refs = append(refs, argocd.ClusterRef{Cluster: c, Components: comps})
	}
	var sectors []*config.Sector
	for _, s := range f.Sectors {
		if s.Environment == env {
			sectors = append(sectors, s)
		}
	}
	docs, err := argocd.CentralDocs(env, sectors, refs, g)
	if err != nil {
		t.Fatal(err)
	}
	var secrets []map[string]any
	var paths []string
	for p := range docs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if m, ok := docs[p].(map[string]any); ok && m["kind"] == "Secret" {
			secrets = append(secrets, m)
		}
	}
	return docs, secrets, sectors
}

func sectorNames(sectors []*config.Sector, apps []argocd.Planned) []string {
	var out []string
	for _, s := range sectors {
		for _, a := range apps {
			if a.Sector == s.Name {
				out = append(out, s.Name)
				break
			}
		}
	}
	return out
}

// TestStepsFollowSectorOrder: in the central topology every generated
// Application lands in exactly one step, the step of its sector; steps
// follow the sectors' order, skipping a sector with no cluster running the
// component; maxUpdate counts clusters, one Application each.
func TestStepsFollowSectorOrder(t *testing.T) {
	f, owned := loadFleet(t, "../../../golden/uneven-sectors")
	docs, secrets, sectors := central(t, f, owned, "production")
	set := docs["production/argocd/applicationset-hypershift-operator.yaml"].(*argocd.ApplicationSet)
	apps, err := argocd.ExpandSet(set, secrets)
	if err != nil {
		t.Fatal(err)
	}
	if p := argocd.CheckSet(set, sectorNames(sectors, apps), apps); len(p) > 0 {
		t.Fatal(p)
	}
	var order []string
	for _, st := range set.Spec.Strategy.RollingSync.Steps {
		order = append(order, st.MatchExpressions[0].Values...)
	}
	if got := strings.Join(order, ","); got != "prod-1,prod-2,prod-3" {
		t.Errorf("production steps %s", got)
	}
	clusters := map[string]bool{}
	for _, a := range apps {
		if a.Sector != a.Labels["sector"] || a.Step == 0 || a.Revision != "hypershift-operator/v0.1.58" || a.Namespace != "hypershift-operator" {
			t.Errorf("%+v", a)
		}
		clusters[a.Cluster] = true
	}
	if len(apps) != 5 || len(clusters) != 5 {
		t.Errorf("%d Applications on %d clusters: one per production management cluster", len(apps), len(clusters))
	}
	stageDocs, stageSecrets, _ := central(t, f, owned, "staging")
	stage := stageDocs["staging/argocd/applicationset-hypershift-operator.yaml"].(*argocd.ApplicationSet)
	if n := len(stage.Spec.Strategy.RollingSync.Steps); n != 1 {
		t.Errorf("staging has %d steps; stage-b has no regions and must get none", n)
	}
	if _, err := argocd.ExpandSet(stage, stageSecrets); err != nil {
		t.Fatal(err)
	}
	// Progressive syncs are switched on, and no template syncs by itself.
	cm := docs["production/argocd/argocd-cmd-params-cm.yaml"].(map[string]any)
	if cm["data"].(map[string]string)[argocd.ProgressiveSyncs] != "true" {
		t.Errorf("progressive syncs are not enabled: %v", cm)
	}
}

// TestCheckSetRefusesBrokenSets mutates a correct ApplicationSet in each way
// CheckSet must refuse.
func TestCheckSetRefusesBrokenSets(t *testing.T) {
	f, owned := loadFleet(t, "../../../golden/uneven-sectors")
	tests := []struct {
		name   string
		mutate func(*argocd.ApplicationSet)
		want   string
	}{
		{"steps out of order", func(s *argocd.ApplicationSet) {
			st := s.Spec.Strategy.RollingSync.Steps
			st[0], st[1] = st[1], st[0]
		}, "RollingSync step 1 is [prod-2], want sector prod-1"},
		{"a step missing", func(s *argocd.ApplicationSet) {
			s.Spec.Strategy.RollingSync.Steps = s.Spec.Strategy.RollingSync.Steps[1:]
		}, "matches 0 RollingSync steps"},
		{"overlapping steps", func(s *argocd.ApplicationSet) {
			s.Spec.Strategy.RollingSync.Steps[1].MatchExpressions[0].Values = []string{"prod-2", "prod-1"}
		}, "matches 2 RollingSync steps"},
		{"a step matching nothing", func(s *argocd.ApplicationSet) {
			s.Spec.Strategy.RollingSync.Steps = append(s.Spec.Strategy.RollingSync.Steps, argocd.Step{
				MatchExpressions: []argocd.Requirement{{Key: "sector", Operator: "In", Values: []string{"prod-9"}}}})
		}, "matches no Application"},
		{"template without the sector label", func(s *argocd.ApplicationSet) {
			delete(s.Spec.Template.Metadata.Labels, "sector")
		}, "matches 0 RollingSync steps"},
		{"an automated sync policy", func(s *argocd.ApplicationSet) {
			s.Spec.Template.Spec.SyncPolicy.Automated = &argocd.Automated{Prune: true, SelfHeal: true}
		}, "automated sync policy"},
		{"a config value holding a template action", func(s *argocd.ApplicationSet) {
			s.Spec.Template.Spec.Sources[1].RepoURL = "https://git.example.com/{{.server}}.git"
		}, `the template holds "{{.server}}", which regionctl did not write`},
		{"a stray delimiter", func(s *argocd.ApplicationSet) {
			s.Spec.Template.Spec.Sources[0].Helm.ReleaseName = "x}}"
		}, "stray delimiter"},
	}
	for _, tt := range tests {
		docs, secrets, sectors := central(t, f, owned, "production")
		set := docs["production/argocd/applicationset-hypershift-operator.yaml"].(*argocd.ApplicationSet)
		order := []string{"prod-1", "prod-2", "prod-3"}
		tt.mutate(set)
		apps, err := argocd.ExpandSet(set, secrets)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		_ = sectors
		problems := strings.Join(argocd.CheckSet(set, order, apps), "\n")
		if !strings.Contains(problems, tt.want) {
			t.Errorf("%s: problems %q, want %q", tt.name, problems, tt.want)
		}
	}
}

// TestExpansionStopsOnAnIncompleteSecret: a cluster Secret without its
// sector label, or without the component's revision, stops the expansion
// (missingkey=error with field syntax; fail on an absent annotation)
// instead of generating an Application that joins no step or tracks
// nothing.
func TestExpansionStopsOnAnIncompleteSecret(t *testing.T) {
	f, owned := loadFleet(t, "../../../golden/uneven-sectors")
	for _, tc := range []struct {
		what   string
		remove func(meta map[string]any)
		want   string
	}{
		{"no sector label", func(m map[string]any) { delete(m["labels"].(map[string]string), "sector") }, `map has no entry for key "sector"`},
		{"no revision", func(m map[string]any) {
			delete(m["annotations"].(map[string]string), "regionctl.io/hypershift-operator-revision")
		}, "the cluster Secret has no annotation regionctl.io/hypershift-operator-revision"},
	} {
		docs, secrets, _ := central(t, f, owned, "production")
		set := docs["production/argocd/applicationset-hypershift-operator.yaml"].(*argocd.ApplicationSet)
		for _, s := range secrets {
			if s["metadata"].(map[string]any)["labels"].(map[string]string)["regionctl.io/component-hypershift-operator"] == "true" {
				tc.remove(s["metadata"].(map[string]any))
				break
			}
		}
		if _, err := argocd.ExpandSet(set, secrets); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.what, err, tc.want)
		}
	}
}

// TestComponentsReachWhatRuns: in the per-cluster topology each component
// is one Application pinned at its chart_revision, installed in its
// namespace, with its image in its values; enabled: false removes it; the
// AppProject allows only the components' namespaces and sources.
func TestComponentsReachWhatRuns(t *testing.T) {
	f, owned := loadFleet(t, "../../..")
	g := render.GitOpsOf(f)
	var mc01, stage *config.Cluster
	for _, c := range f.Clusters {
		switch c.ID() {
		case "us-east-1/mc01":
			mc01 = c
		case "eu-west-1/mc01":
			stage = c
		}
	}
	docsOf := func(c *config.Cluster) map[string]any {
		comps, problems := argocd.Components(c, g, owned)
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		return argocd.PerClusterDocs(c, comps, g)
	}
	app := func(docs map[string]any, c *config.Cluster, comp string) *argocd.Application {
		a, _ := docs[path.Join(argocd.ClusterDir(c.Environment(), c.Region.Name, c.Name), "apps", comp+".yaml")].(*argocd.Application)
		return a
	}
	prod, canary := docsOf(mc01), docsOf(stage)
	hs := app(prod, mc01, "hypershift-operator")
	if hs == nil || hs.Spec.Source.TargetRevision != "hypershift-operator/v0.1.58" || hs.Spec.Destination.Namespace != "hypershift" || hs.Spec.Source.Path != "charts/hypershift-operator" {
		t.Fatalf("hypershift-operator of %s: %+v", mc01.ID(), hs)
	}
	digest := func(a *argocd.Application) any {
		return a.Spec.Source.Helm.ValuesObject["image"].(map[string]any)["digest"]
	}
	if digest(hs) == digest(app(canary, stage, "hypershift-operator")) {
		t.Error("the stage canary's operator image does not reach stage's Application")
	}
	cm := app(prod, mc01, "cert-manager")
	if cm == nil || cm.Spec.Source.Chart != "cert-manager" || cm.Spec.Source.RepoURL != "https://charts.jetstack.io" || cm.Spec.Source.Path != "" {
		t.Errorf("cert-manager: %+v", cm)
	}
	if app(prod, mc01, "platform-api") != nil {
		t.Error("a regional component runs on a management cluster")
	}
	project := prod[path.Join(argocd.ClusterDir("production", "us-east-1", "mc01"), "apps", "project.yaml")].(*argocd.AppProject)
	for _, d := range project.Spec.Destinations {
		if d.Server != argocd.InCluster {
			t.Errorf("the project reaches %s", d.Server)
		}
	}
	if strings.Contains(strings.Join(project.Spec.SourceRepos, " "), "*") {
		t.Errorf("the project allows any source: %v", project.Spec.SourceRepos)
	}

	// enabled: false and namespace take effect.
	off := withComponent(t, mc01, "cert-manager", map[string]any{"enabled": false})
	if docs := docsOf(off); app(docs, off, "cert-manager") != nil {
		t.Error("enabled: false keeps the Application")
	}
	moved := withComponent(t, mc01, "cert-manager", map[string]any{"namespace": "certs"})
	if a := app(docsOf(moved), moved, "cert-manager"); a.Spec.Destination.Namespace != "certs" {
		t.Errorf("namespace: %s", a.Spec.Destination.Namespace)
	}
}

// withComponent returns a copy of c whose component comp has fields set.
func withComponent(t *testing.T, c *config.Cluster, comp string, fields map[string]any) *config.Cluster {
	t.Helper()
	cp := *c
	comps := c.Effective.Get("components")
	cv := comps.Get(comp)
	for k, v := range fields {
		b, _ := yaml.Marshal(v)
		var val *config.Value
		switch x := v.(type) {
		case bool:
			val = &config.Value{Kind: config.Bool, Bool: x}
		case string:
			val = &config.Value{Kind: config.String, Str: x}
		default:
			t.Fatalf("%s: %s", k, b)
		}
		cv = cv.With(k, cv.Origin.Pos, val)
	}
	cp.Effective = c.Effective.With("components", c.Effective.Origin.Pos, comps.With(comp, comps.Origin.Pos, cv))
	return &cp
}

// TestComponentProblems: a component the cluster cannot run says why, at
// the file and line that declared it.
func TestComponentProblems(t *testing.T) {
	mc, g, owned := exampleCluster(t, "us-east-1/mc01")
	comps := mc.Effective.Get("components")
	add := func(name string, v *config.Value) *config.Cluster {
		cp := *mc
		cp.Effective = mc.Effective.With("components", comps.Origin.Pos, comps.With(name, diag.Pos{File: mc.Doc.File, Line: 1}, v))
		return &cp
	}
	at := config.Origin{Layer: config.LayerCluster, Pos: diag.Pos{File: mc.Doc.File, Line: 2}}
	str := func(s string) *config.Value { return &config.Value{Kind: config.String, Str: s, Origin: at} }
	list := func(s ...string) *config.Value {
		v := &config.Value{Kind: config.List, Origin: at}
		for _, x := range s {
			v.Items = append(v.Items, str(x))
		}
		return v
	}
	m := func(kv ...any) *config.Value {
		v := &config.Value{Kind: config.Map, Origin: at}
		for i := 0; i < len(kv); i += 2 {
			v = v.With(kv[i].(string), diag.Pos{File: mc.Doc.File, Line: 1}, kv[i+1].(*config.Value))
		}
		return v
	}
	for _, tc := range []struct {
		what string
		v    *config.Value
		want string
	}{
		{"no runs_on", m("chart_revision", str("v1")), "says not which cluster types run it"},
		{"no chart", m("runs_on", list("management"), "chart_revision", str("v1")), "has no chart"},
		{"two sources", m("runs_on", list("management"), "chart_revision", str("v1"), "chart", m("repo_url", str("https://charts.example.com"), "name", str("x"), "git_url", str("https://git.example.com/x.git"), "path", str("x"))), "names two chart sources"},
		{"no chart name", m("runs_on", list("management"), "chart_revision", str("v1"), "chart", m("repo_url", str("https://charts.example.com"))), "no chart name"},
		{"no revision", m("runs_on", list("management"), "chart", m("repo_url", str("https://charts.example.com"), "name", str("x"))), "has no chart_revision"},
		{"image twice", m("runs_on", list("management"), "chart_revision", str("v1"), "chart", m("repo_url", str("https://charts.example.com"), "name", str("x")),
			"image", str("r.example.com/x@sha256:"+strings.Repeat("a", 64)), "values", m("image", str("other"))), "sets its image twice"},
	} {
		_, problems := argocd.Components(add("logging", tc.v), g, owned)
		if len(problems) != 1 || !strings.Contains(problems[0].Summary, tc.want) || problems[0].Pos.File == "" {
			t.Errorf("%s: %+v, want %q", tc.what, problems, tc.want)
		}
	}
}

// valuesAt builds config values as a layer file at at would hold them: a
// string, and a map of keys and values.
func valuesAt(at config.Origin) (func(string) *config.Value, func(...any) *config.Value) {
	str := func(s string) *config.Value { return &config.Value{Kind: config.String, Str: s, Origin: at} }
	m := func(kv ...any) *config.Value {
		v := &config.Value{Kind: config.Map, Origin: at}
		for i := 0; i < len(kv); i += 2 {
			v = v.With(kv[i].(string), at.Pos, kv[i+1].(*config.Value))
		}
		return v
	}
	return str, m
}

// TestOCIChartIsArgoCDsOCISource: a chart of an OCI registry
// (chart.repo_url oci://…, chart.name) is rendered as Argo CD's OCI
// source: the repoURL the chart's own repository, the path ".", no chart
// name. Argo CD's user guide (OCI): "the path should always be set to ."
// for an OCI Helm chart; its reposerver tests IsOCI (an oci:// repoURL)
// before IsHelm (a chart name), so a name beside an oci:// URL is not read.
func TestOCIChartIsArgoCDsOCISource(t *testing.T) {
	mc, g, owned := exampleCluster(t, "us-east-1/mc01")
	comps := mc.Effective.Get("components")
	at := config.Origin{Layer: config.LayerCluster, Pos: diag.Pos{File: mc.Doc.File, Line: 2}}
	str, m := valuesAt(at)
	runs := &config.Value{Kind: config.List, Origin: at, Items: []*config.Value{str("management")}}
	cp := *mc
	cp.Effective = mc.Effective.With("components", comps.Origin.Pos, comps.With("logging", at.Pos,
		m("runs_on", runs, "chart_revision", str("1.2.3"), "namespace", str("logging"), "chart", m("repo_url", str("oci://registry.example.com/charts/"), "name", str("fluent-bit")))))
	got, problems := argocd.Components(&cp, g, owned)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	docs := argocd.PerClusterDocs(&cp, got, g)
	dir := argocd.ClusterDir(cp.Environment(), cp.Region.Name, cp.Name)
	a, _ := docs[path.Join(dir, "apps", "logging.yaml")].(*argocd.Application)
	if a == nil {
		t.Fatal("no logging Application")
	}
	src := a.Spec.Source
	if src.RepoURL != "oci://registry.example.com/charts/fluent-bit" || src.Path != "." || src.Chart != "" || src.TargetRevision != "1.2.3" || src.Helm == nil || src.Helm.ReleaseName != "logging" {
		t.Errorf("the OCI chart's source: %+v", src)
	}
	project := docs[path.Join(dir, "apps", "project.yaml")].(*argocd.AppProject)
	if !slices.Contains(project.Spec.SourceRepos, src.RepoURL) {
		t.Errorf("the project does not allow %s: %v", src.RepoURL, project.Spec.SourceRepos)
	}
}

// TestSecretsSyncBringsInItsClustersSecrets: the secrets-sync Application
// lists the Secrets Manager secret of each component of its cluster that
// has one (the Maestro agent's on a management cluster, the server's on a
// regional one), as the Secret its chart mounts, in the component's
// namespace; a component that does not run brings nothing, and a value set
// in config is refused rather than overwritten.
func TestSecretsSyncBringsInItsClustersSecrets(t *testing.T) {
	f, owned := loadFleet(t, "../../..")
	g := render.GitOpsOf(f)
	clusters := map[string]*config.Cluster{}
	for _, c := range f.Clusters {
		clusters[c.ID()] = c
	}
	mc, regional := clusters["us-east-1/mc01"], clusters["us-east-1/regional"]
	if mc == nil || regional == nil {
		t.Fatal("the example fleet has no us-east-1/mc01 or us-east-1/regional")
	}
	secrets := func(c *config.Cluster) []any {
		t.Helper()
		comps, problems := argocd.Components(c, g, owned)
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		for _, comp := range comps {
			if comp.Name == argocd.SecretsSync {
				l, _ := comp.Values["secrets"].([]any)
				return l
			}
		}
		t.Fatalf("%s runs no %s", c.ID(), argocd.SecretsSync)
		return nil
	}
	want := func(ns, name, remote string) []any {
		return []any{map[string]any{"namespace": ns, "name": name, "remote": remote, "data": []any{
			map[string]any{"key": "ca.crt", "property": "ca_certificate"},
			map[string]any{"key": "client.crt", "property": "certificate"}, map[string]any{"key": "client.key", "property": "private_key"}}}}
	}
	for _, tc := range []struct {
		what string
		c    *config.Cluster
		want []any
	}{
		{"a management cluster", mc, want("maestro", "maestro-agent-certs", "us-east-1-mc01-maestro-agent-mqtt")},
		{"a regional cluster", regional, want("maestro", "maestro-server-certs", "us-east-1-maestro-server-mqtt")},
		{"the agent elsewhere", withComponent(t, mc, "maestro-agent", map[string]any{"namespace": "agents"}), want("agents", "maestro-agent-certs", "us-east-1-mc01-maestro-agent-mqtt")},
		{"no agent", withComponent(t, mc, "maestro-agent", map[string]any{"enabled": false}), []any{}},
	} {
		if got := secrets(tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: secrets %v, want %v", tc.what, got, tc.want)
		}
	}
	comps := mc.Effective.Get("components")
	sync := comps.Get(argocd.SecretsSync)
	set := sync.With("values", sync.Origin.Pos, &config.Value{Kind: config.Map}).Get("values")
	set = set.With("secrets", sync.Origin.Pos, &config.Value{Kind: config.List})
	cp := *mc
	cp.Effective = mc.Effective.With("components", comps.Origin.Pos, comps.With(argocd.SecretsSync, comps.Origin.Pos, sync.With("values", sync.Origin.Pos, set)))
	if _, problems := argocd.Components(&cp, g, owned); len(problems) != 1 || !strings.Contains(problems[0].Summary, "sets its secrets") {
		t.Errorf("values.secrets set in config: %+v", problems)
	}
}

// TestMaestroChartsReachTheirBroker: the upstream Maestro charts are given
// the region's broker name (mqtt.<platform_api.domain>, which the regional
// root serves), IoT Core's TLS port, the files secrets-sync brings in, no
// user name; the agent its consumer name as consumer and MQTT client id
// (what its IoT policy admits), from maestro.consumer_name. A config that
// sets them, or a cluster without the API's domain, is refused.
func TestMaestroChartsReachTheirBroker(t *testing.T) {
	mc, g, owned := exampleCluster(t, "us-east-1/mc01")
	regional, _, _ := exampleCluster(t, "us-east-1/regional")
	values := func(c *config.Cluster, name string) (map[string]any, []argocd.Problem) {
		t.Helper()
		comps, problems := argocd.Components(c, g, owned)
		for _, comp := range comps {
			if comp.Name == name {
				return comp.Values, problems
			}
		}
		return nil, problems
	}
	domain := mc.Effective.Lookup("platform_api", "domain").Str
	agent, problems := values(mc, "maestro-agent")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	consumer := mc.Effective.Lookup("maestro", "consumer_name").Str
	wantAgent := map[string]any{"type": "mqtt", "mqtt": map[string]any{"host": "mqtt." + domain, "port": "8883", "user": "",
		"rootCert": "/secrets/mqtt-certs/ca.crt", "clientCert": "/secrets/mqtt-certs/client.crt", "clientKey": "/secrets/mqtt-certs/client.key"}}
	if !reflect.DeepEqual(agent["messageBroker"], wantAgent) || agent["consumerName"] != consumer || agent["cloudeventsClientId"] != consumer {
		t.Errorf("the agent's values: %v", agent)
	}
	server, problems := values(regional, "maestro-server")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	mqtt, _ := server["messageBroker"].(map[string]any)["mqtt"].(map[string]any)
	if mqtt["host"] != "mqtt."+domain || mqtt["port"] != "8883" || mqtt["tls"].(map[string]any)["enabled"] != true {
		t.Errorf("the server's values: %v", server)
	}
	for _, tc := range []struct {
		what string
		c    *config.Cluster
		want string
	}{
		{"a consumer name set in config", withValue(mc, "maestro-agent", "consumerName", "x"), "sets consumerName"},
		{"a broker set in config", withValue(mc, "maestro-agent", "messageBroker", "x"), "sets messageBroker"},
		{"no platform_api.domain", withoutKey(mc, "platform_api"), "has no platform_api.domain for its Maestro broker"},
	} {
		if _, problems := values(tc.c, "maestro-agent"); len(problems) != 1 || !strings.Contains(problems[0].Summary, tc.want) {
			t.Errorf("%s: %+v", tc.what, problems)
		}
	}
}

// withValue is c with values.key of component comp set to a string.
func withValue(c *config.Cluster, comp, key, v string) *config.Cluster {
	comps := c.Effective.Get("components")
	cv := comps.Get(comp)
	vals := cv.Get("values").With(key, cv.Origin.Pos, &config.Value{Kind: config.String, Str: v})
	cp := *c
	cp.Effective = c.Effective.With("components", comps.Origin.Pos, comps.With(comp, comps.Origin.Pos, cv.With("values", cv.Origin.Pos, vals)))
	return &cp
}

// withoutKey is c with the top-level key of its effective config removed.
func withoutKey(c *config.Cluster, key string) *config.Cluster {
	cp := *c
	e := *c.Effective
	e.Fields = nil
	for _, f := range c.Effective.Fields {
		if f.Key != key {
			e.Fields = append(e.Fields, f)
		}
	}
	cp.Effective = &e
	return &cp
}

// TestNamespacesEnforceTheirComponentsPodSecurity: every component's
// namespace enforces restricted unless the component says baseline (and
// warns and audits on restricted either way), another project's chart
// included; two components of one namespace enforcing different levels is
// a problem at the second's pod_security.
func TestNamespacesEnforceTheirComponentsPodSecurity(t *testing.T) {
	mc, g, owned := exampleCluster(t, "us-east-1/mc01")
	labels := func(c *config.Cluster) map[string]map[string]string {
		t.Helper()
		comps, problems := argocd.Components(c, g, owned)
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		out := map[string]map[string]string{}
		for p, d := range argocd.PerClusterDocs(c, comps, g) {
			if a, ok := d.(*argocd.Application); ok && strings.Contains(p, "/apps/") {
				out[a.Metadata.Name] = a.Spec.SyncPolicy.ManagedNamespaceMetadata.Labels
			}
		}
		return out
	}
	got := labels(mc)
	for comp, want := range map[string]string{"cert-manager": "restricted", "external-dns": "restricted", "external-secrets": "restricted",
		"hypershift-operator": "restricted", "maestro-agent": "baseline"} {
		l := got[comp]
		if l["pod-security.kubernetes.io/enforce"] != want || l["pod-security.kubernetes.io/warn"] != "restricted" || l["pod-security.kubernetes.io/audit"] != "restricted" {
			t.Errorf("%s's namespace labels %v, want enforce %s, warn and audit restricted", comp, l, want)
		}
	}
	loose := withComponent(t, mc, "cert-manager", map[string]any{"pod_security": "baseline"})
	if l := labels(loose)["cert-manager"]; l["pod-security.kubernetes.io/enforce"] != "baseline" {
		t.Errorf("pod_security: baseline gives %v", l)
	}
	shared := withComponent(t, mc, "cert-manager", map[string]any{"namespace": "maestro"})
	if _, problems := argocd.Components(shared, g, owned); len(problems) != 1 || !strings.Contains(problems[0].Summary, "enforces") {
		t.Errorf("two levels in one namespace: %+v", problems)
	}
	same := withComponent(t, withComponent(t, mc, "cert-manager", map[string]any{"namespace": "maestro"}), "cert-manager", map[string]any{"pod_security": "baseline"})
	if _, problems := argocd.Components(same, g, owned); len(problems) != 0 {
		t.Errorf("one level in a shared namespace: %+v", problems)
	}
}

// TestArgoCDTakesOverWhatTheBootstrapInstalled: Argo CD's own component is
// Argo CD's own manifests (a kustomization, no values) at the version the
// bootstrap installs; the argo-helm chart, another version, values for a
// kustomization, or a kustomization without a git repository are refused
// at their line.
func TestArgoCDTakesOverWhatTheBootstrapInstalled(t *testing.T) {
	mc, g, owned := exampleCluster(t, "us-east-1/mc01")
	comps, problems := argocd.Components(mc, g, owned)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	docs := argocd.PerClusterDocs(mc, comps, g)
	a, _ := docs[path.Join(argocd.ClusterDir("production", "us-east-1", "mc01"), "apps", "argo-cd.yaml")].(*argocd.Application)
	if a == nil || a.Spec.Source.RepoURL != argocd.ArgoCDRepo || a.Spec.Source.Path != argocd.ArgoCDManifests ||
		a.Spec.Source.TargetRevision != bootstrap.PinnedArgoCD || a.Spec.Source.Helm != nil {
		t.Fatalf("the argo-cd Application: %+v", a)
	}
	all := mc.Effective.Get("components")
	at := config.Origin{Layer: config.LayerCluster, Pos: diag.Pos{File: mc.Doc.File, Line: 7}}
	str, m := valuesAt(at)
	runs := &config.Value{Kind: config.List, Origin: at, Items: []*config.Value{str("management")}}
	own := m("git_url", str(argocd.ArgoCDRepo), "path", str(argocd.ArgoCDManifests), "type", str("kustomize"))
	for _, tc := range []struct {
		what, name string
		v          *config.Value
		want       string
	}{
		{"the argo-helm chart", "argo-cd", m("runs_on", runs, "chart_revision", str("9.1.0"), "chart", m("repo_url", str("https://argoproj.github.io/argo-helm"), "name", str("argo-cd"))), "cannot take over"},
		{"another version", "argo-cd", m("runs_on", runs, "chart_revision", str("v3.5.0"), "chart", own), "the bootstrap installs Argo CD " + bootstrap.PinnedArgoCD},
		{"values for a kustomization", "argo-cd", m("runs_on", runs, "chart_revision", str(bootstrap.PinnedArgoCD), "chart", own, "values", m("replicas", str("2"))), "sets values for a kustomization"},
		{"a kustomization without git", "logging", m("runs_on", runs, "chart_revision", str("v1"), "chart", m("repo_url", str("https://charts.example.com"), "name", str("x"), "type", str("kustomize"))), "kustomization without a git repository"},
	} {
		cp := *mc
		cp.Effective = mc.Effective.With("components", all.Origin.Pos, all.With(tc.name, at.Pos, tc.v))
		_, problems := argocd.Components(&cp, g, owned)
		if len(problems) != 1 || !strings.Contains(problems[0].Summary, tc.want) || problems[0].Pos.Line != 7 {
			t.Errorf("%s: %+v, want %q at line 7", tc.what, problems, tc.want)
		}
	}
}

// exampleCluster is cluster id of the example fleet, with the fleet's
// GitOps settings and the charts it owns.
func exampleCluster(t *testing.T, id string) (*config.Cluster, argocd.GitOps, map[string]bool) {
	t.Helper()
	f, owned := loadFleet(t, "../../..")
	for _, c := range f.Clusters {
		if c.ID() == id {
			return c, render.GitOpsOf(f), owned
		}
	}
	t.Fatalf("the example fleet has no cluster %s", id)
	return nil, argocd.GitOps{}, nil
}
