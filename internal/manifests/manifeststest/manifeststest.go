// Package manifeststest packs charts for tests, as helm package does.
package manifeststest

import (
	"encoding/pem"
	"io"
	"log"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Pack packs the chart in dir as chart name at version (Helm's own
// chartutil.Save) and returns the archive's bytes.
func Pack(t testing.TB, dir, name, version string) []byte {
	t.Helper()
	ch, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Name, ch.Metadata.Version = name, version
	p, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Git runs git in dir with no system or user configuration, and returns
// what it printed.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitServer serves the git repositories below root by git's smart HTTP
// protocol, as git http-backend serves them, over TLS on loopback. It
// returns the server's URL and the PEM of the one certificate a client
// must trust.
func GitServer(t testing.TB, root string) (string, []byte) {
	t.Helper()
	backend := filepath.Join(Git(t, root, "--exec-path"), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git's http-backend: %v (apt-get install git)", err)
	}
	s := httptest.NewTLSServer(&cgi.Handler{Path: backend, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + root,
	}})
	t.Cleanup(s.Close)
	return s.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// OCIRegistry is an OCI registry (go-containerregistry's) over TLS on
// loopback, with a function that pushes an artifact of one layer, of the
// config and layer media types given, to a tag of a repository of it and
// returns the manifest's digest (hex).
func OCIRegistry(t testing.TB) (*httptest.Server, func(repo, tag, config string, layer []byte, layerType string) string) {
	t.Helper()
	s := httptest.NewTLSServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(s.Close)
	push := func(repo, tag, config string, layer []byte, layerType string) string {
		t.Helper()
		img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.MediaType(config))
		img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(layer, types.MediaType(layerType))})
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(strings.TrimPrefix(s.URL, "https://") + "/" + repo + ":" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img, remote.WithTransport(s.Client().Transport)); err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.Hex
	}
	return s, push
}
