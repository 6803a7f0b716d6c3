package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

const repoRoot = ".."

// inputs are the real components of a build: a static regionctl
// (REGIONCTL_STATIC_BIN, which make sets, or built here), the terraform on
// PATH at the pinned version, and the machine's provider mirror.
type inputs struct {
	regionctl, terraform, version, mirror, argocd string
}

var (
	inputsOnce sync.Once
	theInputs  inputs
	inputsErr  error
)

func requireInputs(t *testing.T) inputs {
	t.Helper()
	inputsOnce.Do(func() {
		pin, err := os.ReadFile("TERRAFORM_VERSION")
		if err != nil {
			inputsErr = err
			return
		}
		theInputs.version = strings.TrimSpace(string(pin))
		if theInputs.terraform, err = exec.LookPath("terraform"); err != nil {
			inputsErr = errors.New("no terraform on PATH")
			return
		}
		theInputs.mirror = os.Getenv("TF_PROVIDER_MIRROR")
		if theInputs.mirror == "" {
			theInputs.mirror = "/opt/tf-plugins"
		}
		if _, err := os.Stat(filepath.Join(theInputs.mirror, "registry.terraform.io/hashicorp/aws")); err != nil {
			inputsErr = errors.New("no provider mirror holding hashicorp/aws at " + theInputs.mirror)
			return
		}
		theInputs.regionctl = os.Getenv("REGIONCTL_STATIC_BIN")
		if theInputs.regionctl == "" {
			dir, err := os.MkdirTemp("", "regionctl-static-")
			if err != nil {
				inputsErr = err
				return
			}
			theInputs.regionctl = filepath.Join(dir, "regionctl")
			cmd := exec.Command("go", "build", "-trimpath", "-o", theInputs.regionctl, "./cmd/regionctl")
			cmd.Dir, cmd.Env = repoRoot, append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				inputsErr = errors.New("building a static regionctl: " + err.Error() + "\n" + string(out))
			}
		}
	})
	if inputsErr == nil && theInputs.argocd == "" {
		// Argo CD's install manifests, as make image gets them.
		file := filepath.Join(os.TempDir(), "regionctl-image-test-argocd-install.yaml")
		cmd := exec.Command(theInputs.regionctl, "dev", "argocd-manifests", "--go-mod", filepath.Join(repoRoot, "conformance", "argocd", "go.mod"), "-o", file)
		if out, err := cmd.CombinedOutput(); err != nil {
			inputsErr = errors.New("regionctl dev argocd-manifests: " + err.Error() + "\n" + string(out))
		}
		theInputs.argocd = file
	}
	if inputsErr != nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" {
			t.Fatal(inputsErr)
		}
		t.Skip(inputsErr)
	}
	return theInputs
}

func options(in inputs, out string) Options {
	return Options{Out: out, Regionctl: in.regionctl, Terraform: in.terraform, TerraformVersion: in.version, Mirror: in.mirror, ArgoCDManifests: in.argocd,
		Certs: "/etc/ssl/certs/ca-certificates.crt", Repository: "registry.example.com/platform/regionctl", Tag: "test", Epoch: 1700000000}
}

var (
	builtOnce sync.Once
	built     *Result
	builtDir  string
	builtErr  error
)

// buildOnce builds the image the tests share.
func buildOnce(t *testing.T) (string, *Result) {
	t.Helper()
	in := requireInputs(t)
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "regionctl-image-")
		if err != nil {
			builtErr = err
			return
		}
		builtDir = filepath.Join(dir, "layout")
		start := time.Now()
		built, builtErr = Build(options(in, builtDir))
		t.Logf("built in %s", time.Since(start).Round(time.Millisecond))
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtDir, built
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(filepath.Dir(builtDir))
	}
	os.Exit(code)
}

// readImage opens the layout's one image as a registry client would.
func readImage(t *testing.T, dir string) v1.Image {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	// One image, under each of its tags (tags: the version, and the
	// commit when the build recorded one).
	if len(m.Manifests) == 0 || m.Manifests[0].Annotations[ociRefNameKey] != "test" {
		t.Fatalf("the layout's first manifest is not the image tagged test: %+v", m.Manifests)
	}
	for _, d := range m.Manifests[1:] {
		if d.Digest != m.Manifests[0].Digest || !strings.HasPrefix(d.Annotations[ociRefNameKey], "sha-") {
			t.Errorf("the layout holds %s as %q beside the image", d.Digest, d.Annotations[ociRefNameKey])
		}
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// unpack flattens the image's layers into a directory, as a container
// runtime does, refusing entries that would leave it, and returns the
// headers seen.
func unpack(t *testing.T, img v1.Image, root string) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	seen := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean("/" + h.Name)
		if name != "/"+strings.TrimSuffix(h.Name, "/") {
			t.Fatalf("entry %q is not a clean relative path", h.Name)
		}
		seen[name] = h
		dst := filepath.Join(root, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, os.FileMode(h.Mode).Perm()); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(dst, os.FileMode(h.Mode).Perm()|sticky(h))
			_ = os.Chown(dst, h.Uid, h.Gid)
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode).Perm())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			t.Fatalf("entry %s has type %c: the image holds only files and directories", h.Name, h.Typeflag)
		}
	}
	return seen
}

func sticky(h *tar.Header) os.FileMode {
	if h.Mode&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// TestImageRunsRegionctlAndTerraform unpacks the image and runs what the
// Tasks run, confined to the image (chroot, as the image's user 65532,
// with the image's environment only): regionctl version, terraform
// version at the pinned version, and terraform init of a root locked like
// the repository's roots, which installs the provider from the image's
// own mirror and checks it against the committed lock file's hashes.
func TestImageRunsRegionctlAndTerraform(t *testing.T) {
	in := requireInputs(t)
	dir, res := buildOnce(t)
	img := readImage(t, dir)
	if d, _ := img.Digest(); d != res.Digest {
		t.Fatalf("layout holds %s, Build said %s", d, res.Digest)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.OS != "linux" || cf.Architecture != "amd64" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/usr/local/bin/regionctl" {
		t.Errorf("config: user %q, platform %s/%s, entrypoint %v", cf.Config.User, cf.OS, cf.Architecture, cf.Config.Entrypoint)
	}
	root := t.TempDir()
	headers := unpack(t, img, root)
	for name, h := range headers {
		if h.Mode&0o6000 != 0 {
			t.Errorf("%s is setuid or setgid", name)
		}
		if h.Mode&0o002 != 0 && name != "/tmp" {
			t.Errorf("%s is writable by anyone", name)
		}
		if h.Uid != 0 && name != "/home/nonroot" {
			t.Errorf("%s belongs to %d", name, h.Uid)
		}
		if !h.ModTime.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s is stamped %s, not the epoch", name, h.ModTime)
		}
	}
	for _, want := range []string{"/usr/local/bin/regionctl", "/usr/local/bin/terraform", "/etc/regionctl/terraformrc", "/etc/ssl/certs/ca-certificates.crt", "/etc/passwd", "/tmp", ArgoCDManifestsFile} {
		if headers[want] == nil {
			t.Errorf("the image has no %s", want)
		}
	}

	// A root with the providers of the repository's roots and their
	// committed lock file, placed where the image's user may write.
	work := filepath.Join(root, "tmp", "root")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(repoRoot, "terraform", "central-bootstrap", ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"versions.tf":         "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"~> 5.100\"\n    }\n  }\n}\n",
		".terraform.lock.hcl": string(lock),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(work, NonRootUID, NonRootUID); err != nil && os.Geteuid() == 0 {
		t.Fatal(err)
	}

	run := func(args ...string) []byte {
		t.Helper()
		var cmd *exec.Cmd
		if os.Geteuid() == 0 {
			cmd = exec.Command("chroot", append([]string{"--userspec=65532:65532", root}, args...)...)
			cmd.Env = cf.Config.Env
		} else {
			// Without root there is no chroot: run the image's static
			// binaries in place, with the configuration pointing into it.
			args[0] = filepath.Join(root, args[0])
			cmd = exec.Command(args[0], args[1:]...)
			cmd.Env = append(cf.Config.Env, "TF_CLI_CONFIG_FILE="+filepath.Join(root, "etc/regionctl/terraformrc"))
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s%s", args, err, out.String(), errb.String())
		}
		return out.Bytes()
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the binaries run from the unpacked image without chroot")
	}

	var rv struct{ Version, Go, Platform string }
	if err := json.Unmarshal(run("/usr/local/bin/regionctl", "version", "-o", "json"), &rv); err != nil || rv.Platform != "linux/amd64" || rv.Version == "" {
		t.Errorf("regionctl version: %+v %v", rv, err)
	}
	// The bootstrap task's command finds Argo CD's manifests where the
	// image keeps them, with no flag.
	if help := string(run("/usr/local/bin/regionctl", "argocd", "bootstrap", "--help")); !strings.Contains(help, `--manifests string   Argo CD's install.yaml (default "`+ArgoCDManifestsFile+`")`) {
		t.Errorf("regionctl argocd bootstrap does not default to %s:\n%s", ArgoCDManifestsFile, help)
	}
	var tv struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(run("/usr/local/bin/terraform", "version", "-json"), &tv); err != nil || tv.Version != in.version {
		t.Errorf("terraform version: %q, want the pin %s (%v)", tv.Version, in.version, err)
	}
	chdir := "-chdir=/tmp/root"
	if os.Geteuid() != 0 {
		chdir = "-chdir=" + work
	}
	start := time.Now()
	out := run("/usr/local/bin/terraform", chdir, "init", "-backend=false", "-input=false", "-lockfile=readonly", "-no-color")
	if !strings.Contains(string(out), "Installing hashicorp/aws v") || !strings.Contains(string(out), "Terraform has been successfully initialized") {
		t.Errorf("terraform init did not install the provider from the image:\n%s", out)
	}
	t.Logf("terraform init from the image's mirror: %s", time.Since(start).Round(time.Second))
	t.Logf("image %s: %d layers, %.0f MiB compressed, %.0f MiB unpacked", res.Digest, len(res.Layers), float64(res.Compressed)/(1<<20), float64(res.Unpacked)/(1<<20))
}

// TestImageIsReproducible builds again from copies of the inputs with other
// modification times, into another directory: the digest is the same.
func TestImageIsReproducible(t *testing.T) {
	in := requireInputs(t)
	_, first := buildOnce(t)
	tmp := t.TempDir()
	copied := in
	copied.regionctl = filepath.Join(tmp, "regionctl")
	b, err := os.ReadFile(in.regionctl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied.regionctl, b, 0o700); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(48 * time.Hour)
	if err := os.Chtimes(copied.regionctl, later, later); err != nil {
		t.Fatal(err)
	}
	second, err := Build(options(copied, filepath.Join(tmp, "again")))
	if err != nil {
		t.Fatal(err)
	}
	if second.Digest != first.Digest {
		t.Errorf("second build %s, first %s", second.Digest, first.Digest)
	}
	// And a different regionctl gives a different image.
	if err := os.WriteFile(copied.regionctl, append(b, 0), 0o700); err != nil {
		t.Fatal(err)
	}
	third, err := Build(options(copied, filepath.Join(tmp, "changed")))
	if err != nil {
		t.Fatal(err)
	}
	if third.Digest == first.Digest || third.Layers[0] != first.Layers[0] || third.Layers[1] != first.Layers[1] || third.Layers[2] != first.Layers[2] || third.Layers[3] == first.Layers[3] {
		t.Errorf("a changed regionctl: digest %s (was %s), layers %v (were %v)", third.Digest, first.Digest, third.Layers, first.Layers)
	}
}

// TestBuildRefusesWhatCannotRun: inputs the image could not run, or that
// are not what was pinned, fail the build before anything is written, and
// a failed build leaves the previous layout as it was.
func TestBuildRefusesWhatCannotRun(t *testing.T) {
	in := requireInputs(t)
	tmp := t.TempDir()
	out := filepath.Join(tmp, "layout")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(out, "previous")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A mirror whose provider is a symlink: the image would hold a link to
	// whatever the path names on the cluster's node.
	linked := filepath.Join(tmp, "mirror")
	providers, _ := filepath.Glob(filepath.Join(in.mirror, providerGlob))
	if len(providers) == 0 {
		t.Fatal("no provider in the mirror")
	}
	rel, _ := filepath.Rel(in.mirror, providers[0])
	if err := os.MkdirAll(filepath.Dir(filepath.Join(linked, rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(providers[0], filepath.Join(linked, rel)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what   string
		change func(o *Options)
		want   string
	}{
		{"a dynamically linked regionctl", func(o *Options) { o.Regionctl = "/bin/ls" }, "dynamically linked"},
		{"another terraform version", func(o *Options) { o.TerraformVersion = "1.9.0" }, "the image pins 1.9.0"},
		{"a mirror without providers", func(o *Options) { o.Mirror = tmp }, "holds no linux_amd64 provider"},
		{"a repository with a scheme", func(o *Options) { o.Repository = "https://registry.example.com/x" }, "not an image repository"},
		{"a tag with a slash", func(o *Options) { o.Tag = "a/b" }, "not an image tag"},
		{"certificates that are not PEM", func(o *Options) { o.Certs = "/etc/passwd" }, "holds no PEM certificate"},
		{"a mirror holding a symlink", func(o *Options) { o.Mirror = linked }, "may hold only files and directories"},
	} {
		o := options(in, out)
		tc.change(&o)
		_, err := Build(o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.what, err, tc.want)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("%s: the previous layout is gone", tc.what)
		}
	}
}

// TestTagsNameTheVersionAndTheCommit: an image of a build of a commit's
// own sources is tagged with its version and its commit; a modified build,
// or one that recorded no commit, with its version alone.
func TestTagsNameTheVersionAndTheCommit(t *testing.T) {
	commit := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		bi   versionInfo
		want string
	}{
		{versionInfo{Version: "1.2.3", Commit: commit}, "1.2.3 sha-abababababab"},
		{versionInfo{Version: "1.2.3", Commit: commit, Modified: true}, "1.2.3"},
		{versionInfo{Version: "1.2.3"}, "1.2.3"},
		{versionInfo{Version: "1.2.3", Commit: "HEAD"}, "1.2.3"},
	} {
		if got := strings.Join(tags("1.2.3", tc.bi), " "); got != tc.want {
			t.Errorf("%+v: tags %q, want %q", tc.bi, got, tc.want)
		}
	}
}
