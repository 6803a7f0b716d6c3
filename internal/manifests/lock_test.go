package manifests

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
)

const (
	digestA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	commitA = "1111111111111111111111111111111111111111"
)

// TestLockReadsWhatPullWrites: a lock round-trips through Marshal and
// ReadLock, one entry to a line, sorted; anything a pull could not have
// written is refused at its line.
func TestLockReadsWhatPullWrites(t *testing.T) {
	var l Lock
	l.Set(Locked{Repo: "https://github.com/o/maestro.git/", Path: "charts/maestro-server", Revision: "v0.8.1", Commit: commitA})
	l.Set(Locked{Repo: "https://charts.jetstack.io", Chart: "cert-manager", Revision: "v1.19.1", SHA256: digestA})
	l.Set(Locked{Repo: "https://charts.jetstack.io", Chart: "cert-manager", Revision: "v1.19.1", SHA256: strings.Repeat("b", 64)})
	l.Set(Locked{Repo: "oci://registry.example.com/charts/fluent-bit", Path: ".", Revision: "1.2.3", SHA256: digestA})
	b := l.Marshal()
	if strings.Count(string(b), "\n") != 5 || !strings.HasPrefix(strings.SplitN(string(b), "\n", 3)[1], `  {"repo":"https://charts.jetstack.io"`) {
		t.Errorf("not one sorted entry to a line:\n%s", b)
	}
	got, err := ReadLock(fstest.MapFS{LockFile: {Data: b}})
	if err != nil {
		t.Fatal(err)
	}
	if pin := got.Pin(Locked{Repo: "https://charts.jetstack.io/", Chart: "cert-manager", Revision: "v1.19.1"}); pin != strings.Repeat("b", 64) {
		t.Errorf("Set did not replace the pin: %q", pin)
	}
	if pin := got.Pin(Locked{Repo: "https://github.com/o/maestro.git", Path: "charts/maestro-server", Revision: "v0.8.1"}); pin != commitA {
		t.Errorf("the git pin: %q", pin)
	}
	if pin := got.Pin(Locked{Repo: "oci://registry.example.com/charts/fluent-bit", Path: ".", Revision: "1.2.3"}); pin != digestA {
		t.Errorf("the OCI pin: %q", pin)
	}
	if pin := got.Pin(Locked{Repo: "https://github.com/o/maestro.git", Path: "charts/maestro-server", Revision: "v0.9.0"}); pin != "" {
		t.Errorf("another revision is pinned: %q", pin)
	}
	if l, err := ReadLock(fstest.MapFS{}); err != nil || len(l.Charts) != 0 {
		t.Errorf("no lock: %v %v", l, err)
	}
	helm := `{"repo":"https://charts.jetstack.io","chart":"cert-manager","revision":"v1.19.1","sha256":"` + digestA + `"}`
	for name, tc := range map[string]struct{ lock, want string }{
		"an unknown field":             {"{\"charts\": [\n" + strings.Replace(helm, `"sha256"`, `"sha265"`, 1) + "\n]}", `charts.lock:2: json: unknown field "sha265"`},
		"a short digest":               {"{\"charts\": [\n" + helm + ",\n" + strings.Replace(helm, digestA, "abc", 1) + "\n]}", "charts.lock:3: cert-manager v1.19.1 of https://charts.jetstack.io: a Helm repository's chart is pinned by sha256"},
		"an entry twice":               {"{\"charts\": [\n" + helm + ",\n" + helm + "\n]}", "charts.lock:3: cert-manager v1.19.1 of https://charts.jetstack.io is pinned twice"},
		"plain http":                   {`{"charts": [` + strings.Replace(helm, "https:", "http:", 1) + `]}`, "not an https URL"},
		"a chart name that is path":    {`{"charts": [` + strings.Replace(helm, `"cert-manager"`, `"../x"`, 1) + `]}`, "not a chart name"},
		"a git path out of it":         {`{"charts": [{"repo":"https://g/x.git","path":"../../etc","revision":"v1","commit":"` + commitA + `"}]}`, "clean relative path"},
		"a git pin by digest":          {`{"charts": [{"repo":"https://g/x.git","path":"c","revision":"v1","sha256":"` + digestA + `"}]}`, "pinned by commit (40 lowercase hex) alone"},
		"both a chart and a path":      {`{"charts": [{"repo":"https://g/x.git","chart":"c","path":"c","revision":"v1","commit":"` + commitA + `"}]}`, "one of them"},
		"an OCI pin by commit":         {`{"charts": [{"repo":"oci://r.example.com/c/x","path":".","revision":"1.0.0","commit":"` + commitA + `"}]}`, "by its manifest's sha256"},
		"an OCI chart in a subpath":    {`{"charts": [{"repo":"oci://r.example.com/c/x","path":"sub","revision":"1.0.0","sha256":"` + digestA + `"}]}`, "at path \".\""},
		"an OCI revision that is none": {`{"charts": [{"repo":"oci://r.example.com/c/x","path":".","revision":"a b","sha256":"` + digestA + `"}]}`, "not a tag or a sha256 digest"},
		"another form":                 {`{"locks": []}`, `charts.lock:1: locks where charts belongs`},
		"more after it":                {`{"charts": []} {}`, "more after the lock's object"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadLock(fstest.MapFS{LockFile: {Data: []byte(tc.lock)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestPullHoldsToThePin: a pin that is not what the repository serves
// (a republished version, a moved tag) is refused before anything is
// cached; the pin that is, is taken.
func TestPullHoldsToThePin(t *testing.T) {
	good := manifeststest.Pack(t, filepath.Join("testdata", "c"), "eso", "1.2.3")
	s := repository(t, map[string][]byte{"eso@1.2.3.tgz": good}, func(string) string { return "" })
	c := Cache{Dir: t.TempDir()}
	ctx := context.Background()
	if _, err := c.Pull(ctx, s.Client(), s.URL+"/repo", "eso", "1.2.3", digestA); err == nil || !strings.Contains(err.Error(), "but charts.lock pins sha256 "+digestA) || c.Has(s.URL+"/repo", "eso", "1.2.3") {
		t.Errorf("a republished version: %v", err)
	}
	want := fmt.Sprintf("%x", sha256.Sum256(good))
	if got, err := c.Pull(ctx, s.Client(), s.URL+"/repo", "eso", "1.2.3", want); err != nil || got != want || c.HelmPin(s.URL+"/repo", "eso", "1.2.3") != want {
		t.Errorf("the pinned version: %s, %v", got, err)
	}

	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git: apt-get install git")
	}
	url, ca, v1 := chartRepository(t)
	src := GitSource{URL: url, Path: "charts/c", Revision: "v1.0.0"}
	if _, err := c.PullGit(ctx, src, ca, commitA); err == nil || !strings.Contains(err.Error(), "the tag moved") || c.HasGit(src) {
		t.Errorf("a moved tag: %v", err)
	}
	if got, err := c.PullGit(ctx, src, ca, v1); err != nil || got != v1 || c.GitPin(src) != v1 {
		t.Errorf("the pinned tag: %s, %v", got, err)
	}
}
