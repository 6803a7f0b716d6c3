package argocd

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/regionctl/regionctl/internal/config"
)

// GitOps says where Argo CD finds this repository.
type GitOps struct {
	RepoURL   string
	Revision  string
	Project   string
	Namespace string
}

// Input is what one ApplicationSet is built from.
type Input struct {
	Environment string
	Type        string            // cluster type
	Sectors     []*config.Sector  // rollout order; those with clusters of Type in Environment
	Clusters    []*config.Cluster // of Type in Environment, not being deleted
	Charts      []string          // chart directories under charts/<Type>
	GitOps      GitOps
}

// ChartsDir is where the component charts of a cluster type live.
func ChartsDir(clusterType string) string { return path.Join("charts", clusterType) }

// Path of the ApplicationSet and of a cluster's values file in deploy/.
func Path(environment, clusterType string) string {
	return path.Join(environment, "argocd", "applicationset-"+clusterType+".yaml")
}

func ValuesPath(environment, region, cluster string) string {
	return path.Join(environment, region, "argocd", cluster+"-values.yaml")
}

// Build returns the ApplicationSet of in.
func Build(in Input) *ApplicationSet {
	steps := make([]Step, 0, len(in.Sectors))
	for _, s := range in.Sectors {
		st := Step{MatchExpressions: []Requirement{{Key: "sector", Operator: "In", Values: []string{s.Name}}}}
		if s.MaxUpdate != "" {
			st.MaxUpdate = maxUpdate(s.MaxUpdate)
		}
		steps = append(steps, st)
	}
	label := func(k string) string { return `{{index .metadata.labels "` + k + `"}}` }
	return &ApplicationSet{
		APIVersion: "argoproj.io/v1alpha1",
		Kind:       "ApplicationSet",
		Metadata: ObjectMeta{
			Name:      fmt.Sprintf("%s-%s", in.Environment, in.Type),
			Namespace: in.GitOps.Namespace,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "regionctl", "environment": in.Environment, "cluster_type": in.Type},
		},
		Spec: Spec{
			GoTemplate:        true,
			GoTemplateOptions: []string{"missingkey=error"},
			Generators: []Generator{{Matrix: &Matrix{Generators: []Generator{
				{Clusters: &ClusterGenerator{Selector: LabelSelector{MatchLabels: map[string]string{"cluster_type": in.Type, "environment": in.Environment}}}},
				{Git: &GitGenerator{RepoURL: in.GitOps.RepoURL, Revision: in.GitOps.Revision, Directories: []GitDirectory{{Path: ChartsDir(in.Type) + "/*"}}}},
			}}}},
			Strategy: &Strategy{Type: "RollingSync", RollingSync: &RollingSync{Steps: steps}},
			Template: Template{
				Metadata: TemplateMeta{
					Name: label("region") + "-" + label("cluster") + "-{{.path.basename}}",
					Labels: map[string]string{
						"sector": label("sector"), "region": label("region"), "cluster": label("cluster"),
						"environment": label("environment"), "cluster_type": label("cluster_type"), "component": "{{.path.basename}}",
					},
					Finalizers: []string{"resources-finalizer.argocd.argoproj.io"},
				},
				Spec: AppSpec{
					Project: in.GitOps.Project,
					Sources: []Source{
						{RepoURL: in.GitOps.RepoURL, Path: "{{.path.path}}", TargetRevision: in.GitOps.Revision, Helm: &Helm{
							ReleaseName: "{{.path.basename}}",
							ValueFiles:  []string{"$values/deploy/" + label("environment") + "/" + label("region") + "/argocd/" + label("cluster") + "-values.yaml"},
						}},
						{RepoURL: in.GitOps.RepoURL, TargetRevision: in.GitOps.Revision, Ref: "values"},
					},
					Destination: Destination{Server: "{{.server}}", Namespace: "{{.path.basename}}"},
					SyncPolicy: SyncPolicy{
						Automated:   &Automated{Prune: true, SelfHeal: true},
						SyncOptions: []string{"CreateNamespace=true", "ServerSideApply=true"},
						Retry:       &Retry{Limit: 5, Backoff: &Backoff{Duration: "30s", Factor: 2, MaxDuration: "10m"}},
					},
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

// ClusterLabels are the labels the Argo CD cluster secret of c carries;
// the clusters generator selects on them and the template reads them.
func ClusterLabels(c *config.Cluster) map[string]string {
	return map[string]string{
		"cluster": c.Name, "region": c.Region.Name, "sector": c.SectorName(),
		"environment": c.Environment(), "cluster_type": c.Type,
	}
}

// Application is one Application the ApplicationSet generates.
type Application struct {
	Name       string            `json:"name"`
	Labels     map[string]string `json:"labels"`
	Cluster    string            `json:"cluster"` // region/cluster
	Chart      string            `json:"chart"`   // chart directory
	ValuesFile string            `json:"values_file"`
	Step       int               `json:"step"` // 1-based RollingSync step; 0 when none matched
	Sector     string            `json:"sector"`
}

// Expand evaluates the generators and the template offline, as the
// ApplicationSet controller would: one Application per (cluster, chart),
// each assigned to the first RollingSync step that matches it.
func Expand(set *ApplicationSet, in Input) ([]Application, error) {
	tname, err := template.New("name").Option("missingkey=error").Parse(set.Spec.Template.Metadata.Name)
	if err != nil {
		return nil, fmt.Errorf("template name: %w", err)
	}
	labelTmpl := map[string]*template.Template{}
	for k, v := range set.Spec.Template.Metadata.Labels {
		t, err := template.New(k).Option("missingkey=error").Parse(v)
		if err != nil {
			return nil, fmt.Errorf("template label %s: %w", k, err)
		}
		labelTmpl[k] = t
	}
	values, err := template.New("values").Option("missingkey=error").Parse(set.Spec.Template.Spec.Sources[0].Helm.ValueFiles[0])
	if err != nil {
		return nil, fmt.Errorf("template valueFiles: %w", err)
	}
	exec := func(t *template.Template, params map[string]any) (string, error) {
		var b bytes.Buffer
		err := t.Execute(&b, params)
		return b.String(), err
	}
	var apps []Application
	for _, c := range in.Clusters {
		for _, chart := range in.Charts {
			p := path.Join(ChartsDir(in.Type), chart)
			params := map[string]any{
				"name":     c.Name,
				"server":   "https://" + c.Name + "." + c.Region.Name + ".eks.amazonaws.com",
				"metadata": map[string]any{"labels": ClusterLabels(c)},
				"path":     map[string]any{"path": p, "basename": chart},
			}
			app := Application{Cluster: c.ID(), Chart: p, Labels: map[string]string{}}
			if app.Name, err = exec(tname, params); err != nil {
				return nil, fmt.Errorf("expanding %s for %s: %w", p, c.ID(), err)
			}
			for k, t := range labelTmpl {
				if app.Labels[k], err = exec(t, params); err != nil {
					return nil, fmt.Errorf("expanding label %s for %s: %w", k, c.ID(), err)
				}
			}
			vf, err := exec(values, params)
			if err != nil {
				return nil, fmt.Errorf("expanding valueFiles for %s: %w", c.ID(), err)
			}
			app.ValuesFile = strings.TrimPrefix(vf, "$values/")
			for i, st := range set.Spec.Strategy.RollingSync.Steps {
				if matches(st.MatchExpressions, app.Labels) {
					app.Step, app.Sector = i+1, st.MatchExpressions[0].Values[0]
					break
				}
			}
			apps = append(apps, app)
		}
	}
	sort.Slice(apps, func(i, j int) bool {
		if apps[i].Step != apps[j].Step {
			return apps[i].Step < apps[j].Step
		}
		return apps[i].Name < apps[j].Name
	})
	return apps, nil
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

// Check refuses an expansion where an Application matches no step or more
// than one, a step matches nothing, two Applications share a name, or the
// steps do not follow the sectors' order.
func Check(set *ApplicationSet, in Input, apps []Application) []string {
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
	}
	for i, n := range hits {
		if n == 0 {
			problems = append(problems, fmt.Sprintf("RollingSync step %d (%v) matches no Application", i+1, steps[i].MatchExpressions))
		}
	}
	if len(steps) != len(in.Sectors) {
		problems = append(problems, fmt.Sprintf("%d RollingSync steps for %d sectors", len(steps), len(in.Sectors)))
	} else {
		for i, s := range in.Sectors {
			if got := steps[i].MatchExpressions[0].Values; len(got) != 1 || got[0] != s.Name {
				problems = append(problems, fmt.Sprintf("RollingSync step %d is %v, want sector %s (order %d)", i+1, got, s.Name, s.Order))
			}
		}
	}
	return problems
}
