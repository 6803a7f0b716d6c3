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
		"a symbolic link":                {GitSource{url, "charts/c", "linked"}, ca, "templates/link.yaml is a symbolic link"},
		"a tag the repository lacks":     {GitSource{url, "charts/c", "v9.9.9"}, ca, "tag v9.9.9"},
		"a directory the tag lacks":      {GitSource{url, "charts/d", "v1.0.0"}, ca, "no directory charts/d"},
		"a directory that is no chart":   {GitSource{url, "charts/c/templates", "v1.0.0"}, ca, "Chart.yaml"},
		"a server it does not trust":     {GitSource{url, "charts/c", "v1.1.0-rc"}, nil, "certificate"},
		"plain http":                     {GitSource{strings.Replace(url, "https:", "http:", 1), "charts/c", "v1.0.0"}, ca, "https URL"},
		"credentials in the URL":         {GitSource{strings.Replace(url, "https://", "https://u:p@", 1), "charts/c", "v1.0.0"}, ca, "without credentials"},
		"a path out of the repository":   {GitSource{url, "../c", "v1.0.0"}, ca, "clean relative path"},
		"a revision that is not a tag":   {GitSource{url, "charts/c", "v1.0.0^{}"}, ca, "not a tag name"},
		"a revision that walks the refs": {GitSource{url, "charts/c", "a/../../b"}, ca, "not a tag name"},
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
