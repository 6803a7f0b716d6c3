package review

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/manifests"
	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

// appFile is where render writes a cluster's Application of a component
// (per-cluster topology): <env>/<region>/argocd/<cluster>/apps/<name>.yaml.
var appFile = regexp.MustCompile(`^[^/]+/([^/]+)/argocd/([^/]+)/apps/([^/]+)\.yaml$`)

// application is what an Application asks of its chart: a directory of a
// git repository (Path), or a chart of a Helm repository (Chart).
type application struct {
	RepoURL, Path, Chart, Revision string
	Release                        manifests.Release
	// Kustomize says Path is a kustomization, which takes no values: it is
	// built by kustomize, not rendered by Helm.
	Kustomize bool
}

// git is the chart directory (or kustomization) of another project's git
// repository a names.
func (a *application) git() manifests.GitSource {
	return manifests.GitSource{URL: a.RepoURL, Path: a.Path, Revision: a.Revision, Kustomize: a.Kustomize}
}

// oci says a's chart is an OCI registry's (Argo CD's OCI source).
func (a *application) oci() bool { return a.Chart == "" && strings.HasPrefix(a.RepoURL, "oci://") }

func (a *application) ociSource() manifests.OCISource {
	return manifests.OCISource{URL: a.RepoURL, Revision: a.Revision}
}

// locked is a's chart of another project as a lock names it.
func (a *application) locked() manifests.Locked {
	if a.Chart != "" {
		return manifests.Locked{Repo: a.RepoURL, Chart: a.Chart, Revision: a.Revision}
	}
	return manifests.Locked{Repo: a.RepoURL, Path: a.Path, Revision: a.Revision}
}

// otherCharts are the charts of other projects the review reads: from the
// cache, as each side's charts.lock pins them.
type otherCharts struct {
	cache manifests.Cache
	locks [2]*manifests.Lock // the base's, the head's
	// unread says why the base's lock could not be read ("" when it was):
	// its charts are then rendered unpinned.
	unread string
	// held is what the cache holds each chart at, read once for all the
	// clusters that name it.
	held map[string]string
}

// renderable says why a's chart cannot be rendered on its side ("" when
// it can), and what a reviewer should know of the chart it renders: a
// chart of this repository (self) is read from git; another project's
// chart or kustomization is read from the cache as readable says.
func (o otherCharts) renderable(a *application, self string, head bool) (string, string) {
	switch {
	case a.Kustomize && !manifests.Cached(a.RepoURL, a.Chart, self):
		return fmt.Sprintf("%s at %s of %s is a kustomization the chart cache does not take, which the review does not build", a.Path, a.Revision, a.RepoURL), ""
	case !a.Kustomize && a.Chart == "" && a.RepoURL == self && strings.HasPrefix(a.Path, argocd.ChartsDir+"/"):
		return "", ""
	case !manifests.Cached(a.RepoURL, a.Chart, self):
		return fmt.Sprintf("the chart comes from %s, which the review does not fetch", a.RepoURL), ""
	}
	return o.readable(a, head)
}

// heldPin is what the cache holds a's chart of another project at: a
// digest or a commit, "" when it holds none.
func (o otherCharts) heldPin(a *application) string {
	key := fmt.Sprint(a.Kustomize, " ", a.locked())
	if pin, ok := o.held[key]; ok {
		return pin
	}
	var pin string
	switch {
	case o.cache.Dir == "":
	case a.oci():
		pin = o.cache.OCIPin(a.ociSource())
	case a.Chart == "":
		pin = o.cache.GitPin(a.git())
	default:
		pin = o.cache.HelmPin(a.RepoURL, a.Chart, a.Revision)
	}
	if o.held != nil {
		o.held[key] = pin
	}
	return pin
}

// readable says why a's chart of another project cannot be read on its
// side ("" when it can): the cache does not hold it, or holds another than
// the side's lock pins. A chart the lock does not pin is read as the cache
// holds it, and the note says so.
func (o otherCharts) readable(a *application, head bool) (why, note string) {
	e := a.locked()
	held := o.heldPin(a)
	pin, side := o.locks[0].Pin(e), "the base's"
	if head {
		pin, side = o.locks[1].Pin(e), "the head's"
	}
	switch {
	case held == "":
		return fmt.Sprintf("chart %s is not in the chart cache (regionctl charts pull)", e), ""
	case pin != "" && held != pin:
		pinned := e
		pinned.SHA256, pinned.Commit = held, ""
		if e.Chart == "" && !a.oci() {
			pinned.SHA256, pinned.Commit = "", held
		}
		return fmt.Sprintf("the chart cache holds %s at %s, but %s %s pins %s (regionctl charts pull)", e, pinned.PinText(), side, manifests.LockFile, pin), ""
	case pin == "" && !head && o.unread != "":
		return "", fmt.Sprintf("%s rendered unpinned: %s", e, o.unread)
	case pin == "":
		return "", fmt.Sprintf("%s is not pinned in %s %s: rendered as the chart cache holds it (regionctl charts pull pins it)", e, side, manifests.LockFile)
	}
	return "", ""
}

// ManifestError is a chart the head's Application cannot render: Argo CD
// would fail to sync it as well.
type ManifestError struct{ Errs []string }

func (e *ManifestError) Error() string {
	return "the head's charts do not render:\n  " + strings.Join(e.Errs, "\n  ")
}

// manifestChanges renders, for each Application the change alters, its
// chart on both sides (a chart of this repository at the Application's
// targetRevision: a tag or commit of this clone, or, when the clone has
// neither, the side's own charts/, which a note says; a Helm repository's
// chart from the cache) and lists the objects that differ, each with the
// clusters it differs on alike. Nothing is fetched: what is not at hand is
// noted.
func manifestChanges(repo *gitbase.Repo, e *ends, headLabel string, settled map[string]plumbing.Hash, r *diff.Report, base, head *render.Output, baseFleet, headFleet *config.Fleet, cache manifests.Cache) error {
	ns := notes{}
	baseIDs, headIDs := byID(baseFleet), byID(headFleet)
	others, err := readLocks(e, cache)
	if err != nil {
		return err
	}
	jobs, err := appJobs(r, e, settled, base, head, headFleet, baseIDs, headIDs, others, ns)
	if err != nil {
		return err
	}
	// Loading reads git through repo's handle, one at a time; rendering
	// runs on every core.
	charts := &chartSource{repo: repo, e: e, self: render.GitOpsOf(headFleet).RepoURL, cache: cache, loaded: map[string]*loadedChart{}}
	for i := range jobs {
		j := &jobs[i]
		if j.base != nil {
			j.baseChart = charts.load(false, j.base)
		}
		if j.head != nil {
			j.headChart = charts.load(true, j.head)
		}
	}
	if ds := valuesAtRevision(jobs, headIDs); len(ds) > 0 {
		return &NotRendered{Label: headLabel, Diags: ds}
	}
	changes, baseErrs, err := renderJobs(jobs)
	if err != nil {
		return err
	}
	clusters, apps := make([]string, len(jobs)), make([]string, len(jobs))
	for i, j := range jobs {
		clusters[i], apps[i] = j.cluster, j.app
		for _, c := range []*loadedChart{j.baseChart, j.headChart} {
			if c != nil && c.note != "" {
				ns.add(j.app+": "+c.note, j.cluster)
			}
		}
		if baseErrs[i] != nil {
			ns.add(fmt.Sprintf("%s: the base's chart does not render (%v); its objects show as added", j.app, baseErrs[i]), j.cluster)
		}
	}
	r.Manifests = foldChanges(clusters, apps, changes)
	r.ManifestNotes = ns.fold()
	return nil
}

// readLocks reads each side's charts.lock: the head's must read; the
// base's that does not leaves its charts unpinned, and says why.
func readLocks(e *ends, cache manifests.Cache) (otherCharts, error) {
	o := otherCharts{cache: cache, held: map[string]string{}}
	var err error
	if o.locks[1], err = manifests.ReadLock(e.headFS); err != nil {
		return o, &InputError{fmt.Errorf("the head's %w", err)}
	}
	if o.locks[0], err = manifests.ReadLock(e.baseFS); err != nil {
		o.locks[0], o.unread = &manifests.Lock{}, fmt.Sprintf("the base's %v", err)
	}
	return o, nil
}

// manifestJob is one cluster's Application whose file the change alters,
// with its chart on each side (nil where the side has none of this
// repository's).
type manifestJob struct {
	cluster, app         string
	base, head           *application
	baseChart, headChart *loadedChart
}

// appJobs are the Applications the change alters whose chart the review
// can render on every side that has one: a chart of this repository, or
// another project's in the cache as the side's lock pins it. The others
// are noted.
func appJobs(r *diff.Report, e *ends, settled map[string]plumbing.Hash, base, head *render.Output, headFleet *config.Fleet, baseIDs, headIDs clustersByID, others otherCharts, ns notes) ([]manifestJob, error) {
	g := render.GitOpsOf(headFleet)
	var candidates []manifestJob
	var err error
	if g.Topology == argocd.Central {
		candidates, err = centralJobs(centralSide{base.ByPath(), settled, e.baseFS}, centralSide{head.ByPath(), settled, e.baseFS}, baseIDs, headIDs)
	} else {
		candidates, err = perClusterJobs(r, base.ByPath(), head.ByPath(), baseIDs, headIDs)
	}
	if err != nil {
		return nil, err
	}
	var jobs []manifestJob
	for _, j := range candidates {
		// A side the review cannot render leaves the Application out: its
		// other side alone would show every object added or removed.
		ok := j.base != nil || j.head != nil
		for i, a := range []*application{j.base, j.head} {
			if a == nil {
				continue
			}
			why, note := others.renderable(a, g.RepoURL, i == 1)
			if why != "" {
				ns.add(j.app+": "+why, j.cluster)
				ok = false
			}
			if note != "" {
				ns.add(j.app+": "+note, j.cluster)
			}
		}
		if ok {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// perClusterJobs are the Applications of r's changed files (per-cluster
// topology: one file each).
func perClusterJobs(r *diff.Report, baseBytes, headBytes map[string][]byte, baseIDs, headIDs clustersByID) ([]manifestJob, error) {
	var jobs []manifestJob
	for _, f := range r.Files {
		m := appFile.FindStringSubmatch(f.Path)
		if m == nil {
			continue
		}
		j := manifestJob{cluster: m[1] + "/" + m[2], app: m[3]}
		var err error
		if j.base, err = parseApplication(baseBytes[f.Path], m[3], baseIDs.kubeVersion(j.cluster)); err == nil {
			j.head, err = parseApplication(headBytes[f.Path], m[3], headIDs.kubeVersion(j.cluster))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// renderJobs renders each job's charts and compares them. A head that
// does not render fails them all (*ManifestError, naming each); a base
// that does not render ran nothing Argo CD could apply: its error comes
// back, and the head's objects show as added.
func renderJobs(jobs []manifestJob) ([][]manifests.Change, []error, error) {
	changes := make([][]manifests.Change, len(jobs))
	errs, baseErrs := make([]string, len(jobs)), make([]error, len(jobs))
	par.Do(len(jobs), func(i int) {
		j := jobs[i]
		var b, h []manifests.Object
		var err error
		if j.base != nil {
			b, baseErrs[i] = j.baseChart.render(j.base.Release)
		}
		if j.head != nil {
			if h, err = j.headChart.render(j.head.Release); err != nil {
				errs[i] = fmt.Sprintf("%s %s: %v", j.cluster, j.app, err)
				return
			}
		}
		changes[i], err = manifests.Compare(b, h)
		if err != nil {
			errs[i] = fmt.Sprintf("%s %s: %v", j.cluster, j.app, err)
		}
	})
	var failed []string
	for _, e := range errs {
		if e != "" {
			failed = append(failed, e)
		}
	}
	if len(failed) > 0 {
		return nil, nil, &ManifestError{Errs: failed}
	}
	return changes, baseErrs, nil
}

// valuesAtRevision holds each head Application's values to the schema of
// its chart at the revision it names, when that is not the working tree's
// chart (which render held them to): a refusal is placed at the value in
// config/, as render places it, rather than left to Helm's message.
func valuesAtRevision(jobs []manifestJob, headIDs clustersByID) diag.Diagnostics {
	var ds diag.Diagnostics
	for _, j := range jobs {
		if j.head == nil || j.headChart.values == nil {
			continue
		}
		if c := headIDs[j.cluster]; c != nil {
			schema := fmt.Sprintf("%s/values.schema.json at %s", j.head.Path, j.head.Revision)
			ds = append(ds, render.ChartValuesDiagnostics(c, j.app, schema, j.head.Release.Values, j.headChart.values)...)
		}
	}
	return ds
}

// notes are what the manifests leave out or read from elsewhere, each
// with the clusters it is said of.
type notes map[string]map[string]bool

func (ns notes) add(n, cluster string) {
	if ns[n] == nil {
		ns[n] = map[string]bool{}
	}
	ns[n][cluster] = true
}

// foldChanges groups one Application's changes of an object across
// clusters by what they change: the lines removed and added, whatever the
// context around them (a cluster's name or region in a nearby line). A
// group shows its first cluster's diff; Shown names that cluster when the
// others' context differs.
func foldChanges(clusters, apps []string, changes [][]manifests.Change) []diff.ManifestChange {
	type key struct{ app, object, status, edits string }
	groups := map[key]*diff.ManifestChange{}
	var keys []key
	for i := range clusters {
		for _, c := range changes[i] {
			k := key{apps[i], c.Object, c.Status, edits(c.Unified)}
			g := groups[k]
			if g == nil {
				g = &diff.ManifestChange{Application: apps[i], Object: c.Object, Status: c.Status, Unified: c.Unified, Shown: clusters[i]}
				groups[k] = g
				keys = append(keys, k)
			} else if c.Unified != g.Unified {
				g.Varies = true
			}
			g.Clusters = append(g.Clusters, clusters[i])
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.app != b.app {
			return a.app < b.app
		}
		if a.object != b.object {
			return a.object < b.object
		}
		return len(groups[a].Clusters) > len(groups[b].Clusters)
	})
	out := make([]diff.ManifestChange, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		sort.Strings(g.Clusters)
		if !g.Varies {
			g.Shown = ""
		}
		out = append(out, *g)
	}
	return out
}

// edits are a unified diff's removed and added lines, in order.
func edits(unified string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(unified, "\n") {
		if (strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+")) && !strings.HasPrefix(line, "---") && !strings.HasPrefix(line, "+++") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func (ns notes) fold() []string {
	var out []string
	for n, clusters := range ns {
		out = append(out, fmt.Sprintf("%s (%s)", n, plural(len(clusters), "cluster")))
	}
	sort.Strings(out)
	return out
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}

// clustersByID are a fleet's clusters by id (region/cluster).
type clustersByID map[string]*config.Cluster

func byID(f *config.Fleet) clustersByID {
	m := make(clustersByID, len(f.Clusters))
	for _, c := range f.Clusters {
		m[c.ID()] = c
	}
	return m
}

// kubeVersion is the cluster's EKS version, or "" when the fleet does not
// hold it.
func (cs clustersByID) kubeVersion(id string) string {
	if c := cs[id]; c != nil {
		if v := c.Effective.Get("eks").Get("version"); v != nil && v.Kind == config.String {
			return v.Str
		}
	}
	return ""
}

// parseApplication reads a rendered Application; nil bytes are none.
func parseApplication(b []byte, name, kube string) (*application, error) {
	if b == nil {
		return nil, nil
	}
	var app struct {
		Kind string `json:"kind"`
		Spec struct {
			Destination struct {
				Namespace string `json:"namespace"`
			} `json:"destination"`
			Source *struct {
				RepoURL        string `json:"repoURL"`
				Path           string `json:"path"`
				Chart          string `json:"chart"`
				TargetRevision string `json:"targetRevision"`
				Helm           *struct {
					ReleaseName  string         `json:"releaseName"`
					ValuesObject map[string]any `json:"valuesObject"`
				} `json:"helm"`
			} `json:"source"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &app); err != nil {
		return nil, err
	}
	src := app.Spec.Source
	if app.Kind != "Application" || src == nil {
		return nil, nil
	}
	if src.Helm == nil {
		return &application{RepoURL: src.RepoURL, Path: path.Clean(src.Path), Revision: src.TargetRevision, Kustomize: true}, nil
	}
	a := &application{RepoURL: src.RepoURL, Path: path.Clean(src.Path), Chart: src.Chart, Revision: src.TargetRevision,
		Release: manifests.Release{Name: name, Namespace: app.Spec.Destination.Namespace, Values: src.Helm.ValuesObject, KubeVersion: kube}}
	if src.Helm.ReleaseName != "" {
		a.Release.Name = src.Helm.ReleaseName
	}
	return a, nil
}

// chartSource finds the charts Applications name (this repository's at a
// revision, or another project's, of a Helm or git repository, in the
// cache), each loaded once.
type chartSource struct {
	repo   *gitbase.Repo
	e      *ends
	self   string // this repository's URL
	cache  manifests.Cache
	loaded map[string]*loadedChart
}

type loadedChart struct {
	chart *manifests.Chart
	kust  *manifests.Kustomization // a kustomization instead, which takes no values
	note  string                   // where it was read from, when not at its revision
	err   error                    // it could not be loaded
	// values are a chart of this repository's defaults and schema at a
	// revision other than the working tree's, which render did not hold
	// the values to.
	values *argocd.ChartValues
}

func (l *loadedChart) render(r manifests.Release) ([]manifests.Object, error) {
	if l.err != nil {
		return nil, l.err
	}
	if l.kust != nil {
		return l.kust.Build()
	}
	return l.chart.Render(r)
}

var fullHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// load reads a's chart: this repository's (inRepo), or another project's
// from the cache (a git repository's or an OCI registry's with a note of
// the commit or manifest its tag named when it was pulled).
func (s *chartSource) load(head bool, a *application) *loadedChart {
	if a.Chart == "" && a.RepoURL == s.self {
		return s.inRepo(head, a.Path, a.Revision)
	}
	key := a.locked().String()
	if a.Kustomize {
		key = "kustomization " + key
	}
	if l, ok := s.loaded[key]; ok {
		return l
	}
	l := &loadedChart{}
	var pin string
	switch {
	case a.oci():
		if l.chart, pin, l.err = s.cache.OCIChart(a.ociSource()); l.err == nil {
			l.note = fmt.Sprintf("%s rendered as manifest sha256:%s, which the tag named when the chart cache pulled it", key, pin)
		}
	case a.Kustomize:
		if l.kust, pin, l.err = s.cache.GitKustomization(a.git()); l.err == nil {
			l.note = fmt.Sprintf("%s built as commit %s, which the tag named when the chart cache pulled it", key, pin)
		}
	case a.Chart == "":
		if l.chart, pin, l.err = s.cache.GitChart(a.git()); l.err == nil {
			l.note = fmt.Sprintf("%s rendered as commit %s, which the tag named when the chart cache pulled it", key, pin)
		}
	default:
		l.chart, l.err = s.cache.Chart(a.RepoURL, a.Chart, a.Revision)
	}
	s.loaded[key] = l
	return l
}

// inRepo reads the chart at dir of the commit revision names, as Argo CD
// resolves a targetRevision in this repository: a tag, or a commit hash.
// A revision this clone does not have is read from the side's own tree
// (the head's working tree or commit, or the base's commit), and its note
// says so.
func (s *chartSource) inRepo(head bool, dir, revision string) *loadedChart {
	side, sideFS := "base", s.e.baseFS
	if head {
		side, sideFS = "head", s.e.headFS
	}
	var c *object.Commit
	var err error
	if c, err = s.repo.Commit("refs/tags/" + revision); err != nil && fullHash.MatchString(revision) {
		c, err = s.repo.Commit(revision)
	}
	key := dir + "@" + revision
	if err != nil {
		key = dir + "@" + side
	}
	if l, ok := s.loaded[key]; ok {
		return l
	}
	l := &loadedChart{}
	s.loaded[key] = l
	fsys := sideFS
	if err == nil {
		fsys, err = s.repo.FS(c)
	} else {
		l.note = fmt.Sprintf("%s is not a tag or commit of this clone (git fetch --tags): rendered from %s as the side naming it holds it", revision, dir)
		err = nil
	}
	if err == nil {
		l.chart, err = manifests.LoadChart(fsys, dir)
	}
	if name := path.Base(dir); err == nil && l.note == "" && dir == path.Join(argocd.ChartsDir, name) {
		l.values, err = argocd.ReadChartValues(fsys, name)
	}
	l.err = err
	return l
}
