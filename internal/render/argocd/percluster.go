package argocd

import (
	"path"
	"sort"

	"github.com/regionctl/regionctl/internal/config"
)

// InCluster is the Kubernetes API of the cluster Argo CD runs in.
const InCluster = "https://kubernetes.default.svc"

// RootName is the name of each cluster's root Application (app of apps).
const RootName = "root"

// ClusterDir is where a cluster's Argo CD resources live in deploy/:
// root.yaml, which the bootstrap applies, and apps/, which the root
// Application syncs.
func ClusterDir(environment, region, cluster string) string {
	return path.Join(environment, region, "argocd", cluster)
}

// ClusterLabels are the labels of everything regionctl renders for c's
// Argo CD: the health gate and the ApplicationSets select on them.
func ClusterLabels(c *config.Cluster) map[string]string {
	return map[string]string{
		"cluster": c.Name, "region": c.Region.Name, "sector": c.SectorName(),
		"environment": c.Environment(), "cluster_type": c.Type,
	}
}

// podSecurity are the Pod Security Standard labels of a component's
// namespace: it enforces the component's level (restricted unless its
// pod_security says baseline), and warns and audits on what restricted
// would refuse whatever the level. conformance/charts has a real API server
// admit the charts it can render (the fleet's own, and those of other
// projects the Go module proxy serves) under restricted.
func podSecurity(level string) *NamespaceMetadata {
	if level == "" {
		level = "restricted"
	}
	return &NamespaceMetadata{Labels: map[string]string{"pod-security.kubernetes.io/enforce": level,
		"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "restricted"}}
}

func syncPolicy(automated bool, ns *NamespaceMetadata) SyncPolicy {
	p := SyncPolicy{
		SyncOptions:              []string{"CreateNamespace=true", "ServerSideApply=true"},
		ManagedNamespaceMetadata: ns,
		Retry:                    &Retry{Limit: 5, Backoff: &Backoff{Duration: "30s", Factor: 2, MaxDuration: "10m"}},
	}
	if automated {
		p.Automated = &Automated{Prune: true, SelfHeal: true}
	}
	return p
}

// PerClusterDocs are the documents of c's own Argo CD (per-cluster
// topology), by path in deploy/: root.yaml, the root Application the
// bootstrap applies, which syncs apps/ of this directory at the deploy
// branch; apps/project.yaml, the AppProject that confines every
// Application to this cluster, the components' namespaces and their chart
// sources; and apps/<component>.yaml, one Application per component,
// pinned at its chart revision, with its values inline.
func PerClusterDocs(c *config.Cluster, comps []Component, g GitOps) map[string]any {
	dir := ClusterDir(c.Environment(), c.Region.Name, c.Name)
	labels := ClusterLabels(c)
	withComponent := func(name string) map[string]string {
		l := map[string]string{"app.kubernetes.io/managed-by": "regionctl", "component": name}
		for k, v := range labels {
			l[k] = v
		}
		return l
	}
	docs := map[string]any{}
	repos := map[string]bool{g.RepoURL: true}
	namespaces := map[string]bool{g.Namespace: true}
	for _, comp := range comps {
		repos[comp.Source.RepoURL] = true
		namespaces[comp.Namespace] = true
		src := &Source{RepoURL: comp.Source.RepoURL, Chart: comp.Source.Chart, Path: comp.Source.Path, TargetRevision: comp.Revision,
			Helm: &Helm{ReleaseName: comp.Name, ValuesObject: comp.Values}}
		if comp.Source.Kustomize {
			src.Helm = nil // a kustomization takes no values
		}
		docs[path.Join(dir, "apps", comp.Name+".yaml")] = &Application{
			APIVersion: "argoproj.io/v1alpha1", Kind: "Application",
			Metadata: AppMeta{Name: comp.Name, Namespace: g.Namespace, Labels: withComponent(comp.Name),
				Finalizers: []string{ForegroundFinalizer}},
			Spec: AppSpec{Project: g.Project, Source: src, Destination: Destination{Server: InCluster, Namespace: comp.Namespace},
				SyncPolicy: syncPolicy(true, podSecurity(comp.PodSecurity))},
		}
	}
	var dests []Destination
	for _, ns := range sortedSet(namespaces) {
		dests = append(dests, Destination{Server: InCluster, Namespace: ns})
	}
	docs[path.Join(dir, "apps", "project.yaml")] = &AppProject{
		APIVersion: "argoproj.io/v1alpha1", Kind: "AppProject",
		Metadata: ObjectMeta{Name: g.Project, Namespace: g.Namespace, Labels: withComponent(RootName)},
		Spec: ProjectSpec{
			Description: "The platform components of " + c.ID() + ": this cluster only, their namespaces only, their chart sources only.",
			SourceRepos: sortedSet(repos), Destinations: dests,
			// The cluster-scoped kinds the components' charts install
			// (their CRDs, cluster roles, webhooks), and no others.
			ClusterResourceWhitelist: ClusterResourcesOf(comps),
			OrphanedResources:        &OrphanedPolicy{Warn: true},
		},
	}
	// The root's namespace is Argo CD's: it carries the Pod Security
	// labels of the components that run there (one level: render refuses
	// two), and the bootstrap labels the namespace with them when it makes
	// it, so that nothing runs there unchecked before the first sync.
	rootNS := podSecurity("")
	for _, comp := range comps {
		if comp.Namespace == g.Namespace {
			rootNS = podSecurity(comp.PodSecurity)
			break
		}
	}
	docs[path.Join(dir, "root.yaml")] = &Application{
		APIVersion: "argoproj.io/v1alpha1", Kind: "Application",
		Metadata: AppMeta{Name: RootName, Namespace: g.Namespace, Labels: withComponent(RootName)},
		Spec: AppSpec{Project: g.Project,
			Source:      &Source{RepoURL: g.RepoURL, Path: path.Join("deploy", dir, "apps"), TargetRevision: g.Revision, Directory: &Directory{}},
			Destination: Destination{Server: InCluster, Namespace: g.Namespace}, SyncPolicy: syncPolicy(true, rootNS)},
	}
	return docs
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ForegroundFinalizer makes deleting an Application delete its resources
// first, in the foreground: Argo CD's ForegroundPropagationPolicyFinalizer
// (pkg/apis/application/v1alpha1/application_defaults.go of the release the
// bootstrap installs), the same deletion as its legacy name
// resources-finalizer.argocd.argoproj.io, which a real kube-apiserver
// admits with a warning (a finalizer name should be domain-qualified with
// a path).
const ForegroundFinalizer = "resources-finalizer.argocd.argoproj.io/foreground"
