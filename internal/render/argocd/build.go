package argocd

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

// GitOps says where Argo CD finds this repository, and how it is laid out.
type GitOps struct {
	RepoURL   string
	Revision  string
	Project   string
	Namespace string
	Topology  string // PerCluster or Central
	// RunnerImage is regionctl's image (gitops.runner_image), which the
	// health reporter runs.
	RunnerImage string
}

// ChartsDir holds the charts the platform itself owns, one directory each.
const ChartsDir = "charts"

// Planned is one Application as Argo CD will hold it.
type Planned struct {
	Name      string `json:"name"`
	Cluster   string `json:"cluster"` // region/cluster
	Component string `json:"component"`
	Sector    string `json:"sector"`
	Namespace string `json:"namespace"`
	RepoURL   string `json:"repo_url"`
	Chart     string `json:"chart,omitempty"`
	Path      string `json:"path,omitempty"`
	Revision  string `json:"target_revision"`
	// Kustomize says Path is a kustomization, not a chart.
	Kustomize bool              `json:"-"`
	Labels    map[string]string `json:"labels"`
	// Step is the RollingSync step the Application syncs in (central
	// topology), 1-based; 0 when it matched none.
	Step int `json:"step,omitempty"`
}

// ClusterParams are the parameters Argo CD's cluster generator gives a
// template for one cluster Secret: name, server and metadata.
func ClusterParams(secret map[string]any) map[string]any {
	meta, _ := secret["metadata"].(map[string]any)
	data, _ := secret["stringData"].(map[string]string)
	return map[string]any{
		"name": data["name"], "server": data["server"], "nameNormalized": data["name"],
		"metadata": map[string]any{"labels": meta["labels"], "annotations": meta["annotations"]},
	}
}

// ExpandSet evaluates a central ApplicationSet offline against the
// rendered cluster Secrets, as the ApplicationSet controller would with
// goTemplate and missingkey=error: one Application per Secret its selector
// matches, each assigned the first RollingSync step that matches it. The
// authority is Argo CD's own code (conformance/argocd); this is the render's
// own check.
func ExpandSet(set *ApplicationSet, secrets []map[string]any) ([]Planned, error) {
	funcs := template.FuncMap{"fail": func(msg string) (string, error) { return "", errors.New(msg) }}
	parse := func(what, text string) (*template.Template, error) {
		t, err := template.New(what).Funcs(funcs).Option("missingkey=error").Parse(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return t, nil
	}
	tmpl := set.Spec.Template
	src := tmpl.Spec.Sources[0]
	fields := map[string]string{"name": tmpl.Metadata.Name, "revision": src.TargetRevision, "namespace": tmpl.Spec.Destination.Namespace}
	for k, v := range tmpl.Metadata.Labels {
		fields["label:"+k] = v
	}
	parsed := map[string]*template.Template{}
	for k, v := range fields {
		t, err := parse(k, v)
		if err != nil {
			return nil, err
		}
		parsed[k] = t
	}
	sel := set.Spec.Generators[0].Clusters.Selector.MatchLabels
	var apps []Planned
	for _, s := range secrets {
		p := ClusterParams(s)
		labels, _ := p["metadata"].(map[string]any)["labels"].(map[string]string)
		if !selects(sel, labels) {
			continue
		}
		out := map[string]string{}
		for k, t := range parsed {
			var b bytes.Buffer
			if err := t.Execute(&b, p); err != nil {
				return nil, fmt.Errorf("%s for cluster %s: %w", set.Metadata.Name, p["name"], err)
			}
			out[k] = b.String()
		}
		app := Planned{Name: out["name"], Cluster: labels["region"] + "/" + labels["cluster"], Component: set.Metadata.Labels["component"],
			Namespace: out["namespace"], RepoURL: src.RepoURL, Chart: src.Chart, Path: src.Path, Revision: out["revision"], Labels: map[string]string{}}
		for k, v := range out {
			if l, ok := strings.CutPrefix(k, "label:"); ok {
				app.Labels[l] = v
			}
		}
		app.Sector = app.Labels["sector"]
		for i, st := range set.Spec.Strategy.RollingSync.Steps {
			if matches(st.MatchExpressions, app.Labels) {
				app.Step = i + 1
				break
			}
		}
		apps = append(apps, app)
	}
	sort.Slice(apps, func(i, j int) bool {
		if apps[i].Step != apps[j].Step {
			return apps[i].Step < apps[j].Step
		}
		return apps[i].Name < apps[j].Name
	})
	return apps, nil
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func matches(reqs []Requirement, labels map[string]string) bool {
	for _, r := range reqs {
		v, ok := labels[r.Key]
		in := false
		for _, w := range r.Values {
			in = in || (ok && v == w)
		}
		switch r.Operator {
		case "In":
			if !in {
				return false
			}
		case "NotIn":
			if in {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

var action = regexp.MustCompile(`\{\{.*?\}\}`)

// CheckSet refuses an expansion where an Application matches no step or
// more than one, a step matches nothing, two Applications share a name,
// the steps do not follow sectors (the sectors that run the component, in
// rollout order), an Application has no revision, or the template holds
// any template action regionctl did not write itself (a value from config
// that would be evaluated as a template).
func CheckSet(set *ApplicationSet, sectors []string, apps []Planned) []string {
	var problems []string
	steps := set.Spec.Strategy.RollingSync.Steps
	hits := make([]int, len(steps))
	names := map[string]string{}
	for _, a := range apps {
		n := 0
		for i, st := range steps {
			if matches(st.MatchExpressions, a.Labels) {
				n++
				hits[i]++
			}
		}
		if n != 1 {
			problems = append(problems, fmt.Sprintf("Application %s (%s) matches %d RollingSync steps, want exactly 1", a.Name, a.Cluster, n))
		}
		if prev, dup := names[a.Name]; dup {
			problems = append(problems, fmt.Sprintf("Applications of %s and %s share the name %s", prev, a.Cluster, a.Name))
		}
		names[a.Name] = a.Cluster
		if a.Revision == "" || a.Sector == "" {
			problems = append(problems, fmt.Sprintf("Application %s (%s) has no revision or no sector", a.Name, a.Cluster))
		}
	}
	for i, n := range hits {
		if n == 0 {
			problems = append(problems, fmt.Sprintf("RollingSync step %d (%v) matches no Application", i+1, steps[i].MatchExpressions))
		}
	}
	if len(steps) != len(sectors) {
		problems = append(problems, fmt.Sprintf("%d RollingSync steps for %d sectors", len(steps), len(sectors)))
	} else {
		for i, s := range sectors {
			if got := steps[i].MatchExpressions[0].Values; len(got) != 1 || got[0] != s {
				problems = append(problems, fmt.Sprintf("RollingSync step %d is %v, want sector %s", i+1, got, s))
			}
		}
	}
	if set.Spec.Template.Spec.SyncPolicy.Automated != nil {
		problems = append(problems, "the template has an automated sync policy: RollingSync turns it off, and without progressive syncs it syncs every sector at once")
	}
	comp := set.Metadata.Labels["component"]
	allowed := map[string]bool{"{{.name}}": true}
	for _, k := range []string{"sector", "region", "cluster", "environment", "cluster_type"} {
		allowed[label(k)] = true
	}
	for _, a := range []string{RevisionAnnotation(comp), NamespaceAnnotation(comp)} {
		for _, m := range action.FindAllString(annotation(a), -1) {
			allowed[m] = true
		}
	}
	forEachString(set.Spec.Template, func(s string) {
		for _, m := range action.FindAllString(s, -1) {
			if !allowed[m] {
				problems = append(problems, fmt.Sprintf("the template holds %q, which regionctl did not write: a value from config must never be evaluated as a template", m))
			}
		}
		if rest := action.ReplaceAllString(s, ""); strings.Contains(rest, "{{") || strings.Contains(rest, "}}") {
			problems = append(problems, fmt.Sprintf("the template holds a stray delimiter in %q", s))
		}
	})
	return problems
}

// forEachString calls fn with every string of the template.
func forEachString(t Template, fn func(string)) {
	fn(t.Metadata.Name)
	for _, v := range t.Metadata.Labels {
		fn(v)
	}
	fn(t.Spec.Project)
	for _, s := range t.Spec.Sources {
		fn(s.RepoURL)
		fn(s.Chart)
		fn(s.Path)
		fn(s.TargetRevision)
		fn(s.Ref)
		if s.Helm != nil {
			fn(s.Helm.ReleaseName)
			for _, v := range s.Helm.ValueFiles {
				fn(v)
			}
		}
	}
	fn(t.Spec.Destination.Name)
	fn(t.Spec.Destination.Server)
	fn(t.Spec.Destination.Namespace)
}
