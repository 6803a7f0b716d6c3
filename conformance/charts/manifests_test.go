package charts_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/kube/apiserver"
	"github.com/regionctl/regionctl/internal/manifests"
	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
)

// helmTemplate is what `helm template --include-crds` prints for the chart
// in dir, by Helm's own install action run client-only (the command's own
// code path): the manifest, CRDs included, then each hook. Each object
// comes back re-encoded with sorted keys, by its manifests.Object key.
func helmTemplate(t *testing.T, dir string, r manifests.Release) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace, install.IncludeCRDs = true, true, true, true
	install.ReleaseName, install.Namespace = r.Name, r.Namespace
	minor := strings.Split(r.KubeVersion, ".")[1]
	install.KubeVersion = &chartutil.KubeVersion{Version: "v" + r.KubeVersion + ".0", Major: "1", Minor: minor}
	rel, err := install.Run(ch, r.Values)
	if err != nil {
		return nil, err
	}
	docs := []string{rel.Manifest}
	for _, h := range rel.Hooks {
		docs = append(docs, h.Manifest)
	}
	out := map[string]string{}
	for _, d := range docs {
		addKeyed(t, out, d)
	}
	return out, nil
}

// addKeyed adds each object of a stream of YAML documents to out,
// re-encoded with sorted keys, by its key.
func addKeyed(t *testing.T, out map[string]string, stream string) {
	t.Helper()
	for _, doc := range releaseutil.SplitManifests(stream) {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o == nil {
			continue
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out[key(o)] = string(b)
	}
}

// key is manifests.Object's key, written again from its documentation:
// "Kind[.group] [namespace/]name".
func key(o map[string]any) string {
	k := o["kind"].(string)
	if g, _, ok := strings.Cut(o["apiVersion"].(string), "/"); ok {
		k += "." + g
	}
	meta := o["metadata"].(map[string]any)
	if ns, _ := meta["namespace"].(string); ns != "" {
		return k + " " + ns + "/" + meta["name"].(string)
	}
	return k + " " + meta["name"].(string)
}

// ours is what the review renders for the same chart and release.
func ours(t *testing.T, root, dir string, r manifests.Release) (map[string]string, error) {
	t.Helper()
	c, err := manifests.LoadChart(os.DirFS(root), dir)
	if err != nil {
		return nil, err
	}
	return objectsOf(c, r)
}

// objectsOf is what the review renders of chart c for r, by key.
func objectsOf(c *manifests.Chart, r manifests.Release) (map[string]string, error) {
	objs, err := c.Render(r)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range objs {
		out[o.Key] = string(o.YAML)
	}
	return out, nil
}

// TestReviewRendersAsHelmTemplate: the objects render --diff shows for a
// chart (internal/manifests, built on Helm's engine) are the objects
// `helm template --include-crds` prints, by Helm's install action: for
// every rendered Application of the platform's own charts, and for a chart
// with CRDs, hooks, a Secret, NOTES.txt, partials and a .helmignore; a
// value the chart's schema refuses is refused by both.
func TestReviewRendersAsHelmTemplate(t *testing.T) {
	kube := strings.Join(strings.Split(strings.TrimPrefix(apiserver.Version, "v"), ".")[:2], ".")
	type tcase struct {
		name, root, dir string
		r               manifests.Release
	}
	var cases []tcase
	for _, a := range platformApps(t) {
		cases = append(cases, tcase{a.file, repo, a.chart, manifests.Release{Name: a.release, Namespace: a.namespace, Values: a.values, KubeVersion: kube}})
	}
	fixture := filepath.Join(repo, "internal", "manifests", "testdata")
	cases = append(cases,
		tcase{"fixture", fixture, "c", manifests.Release{Name: "rel", Namespace: "ns", Values: map[string]any{"replicas": 2}, KubeVersion: kube}},
		tcase{"fixture, refused", fixture, "c", manifests.Release{Name: "rel", Namespace: "ns", Values: map[string]any{"replicas": "two"}, KubeVersion: kube}})
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	objects := 0
	for _, tc := range cases {
		theirs, herr := helmTemplate(t, filepath.Join(tc.root, tc.dir), tc.r)
		mine, merr := ours(t, tc.root, tc.dir, tc.r)
		if (herr == nil) != (merr == nil) {
			t.Errorf("%s: helm template says %v, the review %v", tc.name, herr, merr)
			continue
		}
		if herr != nil {
			continue
		}
		objects += sameObjects(t, tc.name, theirs, mine)
	}
	t.Logf("%d releases, %d objects alike", len(cases), objects)
}

// sameObjects fails the test where the review's objects are not helm
// template's, and says how many were alike.
func sameObjects(t *testing.T, name string, theirs, mine map[string]string) int {
	t.Helper()
	var hk, mk []string
	for k := range theirs {
		hk = append(hk, k)
	}
	for k := range mine {
		mk = append(mk, k)
	}
	sort.Strings(hk)
	sort.Strings(mk)
	if strings.Join(hk, "; ") != strings.Join(mk, "; ") {
		t.Errorf("%s: objects\nhelm template: %s\n   the review: %s", name, strings.Join(hk, "; "), strings.Join(mk, "; "))
		return 0
	}
	for k, y := range theirs {
		if mine[k] != y {
			t.Errorf("%s: %s\nhelm template:\n%s\n   the review:\n%s", name, k, y, mine[k])
		}
	}
	return len(theirs)
}

// TestCachedChartsRenderAsHelmTemplate: other projects' charts, as the
// review reads them from the chart cache, render as helm template renders
// the chart's own directory: a git repository's chart (PullGit from git's
// http-backend over TLS, the tag's directory kept as regular files, read
// back with .helmignore applied) and a Helm repository's (the archive helm
// package makes, cached by Put as Pull caches it), each with the example
// fleet's values for it.
func TestCachedChartsRenderAsHelmTemplate(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git: apt-get install git")
	}
	kube := strings.Join(strings.Split(strings.TrimPrefix(apiserver.Version, "v"), ".")[:2], ".")
	comps := componentsConfig(t)
	cache := manifests.Cache{Dir: t.TempDir()}
	gitCharts, objects := 0, 0
	for _, u := range upstreamCharts {
		c := comps[u.component]
		version := u.version(c.ChartRevision)
		if version == "" {
			t.Errorf("%s: no module version known for chart %s", u.component, c.ChartRevision)
			continue
		}
		dir := filepath.Join(moduleSource(t, u.module, version), u.dir)
		if u.prepare != nil {
			dir = u.prepare(t, dir, version)
		}
		var ch *manifests.Chart
		var err error
		if c.Chart.GitURL != "" {
			url, ca := tagged(t, dir, u.dir, c.ChartRevision)
			src := manifests.GitSource{URL: url, Path: u.dir, Revision: c.ChartRevision}
			if _, err = cache.PullGit(context.Background(), src, ca, ""); err == nil {
				ch, _, err = cache.GitChart(src)
			}
			gitCharts++
		} else {
			hc, lerr := loader.Load(dir)
			if lerr != nil {
				t.Fatal(lerr)
			}
			archive := filepath.Join(t.TempDir(), "chart")
			p, serr := chartutil.Save(hc, archive)
			if serr != nil {
				t.Fatal(serr)
			}
			b, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err = cache.Put(c.Chart.RepoURL, c.Chart.Name, c.ChartRevision, b); err == nil {
				ch, err = cache.Chart(c.Chart.RepoURL, c.Chart.Name, c.ChartRevision)
			}
		}
		if err != nil {
			t.Errorf("%s: the cache: %v", u.component, err)
			continue
		}
		apps := renderedApps(t, u.component)
		if len(apps) == 0 {
			t.Errorf("no %s Application rendered", u.component)
			continue
		}
		a := apps[0]
		r := manifests.Release{Name: a.release, Namespace: a.namespace, Values: a.values, KubeVersion: kube}
		theirs, herr := helmTemplate(t, dir, r)
		mine, merr := objectsOf(ch, r)
		if herr != nil || merr != nil {
			t.Errorf("%s: helm template says %v, the review %v", u.component, herr, merr)
			continue
		}
		objects += sameObjects(t, u.component, theirs, mine)
	}
	if gitCharts == 0 {
		t.Error("no git repository's chart was judged")
	}
	t.Logf("%d charts (%d from git), %d objects alike", len(upstreamCharts), gitCharts, objects)
}

// tagged serves a git repository holding dir at path, tagged tag, by git's
// http-backend over TLS, and returns its URL and the certificate to trust.
func tagged(t *testing.T, dir, path, tag string) (string, []byte) {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.CopyFS(filepath.Join(src, path), os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	manifeststest.Git(t, src, "init", "-q", "-b", "main")
	manifeststest.Git(t, src, "add", "--force", ".")
	manifeststest.Git(t, src, "commit", "-qm", "release")
	manifeststest.Git(t, src, "tag", "-a", "-m", "release", tag)
	manifeststest.Git(t, root, "clone", "-q", "--bare", "src", "project.git")
	url, ca := manifeststest.GitServer(t, root)
	return url + "/project.git", ca
}

// TestOCIChartsAsHelmPushesThem: a chart that Helm's own registry client
// pushes to an OCI registry (what helm push does), the review pulls
// (manifests.Cache.PullOCI) at the manifest Helm pushed and renders as
// helm template renders the chart Helm's registry client pulls back: the
// fixture chart and the Helm repository charts of other projects the
// example fleet runs, with its values for them.
func TestOCIChartsAsHelmPushesThem(t *testing.T) {
	kube := strings.Join(strings.Split(strings.TrimPrefix(apiserver.Version, "v"), ".")[:2], ".")
	s, _ := manifeststest.OCIRegistry(t)
	host := strings.TrimPrefix(s.URL, "https://")
	helm, err := registry.NewClient(registry.ClientOptHTTPClient(s.Client()), registry.ClientOptWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	type tcase struct {
		dir string
		r   manifests.Release
	}
	cases := []tcase{{filepath.Join(repo, "internal", "manifests", "testdata", "c"), manifests.Release{Name: "rel", Namespace: "ns", Values: map[string]any{"replicas": 2}, KubeVersion: kube}}}
	comps := componentsConfig(t)
	for _, u := range upstreamCharts {
		c := comps[u.component]
		if c.Chart.RepoURL == "" {
			continue
		}
		dir := filepath.Join(moduleSource(t, u.module, u.version(c.ChartRevision)), u.dir)
		if u.prepare != nil {
			dir = u.prepare(t, dir, u.version(c.ChartRevision))
		}
		a := renderedApps(t, u.component)[0]
		cases = append(cases, tcase{dir, manifests.Release{Name: a.release, Namespace: a.namespace, Values: a.values, KubeVersion: kube}})
	}
	cache := manifests.Cache{Dir: t.TempDir()}
	objects := 0
	for _, tc := range cases {
		ch, err := loader.Load(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		archive, err := chartutil.Save(ch, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		name, version := ch.Metadata.Name, ch.Metadata.Version
		ref := host + "/charts/" + name + ":" + strings.ReplaceAll(version, "+", "_")
		pushed, err := helm.Push(data, ref)
		if err != nil {
			t.Fatalf("helm push %s: %v", ref, err)
		}
		src := manifests.OCISource{URL: "oci://" + host + "/charts/" + name, Revision: strings.ReplaceAll(version, "+", "_")}
		manifest, err := cache.PullOCI(context.Background(), src, s.Client().Transport, "")
		if err != nil {
			t.Errorf("%s: the review's pull: %v", ref, err)
			continue
		}
		if "sha256:"+manifest != pushed.Manifest.Digest {
			t.Errorf("%s: the review pinned manifest sha256:%s, helm pushed %s", ref, manifest, pushed.Manifest.Digest)
		}
		mine, cached, err := cache.OCIChart(src)
		if err != nil || cached != manifest {
			t.Fatalf("%s: the cache: %s, %v", ref, cached, err)
		}
		pulled, err := helm.Pull(ref)
		if err != nil {
			t.Fatalf("helm pull %s: %v", ref, err)
		}
		theirsDir := filepath.Join(t.TempDir(), name+".tgz")
		if err := os.WriteFile(theirsDir, pulled.Chart.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		theirs, herr := helmTemplate(t, theirsDir, tc.r)
		ours, merr := objectsOf(mine, tc.r)
		if herr != nil || merr != nil {
			t.Errorf("%s: helm template says %v, the review %v", ref, herr, merr)
			continue
		}
		objects += sameObjects(t, ref, theirs, ours)
	}
	if len(cases) < 3 {
		t.Errorf("only %d charts", len(cases))
	}
	t.Logf("%d charts pushed by helm, %d objects alike", len(cases), objects)
}

// TestKustomizationBuildsAsArgoCDReleased: the review builds Argo CD's own
// kustomization (manifests/cluster-install at the version the bootstrap
// pins, the argo-cd Application's source), as charts pull caches it, into
// the objects of the install.yaml Argo CD's release built from it with the
// kustomize command (its hack/update-manifests.sh), both from the
// project's v3 module.
func TestKustomizationBuildsAsArgoCDReleased(t *testing.T) {
	src := moduleSource(t, "github.com/argoproj/argo-cd/v3", bootstrap.PinnedArgoCD)
	// The review reads it as charts pull cached it: the tag's manifests/
	// tree, from git's http-backend.
	url, ca := tagged(t, filepath.Join(src, "manifests"), "manifests", bootstrap.PinnedArgoCD)
	cache := manifests.Cache{Dir: t.TempDir()}
	kust := manifests.GitSource{URL: url, Path: "manifests/cluster-install", Revision: bootstrap.PinnedArgoCD, Kustomize: true}
	if _, err := cache.PullGit(context.Background(), kust, ca, ""); err != nil {
		t.Fatal(err)
	}
	k, _, err := cache.GitKustomization(kust)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := k.Build()
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]string{}
	for _, o := range objs {
		mine[o.Key] = string(o.YAML)
	}
	b, err := os.ReadFile(filepath.Join(src, "manifests", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[string]string{}
	addKeyed(t, theirs, string(b))
	if n := sameObjects(t, "cluster-install", theirs, mine); n < 40 {
		t.Errorf("%d objects alike", n)
	} else {
		t.Logf("Argo CD %s: %d objects alike", bootstrap.PinnedArgoCD, n)
	}
}
