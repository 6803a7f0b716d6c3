package argocd

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// Topologies: where the Argo CD that manages a cluster runs.
const (
	PerCluster = "per-cluster" // each cluster's own Argo CD, managing only itself
	Central    = "central"     // one Argo CD per environment, managing every cluster of it
)

// ChartSource says where a component's chart comes from.
type ChartSource struct {
	RepoURL string // a Helm repository, a git repository, or this repository
	Chart   string // the chart's name in a Helm repository
	Path    string // the chart's directory in a git repository
	// Kustomize says the git directory is a kustomization, not a chart
	// (chart.type: kustomize): the Application passes it no values.
	Kustomize bool
}

// Argo CD's own component: the Application through which each cluster's
// Argo CD manages itself once the bootstrap has installed it. It takes over
// the objects of the install.yaml the bootstrap applied, so it must be Argo
// CD's own manifests (the kustomization install.yaml is built from) at the
// bootstrap's version: the argo-helm chart's objects select on labels
// install.yaml's lack, and a Deployment's selector cannot change.
const (
	ArgoCDComponent = "argo-cd"
	ArgoCDRepo      = "https://github.com/argoproj/argo-cd.git"
	ArgoCDManifests = "manifests/cluster-install"
)

// Component is one component a cluster runs: one Argo CD Application.
type Component struct {
	Name      string
	Namespace string
	Source    ChartSource
	// Revision is the Application's targetRevision: the chart's version or
	// git ref (chart_revision), the versioned value the rollout promotes.
	Revision string
	// Values are the chart's values: the component's values, its image
	// (image.repository, image.digest) and global.regionctl, the cluster's
	// identity.
	Values map[string]any
	// At is where the component's chart_revision was set.
	At diag.Pos
	// ClusterResources are the cluster-scoped kinds its chart installs
	// (cluster_resources): its Argo CD project admits them.
	ClusterResources []GroupKind
	// PodSecurity is the Pod Security Standard its namespace enforces
	// (pod_security: restricted unless the component says baseline).
	PodSecurity string
	// podSecurityAt is where pod_security was set, or the component.
	podSecurityAt diag.Pos
}

// Problem is a component the cluster cannot run as configured.
type Problem struct {
	Pos     diag.Pos
	Summary string
	Detail  string
}

// Components resolves the components c runs (those whose runs_on holds its
// type and that are not disabled), in name order. owned lists the charts
// under this repository's charts/.
func Components(c *config.Cluster, g GitOps, owned map[string]bool) ([]Component, []Problem) {
	comps := c.Effective.Get("components")
	if comps == nil || comps.Kind != config.Map {
		return nil, nil
	}
	var out []Component
	var problems []Problem
	for _, f := range comps.Fields {
		comp, ps := component(c, g, owned, f)
		problems = append(problems, ps...)
		if comp != nil {
			out = append(out, *comp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	problems = append(problems, podSecurityConflicts(out)...)
	// secrets-sync brings in the secrets of the cluster's other components.
	for i := range out {
		if out[i].Name != SecretsSync {
			continue
		}
		if _, set := out[i].Values["secrets"]; set {
			problems = append(problems, problem(out[i].At, "render lists the secrets of the cluster's components (the Terraform roots make them); remove values.secrets.",
				"component %s sets its secrets", SecretsSync)...)
			continue
		}
		out[i].Values["secrets"] = secretsValue(SyncedSecrets(c, out))
	}
	return out, problems
}

func component(c *config.Cluster, g GitOps, owned map[string]bool, f config.Field) (*Component, []Problem) {
	name, v := f.Key, f.Value
	at := f.KeyPos
	str := stringAt(v, at)
	runsOn := v.Get("runs_on")
	if runsOn == nil || runsOn.Kind != config.List || len(runsOn.Items) == 0 {
		return nil, problem(at, "Add runs_on: [regional], [management] or both.", "component %s says not which cluster types run it", name)
	}
	runs := false
	for _, it := range runsOn.Items {
		runs = runs || (it.Kind == config.String && it.Str == c.Type)
	}
	if !runs {
		return nil, nil
	}
	if e := v.Get("enabled"); e != nil && e.Kind == config.Bool && !e.Bool {
		return nil, nil
	}
	comp := &Component{Name: name, Namespace: name}
	if ns, _ := str("namespace"); ns != "" {
		comp.Namespace = ns
	}
	src, problems := chartSource(name, at, str, owned, g)
	if problems != nil {
		return nil, problems
	}
	comp.Source = src
	rev, revAt := str("chart_revision")
	if rev == "" {
		return nil, problem(at, "Set chart_revision: the chart's version, or the git ref its Application tracks.", "component %s has no chart_revision", name)
	}
	comp.Revision, comp.At = rev, revAt
	if name == ArgoCDComponent {
		if p := argoCDTakesOver(comp, at); p != nil {
			return nil, p
		}
	}
	comp.ClusterResources = clusterResources(v.Get("cluster_resources"))
	comp.PodSecurity, comp.podSecurityAt = str("pod_security")
	if comp.PodSecurity == "" {
		comp.PodSecurity, comp.podSecurityAt = "restricted", at
	}

	if comp.Source.Kustomize {
		// A kustomization takes no values: nothing of the config reaches it.
		for _, key := range []string{"values", "image"} {
			if x := v.Get(key); x != nil {
				return nil, problem(x.Origin.Pos, "A kustomization takes no Helm values or image; remove "+key+", or use a chart.", "component %s sets %s for a kustomization", name, key)
			}
		}
		return comp, nil
	}
	values, problems := componentValues(c, g, name, v, at, str)
	if problems != nil {
		return nil, problems
	}
	comp.Values = values
	return comp, nil
}

// argoCDTakesOver is why Argo CD's own component could not take over the
// install the bootstrap applied, or nil.
func argoCDTakesOver(comp *Component, at diag.Pos) []Problem {
	src := comp.Source
	if !src.Kustomize || src.RepoURL != ArgoCDRepo || src.Path != ArgoCDManifests {
		return problem(at, "Set chart: {git_url: "+ArgoCDRepo+", path: "+ArgoCDManifests+", type: kustomize}: the bootstrap installs Argo CD's install.yaml, and only Argo CD's own manifests have its objects and their selectors (a Deployment's selector cannot change; the argo-helm chart's differ).",
			"component %s cannot take over the Argo CD the bootstrap installs", ArgoCDComponent)
	}
	if comp.Revision != bootstrap.PinnedArgoCD {
		return problem(comp.At, "Set chart_revision: "+bootstrap.PinnedArgoCD+", the Argo CD version the bootstrap installs (the runner image's install.yaml): a takeover at another version would change Argo CD under every cluster on its first sync.",
			"component %s is at %s, the bootstrap installs Argo CD %s", ArgoCDComponent, comp.Revision, bootstrap.PinnedArgoCD)
	}
	return nil
}

// chartSource is where component name's chart comes from: a Helm
// repository (chart.repo_url and chart.name), a git repository
// (chart.git_url and chart.path), or this repository's charts/ (owned).
func chartSource(name string, at diag.Pos, str func(...string) (string, diag.Pos), owned map[string]bool, g GitOps) (ChartSource, []Problem) {
	repo, repoAt := str("chart", "repo_url")
	chart, _ := str("chart", "name")
	gitURL, gitAt := str("chart", "git_url")
	chartPath, _ := str("chart", "path")
	kind, kindAt := str("chart", "type")
	switch {
	case kind == "kustomize" && gitURL == "":
		return ChartSource{}, problem(kindAt, "A kustomization comes from a git repository: set chart.git_url and chart.path.", "component %s is a kustomization without a git repository", name)
	case repo != "" && gitURL != "":
		return ChartSource{}, problem(gitAt, "A chart comes from a Helm repository (repo_url, name) or a git repository (git_url, path), not both.", "component %s names two chart sources", name)
	case repo != "":
		if chart == "" {
			return ChartSource{}, problem(repoAt, "Add chart.name: the chart's name in "+repo+".", "component %s has a Helm repository but no chart name", name)
		}
		if strings.HasPrefix(repo, "oci://") {
			// Argo CD takes an oci:// repoURL as an OCI artifact source
			// (v3.1 and later, reposerver's IsOCI before IsHelm): the
			// repository is the chart's own, and "the path should always
			// be set to ." for a Helm chart (Argo CD's user guide, OCI). A
			// chart name beside it would be ignored, and the registry's
			// repository without it pulled.
			return ChartSource{RepoURL: strings.TrimSuffix(repo, "/") + "/" + chart, Path: "."}, nil
		}
		return ChartSource{RepoURL: repo, Chart: chart}, nil
	case gitURL != "":
		if chartPath == "" {
			return ChartSource{}, problem(gitAt, "Add chart.path: the chart's directory in "+gitURL+".", "component %s has a git repository but no chart path", name)
		}
		return ChartSource{RepoURL: gitURL, Path: chartPath, Kustomize: kind == "kustomize"}, nil
	default:
		if !owned[name] {
			return ChartSource{}, problem(at, "Set chart.repo_url and chart.name (a Helm repository), chart.git_url and chart.path (a git repository), or add charts/"+name+"/Chart.yaml to this repository.", "component %s has no chart", name)
		}
		return ChartSource{RepoURL: g.RepoURL, Path: path.Join(ChartsDir, name)}, nil
	}
}

// HealthReporter is the component whose CronJob reports the cluster's
// Applications' health into its region's health bucket (regionctl argocd
// report); render gives it the bucket and regionctl's image.
const HealthReporter = "argocd-health-reporter"

// componentValues are the values component name (v in the config) gives
// its chart: the config's values, HyperShift's own settings, the health
// reporter's bucket and image, where Maestro's credentials are, the image,
// and global.regionctl.
func componentValues(c *config.Cluster, g GitOps, name string, v *config.Value, at diag.Pos, str func(...string) (string, diag.Pos)) (map[string]any, []Problem) {
	values := map[string]any{}
	if m, ok := v.Get("values").Interface().(map[string]any); ok {
		values = m
	}
	image, imageAt := str("image")
	if name == HealthReporter {
		// regionctl argocd report, in the runner image, into the region's
		// health bucket.
		if image == "" {
			image = g.RunnerImage
		}
		if b := c.Effective.Lookup("argocd", "health_bucket"); b != nil && b.Kind == config.String {
			if _, set := values["health_bucket"]; set {
				return nil, problem(at, "render gives the reporter its region's argocd.health_bucket; remove values.health_bucket.", "component %s sets its bucket", name)
			}
			values["health_bucket"] = b.Str
		}
	}
	if name == "hypershift-operator" {
		// HyperShift's own settings reach its chart.
		op, opAt := "", diag.Pos{}
		if x := c.Effective.Lookup("hypershift", "operator_image"); x != nil && x.Kind == config.String {
			op, opAt = x.Str, x.Origin.Pos
		}
		switch {
		case op != "" && image != "" && op != image:
			return nil, problem(imageAt, "hypershift.operator_image ("+opAt.String()+") is the operator's image; remove components.hypershift-operator.image.", "two images for the HyperShift operator")
		case op != "":
			image, imageAt = op, opAt
		}
		if b := c.Effective.Lookup("hypershift", "oidc_bucket"); b != nil && b.Kind == config.String {
			if _, set := values["oidc_bucket"]; !set {
				values["oidc_bucket"] = b.Str
			}
		}
		if b := c.Effective.Lookup("etcd_backup", "bucket"); b != nil && b.Kind == config.String {
			if _, set := values["etcd_backup_bucket"]; !set {
				values["etcd_backup_bucket"] = b.Str
			}
		}
	}
	if ps := maestroValues(c, name, values, at); ps != nil {
		return nil, ps
	}
	// Where Maestro's MQTT credentials are: the secrets the Terraform
	// roots make (modules/maestro-iot, modules/maestro-agent).
	if secret := MaestroSecret(name, c); secret != "" {
		if _, set := values["mqtt_credentials_secret"]; !set {
			values["mqtt_credentials_secret"] = secret
		}
	}
	if image != "" {
		if _, set := values["image"]; set {
			return nil, problem(imageAt, "The image reaches the chart as image.repository and image.digest; remove values.image.", "component %s sets its image twice", name)
		}
		repository, digest, _ := strings.Cut(image, "@")
		values["image"] = map[string]any{"repository": repository, "digest": digest}
	}
	global, _ := values["global"].(map[string]any)
	if global == nil {
		if _, set := values["global"]; set {
			return nil, problem(at, "values.global must be a map: regionctl adds global.regionctl to it.", "component %s has a values.global that is not a map", name)
		}
		global = map[string]any{}
	}
	global["regionctl"] = map[string]any{
		"cluster": c.Name, "region": c.Region.Name, "sector": c.SectorName(),
		"environment": c.Environment(), "cluster_type": c.Type,
	}
	values["global"] = global
	return values, nil
}

// clusterResources are the kinds a component's cluster_resources lists
// (the schema holds each to a group and a kind, without wildcards).
func clusterResources(v *config.Value) []GroupKind {
	if v == nil || v.Kind != config.List {
		return nil
	}
	var out []GroupKind
	for _, it := range v.Items {
		g, k := it.Get("group"), it.Get("kind")
		if g == nil || k == nil || g.Kind != config.String || k.Kind != config.String {
			continue
		}
		out = append(out, GroupKind{Group: g.Str, Kind: k.Str})
	}
	return out
}

// ClusterResourcesOf is the union of the cluster-scoped kinds comps
// install, sorted: what an Argo CD project of theirs admits, and nothing
// else (an empty list admits no cluster-scoped kind).
func ClusterResourcesOf(comps []Component) []GroupKind {
	seen := map[GroupKind]bool{}
	out := []GroupKind{}
	for _, c := range comps {
		for _, gk := range c.ClusterResources {
			if !seen[gk] {
				seen[gk] = true
				out = append(out, gk)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// stringAt looks a string up under v and gives where it was set (at when
// it is not a string).
func stringAt(v *config.Value, at diag.Pos) func(path ...string) (string, diag.Pos) {
	return func(path ...string) (string, diag.Pos) {
		x := v.Lookup(path...)
		if x == nil || x.Kind != config.String {
			return "", at
		}
		return x.Str, x.Origin.Pos
	}
}

func problem(pos diag.Pos, detail, summary string, args ...any) []Problem {
	return []Problem{{Pos: pos, Summary: fmt.Sprintf(summary, args...), Detail: detail}}
}

// MaestroSecret is the Secrets Manager secret holding the MQTT credentials
// of Maestro's component on cluster c ("" for other components), as the
// Terraform roots name it: the server's in the regional account, each
// agent's in its management cluster's account.
func MaestroSecret(component string, c *config.Cluster) string {
	switch {
	case component == "maestro-server" && c.Type == "regional":
		return c.Region.Name + "-maestro-server-mqtt"
	case component == "maestro-agent" && c.Type == "management":
		return c.Region.Name + "-" + c.Name + "-maestro-agent-mqtt"
	}
	return ""
}

// podSecurityConflicts are the components that share a namespace with an
// earlier one (in name order) and enforce another Pod Security Standard
// there: each Application writes the namespace's labels, and two levels
// would have Argo CD rewrite them on every sync.
func podSecurityConflicts(comps []Component) []Problem {
	var problems []Problem
	first := map[string]*Component{}
	for i := range comps {
		c := &comps[i]
		f, seen := first[c.Namespace]
		if !seen {
			first[c.Namespace] = c
			continue
		}
		if f.PodSecurity != c.PodSecurity {
			problems = append(problems, problem(c.podSecurityAt, "Components in one namespace enforce one Pod Security Standard: set the same pod_security on both, or give one a namespace of its own.",
				"component %s enforces %s in namespace %s, where %s enforces %s", c.Name, c.PodSecurity, c.Namespace, f.Name, f.PodSecurity)...)
		}
	}
	return problems
}
