package bootstrap

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
)

// ArgoCDModule is the Go module whose zip holds Argo CD's install
// manifests: the module proxy serves them, checked against the checksum
// database, so that no copy lives in this repository.
const ArgoCDModule = "github.com/argoproj/argo-cd/v3"

// ArgoCDVersion reads the version of ArgoCDModule that a go.mod requires
// (conformance/argocd's, the one pin).
func ArgoCDVersion(goMod string) (string, error) {
	b, err := os.ReadFile(goMod)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(ArgoCDModule) + `\s+(v[0-9][^\s]*)\s*$`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s requires no %s", goMod, ArgoCDModule)
	}
	return string(m[1]), nil
}

// DownloadManifests has the go command fetch ArgoCDModule at version
// (from its module cache, or the proxy) and returns manifests/<file> from
// the module's zip.
func DownloadManifests(goCmd, version, file string) ([]byte, error) {
	cmd := exec.Command(goCmd, "mod", "download", "-json", ArgoCDModule+"@"+version)
	cmd.Dir = os.TempDir() // outside any module
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, _ := cmd.Output() // an Error field may only say the module wants a newer Go to build: its zip is all we read
	var info struct{ Zip, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Zip == "" {
		return nil, fmt.Errorf("go mod download %s@%s: %s%s", ArgoCDModule, version, info.Error, out)
	}
	zb, err := os.ReadFile(info.Zip)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		return nil, err
	}
	want := path.Join(ArgoCDModule+"@"+version, "manifests", file)
	for _, f := range zr.File {
		if f.Name == want {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(io.LimitReader(rc, 64<<20))
		}
	}
	return nil, fmt.Errorf("%s has no %s", info.Zip, want)
}

// PinnedArgoCD is the version of ArgoCDModule whose install.yaml the
// runner image carries (make image reads conformance/argocd's go.mod), and
// so the Argo CD every bootstrap starts: the argo-cd component must take
// over that version (render checks it). TestPinnedArgoCDIsTheImagesPin
// holds it to the go.mod.
const PinnedArgoCD = "v3.6.1"
