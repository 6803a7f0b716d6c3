package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/render/encode"
)

// ReadCharts lists the charts the platform owns: the directories under
// charts/ of fsys that hold a Chart.yaml.
func ReadCharts(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, argocd.ChartsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", argocd.ChartsDir, err)
	}
	var out []string
	var links []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			links = append(links, argocd.ChartsDir+"/"+e.Name())
			continue
		}
		if _, err := fs.Stat(fsys, argocd.ChartsDir+"/"+e.Name()+"/Chart.yaml"); e.IsDir() && err == nil {
			out = append(out, e.Name())
			_ = fs.WalkDir(fsys, argocd.ChartsDir+"/"+e.Name(), func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type()&fs.ModeSymlink != 0 {
					links = append(links, p)
				}
				return nil
			})
		}
	}
	if len(links) > 0 {
		return nil, fmt.Errorf("symbolic links in %s: %s; Argo CD and regionctl read charts from the repository itself: replace each link with what it points at",
			argocd.ChartsDir, strings.Join(links, ", "))
	}
	sort.Strings(out)
	return out, nil
}

// GitOpsOf reads the gitops settings of the fleet's global config.
func GitOpsOf(f *config.Fleet) argocd.GitOps {
	g := argocd.GitOps{RepoURL: "https://git.example.com/fleet.git", Revision: "main", Project: "default", Namespace: "argocd", Topology: argocd.PerCluster}
	v := f.Global.Get("gitops")
	set := func(dst *string, key string) {
		if s := v.Get(key); s != nil && s.Kind == config.String {
			*dst = s.Str
		}
	}
	set(&g.RepoURL, "repo_url")
	set(&g.Revision, "revision")
	set(&g.Project, "argocd_project")
	set(&g.Namespace, "argocd_namespace")
	set(&g.Topology, "argocd_topology")
	set(&g.RunnerImage, "runner_image")
	return g
}

// ReadChartValues reads the defaults and schema of each of charts (ReadCharts's
// list) from fsys.
func ReadChartValues(fsys fs.FS, charts []string) (map[string]*argocd.ChartValues, error) {
	out := make(map[string]*argocd.ChartValues, len(charts))
	for _, name := range charts {
		cv, err := argocd.ReadChartValues(fsys, name)
		if err != nil {
			return nil, err
		}
		out[name] = cv
	}
	return out, nil
}

// chartDigests names the bytes of each chart's values.yaml and schema, for
// the clusters' input identity.
func chartDigests(values map[string]*argocd.ChartValues) map[string]string {
	if len(values) == 0 {
		return nil
	}
	out := make(map[string]string, len(values))
	for name, cv := range values {
		out[name] = cv.Digest
	}
	return out
}

func (r *renderer) owned() map[string]bool {
	m := make(map[string]bool, len(r.opts.Charts))
	for _, c := range r.opts.Charts {
		m[c] = true
	}
	return m
}

// components resolves the components c runs; their problems are c's
// diagnostics.
func (r *renderer) components(c *config.Cluster) ([]argocd.Component, diag.Diagnostics) {
	comps, problems := argocd.Components(c, r.gitops, r.owned())
	var diags diag.Diagnostics
	for _, p := range problems {
		diags = append(diags, diag.Errorf(p.Pos, p.Detail, "%s: %s", c.ID(), p.Summary))
	}
	for _, comp := range comps {
		diags = append(diags, r.chartValues(c, comp)...)
	}
	return comps, diags
}

// chartValues holds a component of a chart of this repository to the
// chart's values.schema.json, as Helm holds the values Argo CD passes (the
// Application's over the chart's values.yaml): Helm refuses to render the
// chart otherwise, and the Application never syncs. Each finding is placed
// at the value in config/ that the schema refused, or at the component
// when no layer set it.
func (r *renderer) chartValues(c *config.Cluster, comp argocd.Component) diag.Diagnostics {
	cv := r.opts.ChartValues[comp.Name]
	if cv == nil || comp.Source.Path != path.Join(argocd.ChartsDir, comp.Name) {
		return nil
	}
	return ChartValuesDiagnostics(c, comp.Name, path.Join(argocd.ChartsDir, comp.Name, "values.schema.json"), comp.Values, cv)
}

// ChartValuesDiagnostics holds values, which c's component name gives its
// chart, to cv, the chart's defaults and schema (named schema in the
// messages), each finding at the value in config/ the schema refused.
func ChartValuesDiagnostics(c *config.Cluster, name, schema string, values map[string]any, cv *argocd.ChartValues) diag.Diagnostics {
	found, err := cv.Check(values)
	if err != nil {
		return diag.Diagnostics{diag.Errorf(diag.Pos{File: c.Doc.File}, err.Error(), "%s: component %s's values cannot be held to %s", c.ID(), name, schema)}
	}
	var diags diag.Diagnostics
	for _, f := range found {
		at, where := valuePos(c, name, f.Path)
		d := diag.Errorf(at, fmt.Sprintf("Helm holds the values Argo CD passes (the Application's values over the chart's values.yaml) to %s and refuses to render the chart when they fail it, so this Application would never sync. Fix the value in config/, or the schema if it is the schema that is wrong.", schema),
			"%s: component %s's value %s fails %s: %s", c.ID(), name, where, schema, f.Message)
		d.Path = "components." + name + ".values"
		if len(f.Path) > 0 {
			d.Path += "." + strings.Join(f.Path, ".")
		}
		diags = append(diags, d)
	}
	return diags
}

// valuePos is where in config/ c's component name's value at p (inside its
// chart's values) was set, or the nearest enclosing value a layer set, and
// p spelled for a reader.
func valuePos(c *config.Cluster, name string, p []string) (diag.Pos, string) {
	where := "values"
	if len(p) > 0 {
		where = "values." + strings.Join(p, ".")
	}
	at := diag.Pos{File: c.Doc.File}
	v := c.Effective.Lookup("components", name)
	if v == nil {
		return at, where
	}
	at = v.Origin.Pos
	if v = v.Get("values"); v == nil {
		return at, where
	}
	at = v.Origin.Pos
	for _, key := range p {
		switch {
		case v.Kind == config.Map:
			v = v.Get(key)
		case v.Kind == config.List:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(v.Items) {
				return at, where
			}
			v = v.Items[i]
		default:
			v = nil
		}
		if v == nil {
			return at, where
		}
		if v.Origin.Pos.File != "" {
			at = v.Origin.Pos
		}
	}
	return at, where
}

// clusterArgo renders what Argo CD applies for c: in the per-cluster
// topology its root Application, AppProject and component Applications,
// the root and project even without components (the pipelines bootstrap
// every cluster's Argo CD, and a component added later needs no new
// bootstrap); in the central topology its components' values files.
func (r *renderer) clusterArgo(c *config.Cluster) ([]Artifact, []argocd.Component, diag.Diagnostics) {
	comps, diags := r.components(c)
	if diags.HasErrors() {
		return nil, comps, diags
	}
	at := diag.Pos{File: c.Doc.File}
	var arts []Artifact
	if r.gitops.Topology == argocd.Central {
		for _, comp := range comps {
			if comp.Source.Kustomize {
				continue // a kustomization takes no values
			}
			b, err := argocd.ValuesFile(comp)
			if err != nil {
				return nil, nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot encode the %s values of %s", comp.Name, c.ID())}
			}
			arts = append(arts, Artifact{Path: argocd.ValuesPath(c.Environment(), c.Region.Name, c.Name, comp.Name), Bytes: b, Owner: c.ID()})
		}
		return arts, comps, nil
	}
	for p, doc := range argocd.PerClusterDocs(c, comps, r.gitops) {
		b, err := encode.YAML(doc)
		if err != nil {
			return nil, nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot encode %s", p)}
		}
		arts = append(arts, Artifact{Path: p, Bytes: b, Owner: c.ID()})
	}
	sort.Slice(arts, func(i, j int) bool { return arts[i].Path < arts[j].Path })
	return arts, comps, nil
}

// centralArgo renders each environment's central Argo CD (central
// topology only), and checks every ApplicationSet by expanding it against
// the rendered cluster Secrets.
func (r *renderer) centralArgo(f *config.Fleet) ([]Artifact, diag.Diagnostics) {
	arts, _, diags := r.central(f)
	return arts, diags
}

func (r *renderer) central(f *config.Fleet) ([]Artifact, []argocd.Planned, diag.Diagnostics) {
	if r.gitops.Topology != argocd.Central {
		return nil, nil, nil
	}
	var planned []argocd.Planned
	byEnv := map[string][]argocd.ClusterRef{}
	var envs []string
	refs, diags := r.liveComponents(f)
	if diags.HasErrors() {
		return nil, nil, diags
	}
	for _, ref := range refs {
		env := ref.Cluster.Environment()
		if _, ok := byEnv[env]; !ok {
			envs = append(envs, env)
		}
		byEnv[env] = append(byEnv[env], ref)
	}
	sort.Strings(envs)
	var arts []Artifact
	for _, env := range envs {
		var sectors []*config.Sector
		for _, s := range f.Sectors {
			if s.Environment == env {
				sectors = append(sectors, s)
			}
		}
		at := diag.Pos{File: "config/global"}
		if len(sectors) > 0 {
			at = diag.Pos{File: sectors[0].Doc.File}
		}
		docs, err := argocd.CentralDocs(env, sectors, byEnv[env], r.gitops)
		if err != nil {
			return nil, nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot render the central Argo CD of %s", env)}
		}
		var secrets []map[string]any
		var paths []string
		for p, doc := range docs {
			paths = append(paths, p)
			if m, ok := doc.(map[string]any); ok && m["kind"] == "Secret" {
				secrets = append(secrets, m)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			if set, ok := docs[p].(*argocd.ApplicationSet); ok {
				apps, err := argocd.ExpandSet(set, secrets)
				if err != nil {
					return nil, nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot expand %s", p)}
				}
				var order []string
				for _, s := range sectors {
					for _, a := range apps {
						if a.Sector == s.Name {
							order = append(order, s.Name)
							break
						}
					}
				}
				if problems := argocd.CheckSet(set, order, apps); len(problems) > 0 {
					return nil, nil, diag.Diagnostics{diag.Errorf(at, strings.Join(problems, "\n"), "%s does not roll out sector by sector", p)}
				}
				planned = append(planned, apps...)
			}
			b, err := encode.YAML(docs[p])
			if err != nil {
				return nil, nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot encode %s", p)}
			}
			arts = append(arts, Artifact{Path: p, Bytes: b})
		}
	}
	return arts, planned, nil
}

// Applications lists every Application the fleet's Argo CDs will hold, by
// cluster: in the per-cluster topology those rendered for each cluster, in
// the central one those the ApplicationSets generate (with their
// RollingSync step).
func Applications(f *config.Fleet, charts []string) ([]argocd.Planned, diag.Diagnostics) {
	r := &renderer{opts: Options{Charts: charts}, gitops: GitOpsOf(f)}
	if r.gitops.Topology == argocd.Central {
		_, apps, diags := r.central(f)
		return apps, diags
	}
	var apps []argocd.Planned
	refs, diags := r.liveComponents(f)
	for _, ref := range refs {
		c := ref.Cluster
		for _, comp := range ref.Components {
			apps = append(apps, argocd.Planned{Name: comp.Name, Cluster: c.ID(), Component: comp.Name, Sector: c.SectorName(), Namespace: comp.Namespace,
				RepoURL: comp.Source.RepoURL, Chart: comp.Source.Chart, Path: comp.Source.Path, Revision: comp.Revision, Kustomize: comp.Source.Kustomize, Labels: argocd.ClusterLabels(c)})
		}
	}
	return apps, diags
}

// liveComponents resolves the components of every cluster not being
// deleted, in fleet order; their problems are the diagnostics.
func (r *renderer) liveComponents(f *config.Fleet) ([]argocd.ClusterRef, diag.Diagnostics) {
	var refs []argocd.ClusterRef
	var diags diag.Diagnostics
	for _, c := range f.Clusters {
		if c.Deleting() {
			continue
		}
		comps, ds := r.components(c)
		diags = append(diags, ds...)
		refs = append(refs, argocd.ClusterRef{Cluster: c, Components: comps})
	}
	return refs, diags
}
