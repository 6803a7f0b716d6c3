package argocd

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// ProgressiveSyncs is the Argo CD setting without which the ApplicationSet
// controller ignores RollingSync and syncs every Application at once.
const ProgressiveSyncs = "applicationsetcontroller.enable.progressive.syncs"

// CentralRole is the role in each cluster's account that the central Argo
// CD assumes (EKS IAM authentication) to manage the cluster.
const CentralRole = "regionctl-argocd-central"

// Placeholders of a rendered cluster Secret that only exist once the
// cluster does; `regionctl argocd cluster-secret` fills them.
const (
	ServerPlaceholder  = "${eks_endpoint}"
	CAPlaceholder      = "${eks_ca_data}"
	AccountPlaceholder = "${account_id}"
)

// ClusterRef is one cluster of a central Argo CD, with what it runs.
type ClusterRef struct {
	Cluster    *config.Cluster
	Components []Component
}

// SecretName is the unique name of a cluster's Argo CD cluster Secret and
// of the cluster in Argo CD.
func SecretName(c *config.Cluster) string {
	return c.Environment() + "-" + c.Region.Name + "-" + c.Name
}

func componentLabel(name string) string { return "regionctl.io/component-" + name }

// RevisionAnnotation and NamespaceAnnotation are the annotations of a
// cluster Secret (central topology) that give component name's chart
// revision and namespace on that cluster to its ApplicationSet.
func RevisionAnnotation(name string) string  { return "regionctl.io/" + name + "-revision" }
func NamespaceAnnotation(name string) string { return "regionctl.io/" + name + "-namespace" }

// SecretPath is a cluster's Argo CD cluster Secret (central topology).
func SecretPath(environment, region, cluster string) string {
	return path.Join(environment, "argocd", "clusters", region+"-"+cluster+".yaml")
}

// AppSetPath is a component's ApplicationSet of an environment (central
// topology).
func AppSetPath(environment, component string) string {
	return path.Join(environment, "argocd", "applicationset-"+component+".yaml")
}

// ValuesPath is a component's values file of a cluster (central topology).
func ValuesPath(environment, region, cluster, component string) string {
	return path.Join(ClusterDir(environment, region, cluster), "values", component+".yaml")
}

// clusterSecret is the central Argo CD's cluster Secret of c, in
// namespace: its API server, CA and account are filled in when the
// cluster exists (the placeholders).
func clusterSecret(c *config.Cluster, namespace string, labels, annotations map[string]string) map[string]any {
	cfg, _ := json.Marshal(map[string]any{
		"awsAuthConfig":   map[string]string{"clusterName": c.Name, "roleARN": "arn:" + iam.Partition(c.Region.Name) + ":iam::" + AccountPlaceholder + ":role/" + CentralRole},
		"tlsClientConfig": map[string]string{"caData": CAPlaceholder},
	})
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata":   map[string]any{"name": "cluster-" + SecretName(c), "namespace": namespace, "labels": labels, "annotations": annotations},
		"stringData": map[string]string{"name": SecretName(c), "server": ServerPlaceholder, "config": string(cfg)},
	}
}

// centralUse is one component across an environment's clusters: one
// ApplicationSet, so one chart source and one Pod Security level.
type centralUse struct {
	source      ChartSource
	podSecurity string
	firstAt     string
	clusters    []*config.Cluster
	sectors     map[string]bool
}

// add counts cluster c's comp in, or says why one ApplicationSet cannot
// hold it.
func (u *centralUse) add(comp Component, c *config.Cluster) error {
	switch {
	case u.source != comp.Source:
		return fmt.Errorf("component %s takes its chart from %+v on %s but %+v on %s: in the central topology every cluster of an environment runs one chart source", comp.Name, u.source, u.firstAt, comp.Source, c.ID())
	case u.podSecurity != comp.PodSecurity:
		return fmt.Errorf("component %s enforces Pod Security %s on %s but %s on %s: in the central topology every cluster of an environment enforces one level", comp.Name, u.podSecurity, u.firstAt, comp.PodSecurity, c.ID())
	}
	u.clusters = append(u.clusters, c)
	u.sectors[c.SectorName()] = true
	return nil
}

// CentralDocs are the documents of one environment's central Argo CD, by
// path in deploy/ (values files are the caller's: ValuesPath):
//   - argocd/argocd-cmd-params-cm.yaml: progressive syncs on;
//   - argocd/project.yaml: the AppProject, confined to the environment's
//     clusters, the components' namespaces and chart sources;
//   - argocd/clusters/<region>-<cluster>.yaml: each cluster's Secret, with
//     EKS IAM authentication (no secret material) and, as labels and
//     annotations, its sector and the revision and namespace of each
//     component it runs;
//   - argocd/applicationset-<component>.yaml: one ApplicationSet per
//     component, one Application per cluster running it, RollingSync by
//     sector (maxUpdate counts clusters), no automated sync (RollingSync
//     syncs).
//
// It fails when a component's chart source differs between clusters: one
// ApplicationSet has one source.
func CentralDocs(env string, sectors []*config.Sector, refs []ClusterRef, g GitOps) (map[string]any, error) {
	docs := map[string]any{}
	dir := path.Join(env, "argocd")
	docs[path.Join(dir, "argocd-cmd-params-cm.yaml")] = map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cmd-params-cm", "namespace": g.Namespace,
			"labels": map[string]string{"app.kubernetes.io/name": "argocd-cmd-params-cm", "app.kubernetes.io/part-of": "argocd"}},
		"data": map[string]string{ProgressiveSyncs: "true"},
	}
	uses := map[string]*centralUse{}
	var all []Component // every component of every cluster, for the project's kinds
	repos := map[string]bool{g.RepoURL: true}
	namespaces := map[string]bool{}
	for _, r := range refs {
		c := r.Cluster
		labels := map[string]string{"argocd.argoproj.io/secret-type": "cluster", "app.kubernetes.io/managed-by": "regionctl"}
		for k, v := range ClusterLabels(c) {
			labels[k] = v
		}
		annotations := map[string]string{}
		all = append(all, r.Components...)
		for _, comp := range r.Components {
			u := uses[comp.Name]
			if u == nil {
				u = &centralUse{source: comp.Source, podSecurity: comp.PodSecurity, firstAt: c.ID(), sectors: map[string]bool{}}
				uses[comp.Name] = u
			}
			if err := u.add(comp, c); err != nil {
				return nil, err
			}
			labels[componentLabel(comp.Name)] = "true"
			annotations[RevisionAnnotation(comp.Name)] = comp.Revision
			annotations[NamespaceAnnotation(comp.Name)] = comp.Namespace
			repos[comp.Source.RepoURL] = true
			namespaces[comp.Namespace] = true
		}
		docs[SecretPath(env, c.Region.Name, c.Name)] = clusterSecret(c, g.Namespace, labels, annotations)
	}
	var dests []Destination
	for _, ns := range sortedSet(namespaces) {
		dests = append(dests, Destination{Name: env + "-*", Namespace: ns})
	}
	docs[path.Join(dir, "project.yaml")] = &AppProject{
		APIVersion: "argoproj.io/v1alpha1", Kind: "AppProject",
		Metadata: ObjectMeta{Name: g.Project, Namespace: g.Namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": "regionctl", "environment": env}},
		Spec: ProjectSpec{
			Description: "The platform components of the " + env + " clusters: their namespaces only, their chart sources only.",
			SourceRepos: sortedSet(repos), Destinations: dests,
			ClusterResourceWhitelist: ClusterResourcesOf(all),
			OrphanedResources:        &OrphanedPolicy{Warn: true},
		},
	}
	names := make([]string, 0, len(uses))
	for n := range uses {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		u := uses[name]
		var steps []Step
		for _, s := range sectors {
			if !u.sectors[s.Name] {
				continue
			}
			st := Step{MatchExpressions: []Requirement{{Key: "sector", Operator: "In", Values: []string{s.Name}}}}
			if s.MaxUpdate != "" {
				st.MaxUpdate = maxUpdate(s.MaxUpdate)
			}
			steps = append(steps, st)
		}
		docs[AppSetPath(env, name)] = buildSet(env, name, u.source, u.podSecurity, steps, g)
	}
	return docs, nil
}

// label reads a cluster Secret's label in a template: field syntax, so
// that missingkey=error stops a Secret without it.
func label(k string) string { return "{{.metadata.labels." + k + "}}" }

// annotation reads a cluster Secret's annotation and fails the template
// when it is absent or empty.
func annotation(k string) string {
	return `{{with index .metadata.annotations "` + k + `"}}{{.}}{{else}}{{fail "the cluster Secret has no annotation ` + k + `"}}{{end}}`
}

func buildSet(env, comp string, src ChartSource, podSecurityLevel string, steps []Step, g GitOps) *ApplicationSet {
	values := "$values/deploy/" + label("environment") + "/" + label("region") + "/argocd/" + label("cluster") + "/values/" + comp + ".yaml"
	chart := Source{RepoURL: src.RepoURL, Chart: src.Chart, Path: src.Path, TargetRevision: annotation(RevisionAnnotation(comp)),
		Helm: &Helm{ReleaseName: comp, ValueFiles: []string{values}}}
	sources := []Source{chart, {RepoURL: g.RepoURL, TargetRevision: g.Revision, Ref: "values"}}
	if src.Kustomize {
		chart.Helm = nil // a kustomization takes no values
		sources = []Source{chart}
	}
	return &ApplicationSet{
		APIVersion: "argoproj.io/v1alpha1",
		Kind:       "ApplicationSet",
		Metadata: ObjectMeta{Name: env + "-" + comp, Namespace: g.Namespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "regionctl", "environment": env, "component": comp}},
		Spec: Spec{
			GoTemplate:        true,
			GoTemplateOptions: []string{"missingkey=error"},
			Generators: []Generator{{Clusters: &ClusterGenerator{Selector: LabelSelector{MatchLabels: map[string]string{
				"environment": env, componentLabel(comp): "true"}}}}},
			Strategy: &Strategy{Type: "RollingSync", RollingSync: &RollingSync{Steps: steps}},
			Template: Template{
				Metadata: TemplateMeta{
					Name: label("region") + "-" + label("cluster") + "-" + comp,
					Labels: map[string]string{
						"sector": label("sector"), "region": label("region"), "cluster": label("cluster"),
						"environment": label("environment"), "cluster_type": label("cluster_type"), "component": comp,
					},
					Finalizers: []string{ForegroundFinalizer},
				},
				Spec: AppSpec{
					Project:     g.Project,
					Sources:     sources,
					Destination: Destination{Name: "{{.name}}", Namespace: annotation(NamespaceAnnotation(comp))},
					// RollingSync syncs each step itself; an automated policy
					// would be turned off by it, and without progressive
					// syncs would send the change everywhere at once.
					SyncPolicy: syncPolicy(false, podSecurity(podSecurityLevel)),
				},
			},
			SyncPolicy: &SetPolicy{PreserveResourcesOnDeletion: true},
		},
	}
}

func maxUpdate(s string) *IntOrString {
	if n, err := strconv.Atoi(s); err == nil {
		return &IntOrString{Int: &n}
	}
	return &IntOrString{Str: s}
}
