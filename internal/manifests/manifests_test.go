package manifests

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// chartFS is testdata/c (a chart with a CRD, a hook, a Secret, NOTES.txt,
// a partial, a .helmignore and a values schema; conformance/charts renders
// it with helm template's own code too), with extra's files added, or
// removed where empty.
func chartFS(extra map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS("testdata"), "c", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join("testdata", p))
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		panic(err)
	}
	for k, v := range extra {
		if v == "" {
			delete(m, k)
			continue
		}
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return m
}

func render(t *testing.T, fsys fstest.MapFS, r Release) []Object {
	t.Helper()
	c, err := LoadChart(fsys, "c")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := c.Render(r)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func keys(objs []Object) string {
	var k []string
	for _, o := range objs {
		k = append(k, o.Key)
	}
	return strings.Join(k, "; ")
}

// What helm template prints for a chart, Argo CD applies: the CRDs, the
// hooks and every template's objects, but not NOTES.txt, partials or empty
// documents.
func TestRenderIsHelmTemplate(t *testing.T) {
	objs := render(t, chartFS(nil), Release{Name: "rel", Namespace: "ns", Values: map[string]any{"replicas": 3}})
	want := "ConfigMap rel-c; CustomResourceDefinition.apiextensions.k8s.io things.example.com; Deployment.apps ns/rel; Job.batch migrate; Secret rel-token"
	if got := keys(objs); got != want {
		t.Fatalf("objects:\n got %s\nwant %s", got, want)
	}
	for _, o := range objs {
		if o.Key == "Deployment.apps ns/rel" {
			y, err := encode(&o, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(y), "replicas: 3") || !strings.Contains(string(y), "image: app:1") {
				t.Errorf("the values are not the Application's over the chart's defaults:\n%s", y)
			}
		}
	}
}

func TestRenderRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		extra  map[string]string
		values map[string]any
		want   string
	}{
		"values against the chart's schema": {values: map[string]any{"replicas": 0}, want: "minimum"},
		"a template that fails":             {extra: map[string]string{"c/templates/bad.yaml": "{{ fail \"no\" }}"}, want: "no"},
		"an object without a name":          {extra: map[string]string{"c/templates/bad.yaml": "apiVersion: v1\nkind: ConfigMap\n"}, want: "metadata.name"},
		"an object twice":                   {extra: map[string]string{"c/templates/again.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n"}, want: "twice"},
		"a lookup of the cluster":           {extra: map[string]string{"c/templates/bad.yaml": "{{ if lookup \"v1\" \"Secret\" \"ns\" \"x\" }}{{ fail \"looked up\" }}{{ end }}"}},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := LoadChart(chartFS(tc.extra), "c")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Render(Release{Name: "rel", Namespace: "ns", Values: tc.values})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestLoadChartRefusesLinksAndSize(t *testing.T) {
	fsys := chartFS(nil)
	fsys["c/templates/link.yaml"] = &fstest.MapFile{Data: []byte("/etc/passwd"), Mode: 0o777 | 1<<27} // fs.ModeSymlink
	if _, err := LoadChart(fsys, "c"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link: err = %v", err)
	}
	fsys = chartFS(map[string]string{"c/files/big": strings.Repeat("x", MaxChart)})
	if _, err := LoadChart(fsys, "c"); err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("a large chart: err = %v", err)
	}
	// .helmignore keeps the ignored file out, as helm template does.
	fsys = chartFS(map[string]string{"c/ignored/big.bin": strings.Repeat("x", MaxChart)})
	if _, err := LoadChart(fsys, "c"); err != nil {
		t.Errorf("an ignored file counted: %v", err)
	}
}

func TestCompareByObjectAndRedactsSecrets(t *testing.T) {
	base := render(t, chartFS(nil), Release{Name: "rel", Namespace: "ns"})
	head := render(t, chartFS(map[string]string{"c/templates/hook.yaml": ""}), Release{Name: "rel", Namespace: "ns",
		Values: map[string]any{"replicas": 2, "token": "n3w-s3cret"}})
	changes, err := Compare(base, head)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Change{}
	for _, c := range changes {
		got[c.Object] = c
	}
	if len(got) != 3 || got["Deployment.apps ns/rel"].Status != "changed" || got["Job.batch migrate"].Status != "removed" || got["Secret rel-token"].Status != "changed" {
		t.Fatalf("changes: %+v", changes)
	}
	if u := got["Deployment.apps ns/rel"].Unified; !strings.Contains(u, "-  replicas: 1\n+  replicas: 2\n") {
		t.Errorf("the deployment's diff:\n%s", u)
	}
	s := got["Secret rel-token"].Unified
	if strings.Contains(s, "s3cret") || !strings.Contains(s, "-  token: "+Redacted) || !strings.Contains(s, "+  token: "+RedactedChanged) {
		t.Errorf("the secret's diff shows a value or hides the change:\n%s", s)
	}
	if strings.Contains(s, "+  static") || strings.Contains(s, "-  static") {
		t.Errorf("an unchanged secret value shows as changed:\n%s", s)
	}
	same, err := Compare(base, base)
	if err != nil || len(same) != 0 {
		t.Errorf("a render compared with itself: %v %+v", err, same)
	}
}

// A chart whose templates run on is refused once its time is up.
func TestRenderEndsAChartThatRunsOn(t *testing.T) {
	c, err := LoadChart(chartFS(map[string]string{"c/templates/loop.yaml": "{{ range until 3000 }}{{ range until 3000 }}{{ end }}{{ end }}"}), "c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderWithin(Release{Name: "rel", Namespace: "ns"}, time.Millisecond); err == nil || !strings.Contains(err.Error(), "ran past 1ms") {
		t.Errorf("err = %v", err)
	}
	if _, err := c.RenderWithin(Release{Name: "rel", Namespace: "ns"}, time.Minute); err != nil {
		t.Errorf("given its time: %v", err)
	}
}
