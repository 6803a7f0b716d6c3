package manifests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
)

// chartRepository is a git repository of another project, served over TLS
// by git's own http-backend: charts/c is the test chart at the annotated
// tag v1.0.0, with one more replica at the lightweight tag v1.1.0, beside
// a symbolic link at the tag linked. It returns the repository's URL, the
// certificate to trust and the commit of v1.0.0.
func chartRepository(t *testing.T) (string, []byte, string) {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.CopyFS(filepath.Join(src, "charts", "c"), os.DirFS(filepath.Join("testdata", "c"))); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"manifests/base/kustomization.yaml":    "resources: [cm.yaml]\n",
		"manifests/base/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
		"manifests/install/kustomization.yaml": "resources: [../base]\nnamespace: argocd\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string { return manifeststest.Git(t, src, args...) }
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-qm", "chart c")
	git("tag", "-a", "-m", "release", "v1.0.0")
	v1 := git("rev-parse", "HEAD")
	values := filepath.Join(src, "charts", "c", "values.yaml")
	b, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(values, append(b, "extra: true\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-qam", "an extra value")
	git("tag", "v1.1.0")
	if err := os.Symlink("configmap.yaml", filepath.Join(src, "charts", "c", "templates", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "a link")
	git("tag", "linked")
	if err := os.WriteFile(filepath.Join(src, "manifests", "install", "kustomization.yaml"), []byte("resources:\n- github.com/o/r//base?ref=v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-qam", "a remote base")
	git("tag", "remote")
	if err := os.WriteFile(filepath.Join(src, "charts", "c", "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: redis\n  version: 1.0.0\n  repository: https://charts.example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("rm", "-q", "charts/c/templates/link.yaml")
	git("commit", "-qam", "a dependency not vendored")
	git("tag", "deps")
	manifeststest.Git(t, root, "clone", "-q", "--bare", "src", "charts.git")
	url, ca := manifeststest.GitServer(t, root)
	return url + "/charts.git", ca, v1
}

// TestPullGitTakesTheTagsDirectory: PullGit caches a directory of another
// project's repository at a tag, verified over TLS with the certificate it
// is given, and GitChart reads back the chart and the commit the tag
// named; anything else is refused and nothing is cached.
func TestPullGitTakesTheTagsDirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git: apt-get install git")
	}
	url, ca, v1 := chartRepository(t)
	c := Cache{Dir: t.TempDir()}
	ctx := context.Background()
	src := GitSource{URL: url, Path: "charts/c", Revision: "v1.0.0"}
	if _, _, err := c.GitChart(src); err != ErrNotCached {
		t.Fatalf("before a pull: %v", err)
	}
	commit, err := c.PullGit(ctx, src, ca, "")
	if err != nil {
		t.Fatal(err)
	}
	if commit != v1 {
		t.Errorf("commit %s, want %s (the annotated tag's commit)", commit, v1)
	}
	ch, got, err := c.GitChart(src)
	if err != nil || got != v1 || !c.HasGit(src) {
		t.Fatalf("read back: commit %s, %v", got, err)
	}
	objs, err := ch.Render(Release{Name: "c", Namespace: "ns"})
	if err != nil || len(objs) != 5 {
		t.Fatalf("the cached chart renders %d objects: %v", len(objs), err)
	}
	// Each tag is its own entry.
	next := GitSource{URL: url, Path: "charts/c", Revision: "v1.1.0"}
	if _, err := c.PullGit(ctx, next, ca, ""); err != nil {
		t.Fatal(err)
	}
	if ch, _, err := c.GitChart(next); err != nil || !strings.Contains(string(ch.file("values.yaml")), "extra: true") {
		t.Fatalf("v1.1.0: %v", err)
	}
	for name, tc := range map[string]struct {
		src  GitSource
		ca   []byte
		want string
	}{
		"a symbolic link":                {GitSource{url, "charts/c", "linked", false}, ca, "templates/link.yaml is a symbolic link"},
		"a dependency not vendored":      {GitSource{url, "charts/c", "deps", false}, ca, "depends on redis, which its charts/ directory does not hold"},
		"a tag the repository lacks":     {GitSource{url, "charts/c", "v9.9.9", false}, ca, "tag v9.9.9"},
		"a directory the tag lacks":      {GitSource{url, "charts/d", "v1.0.0", false}, ca, "no directory charts/d"},
		"a directory that is no chart":   {GitSource{url, "charts/c/templates", "v1.0.0", false}, ca, "Chart.yaml"},
		"a server it does not trust":     {GitSource{url, "charts/c", "v1.1.0-rc", false}, nil, "certificate"},
		"plain http":                     {GitSource{strings.Replace(url, "https:", "http:", 1), "charts/c", "v1.0.0", false}, ca, "https URL"},
		"credentials in the URL":         {GitSource{strings.Replace(url, "https://", "https://u:p@", 1), "charts/c", "v1.0.0", false}, ca, "without credentials"},
		"a path out of the repository":   {GitSource{url, "../c", "v1.0.0", false}, ca, "clean relative path"},
		"a revision that is not a tag":   {GitSource{url, "charts/c", "v1.0.0^{}", false}, ca, "not a tag name"},
		"a revision that walks the refs": {GitSource{url, "charts/c", "a/../../b", false}, ca, "not a tag name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.PullGit(ctx, tc.src, tc.ca, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if c.HasGit(tc.src) {
				t.Error("refused, yet cached")
			}
		})
	}
	// A kustomization keeps its path's first directory, which holds the
	// base it names; one that names a remote base is refused.
	kust := GitSource{URL: url, Path: "manifests/install", Revision: "v1.0.0", Kustomize: true}
	if _, err := c.PullGit(ctx, kust, ca, ""); err != nil {
		t.Fatal(err)
	}
	k, commit, err := c.GitKustomization(kust)
	if err != nil || commit != v1 {
		t.Fatalf("the kustomization: %s, %v", commit, err)
	}
	if objs, err := k.Build(); err != nil || len(objs) != 1 || objs[0].Key != "ConfigMap argocd/settings" {
		t.Errorf("the kustomization builds %v: %v", objs, err)
	}
	if c.HasGit(GitSource{URL: url, Path: "manifests/install", Revision: "v1.0.0"}) {
		t.Error("a kustomization is cached as a chart of the same path")
	}
	remote := GitSource{URL: url, Path: "manifests/install", Revision: "remote", Kustomize: true}
	if _, err := c.PullGit(ctx, remote, ca, ""); err == nil || !strings.Contains(err.Error(), "which kustomize would fetch") || c.HasGit(remote) {
		t.Errorf("a remote base: %v", err)
	}

	// A repository that sends more than MaxPack is refused, and no clone
	// is left behind.
	old := MaxPack
	MaxPack = 512
	_, err = c.PullGit(ctx, GitSource{URL: url, Path: "charts/c", Revision: "v1.1.0"}, ca, "")
	MaxPack = old
	if err == nil || !strings.Contains(err.Error(), "packfile over") {
		t.Errorf("a pack over MaxPack: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(c.Dir, ".clone-*")); len(left) != 0 {
		t.Errorf("clones left behind: %v", left)
	}

	// An archive changed in the cache is not read.
	p, _ := c.gitPath(src)
	if err := os.WriteFile(p, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GitChart(src); err == nil || !strings.Contains(err.Error(), "pull it again") {
		t.Errorf("a changed archive: %v", err)
	}
}

// file is the chart's file name, nil when it has none.
func (c *Chart) file(name string) []byte {
	for _, f := range c.files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}
