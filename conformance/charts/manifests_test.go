package charts_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/kube/apiserver"
	"github.com/regionctl/regionctl/internal/manifests"
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
		for _, doc := range releaseutil.SplitManifests(d) {
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
	return out, nil
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
			t.Errorf("%s: objects\nhelm template: %s\n   the review: %s", tc.name, strings.Join(hk, "; "), strings.Join(mk, "; "))
			continue
		}
		for k, y := range theirs {
			if mine[k] != y {
				t.Errorf("%s: %s\nhelm template:\n%s\n   the review:\n%s", tc.name, k, y, mine[k])
			}
		}
		objects += len(theirs)
	}
	t.Logf("%d releases, %d objects alike", len(cases), objects)
}
