package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Where things live in the image. The Tasks (pipelines/tekton) rely on
// these: they call regionctl by name and point TF_CLI_CONFIG_FILE at the
// configuration.
const (
	BinDir = "/usr/local/bin"
	// ArgoCDManifestsFile is where `regionctl argocd bootstrap` looks by
	// default.
	ArgoCDManifestsFile = "/usr/share/regionctl/argocd/install.yaml"
	MirrorDir           = "/opt/tf-plugins"
	TerraformRC         = "/etc/regionctl/terraformrc"
	CertsFile           = "/etc/ssl/certs/ca-certificates.crt"
	NonRootUID          = 65532
	nonRootHome         = "/home/nonroot"
	imageUser           = "65532:65532"
	layerMedia          = types.OCILayer
	providerGlob        = "registry.terraform.io/*/*/*/linux_amd64/terraform-provider-*"
	ociRefNameKey       = "org.opencontainers.image.ref.name"
)

// Options are the inputs of a build.
type Options struct {
	Out              string
	Regionctl        string
	Terraform        string
	TerraformVersion string
	Mirror           string
	Certs            string
	// ArgoCDManifests is Argo CD's install.yaml (regionctl dev
	// argocd-manifests), which the bootstrap task applies.
	ArgoCDManifests string
	Repository      string
	Tag             string
	Epoch           int64
}

// Result describes the image written.
type Result struct {
	Digest     v1.Hash
	Tags       []string // the names the layout gives it (tags)
	Layers     []v1.Hash
	Compressed int64 // bytes of the layers as pushed
	Unpacked   int64 // bytes of the files
}

var (
	repositoryRE = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$`)
	tagRE        = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	versionRE    = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
)

// writeLayout writes img, named by each of tags, into a new OCI layout in
// work, then puts it in place of out in one rename (the previous layout
// comes back if that fails).
func writeLayout(work, out string, img v1.Image, tags []string) error {
	staged := filepath.Join(work, "layout")
	p, err := layout.Write(staged, empty.Index)
	if err != nil {
		return err
	}
	for _, tag := range tags {
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{ociRefNameKey: tag})); err != nil {
			return fmt.Errorf("writing the layout: %w", err)
		}
	}
	// Blobs are content-addressed and public: readable by whoever pushes.
	err = filepath.WalkDir(staged, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		return err
	}
	old := filepath.Join(work, "previous")
	if _, err := os.Lstat(out); err == nil {
		if err := os.Rename(out, old); err != nil {
			return err
		}
	}
	if err := os.Rename(staged, out); err != nil {
		_ = os.Rename(old, out)
		return err
	}
	return nil
}

// Build checks the inputs, writes the image into a new layout beside
// o.Out and then puts it in o.Out's place, so a failed build leaves the
// previous layout as it was.
func Build(o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	bi, err := regionctlVersion(o.Regionctl)
	if err != nil {
		return nil, err
	}
	if o.Tag == "" {
		o.Tag = strings.ReplaceAll(bi.Version, "+", "-")
		if o.Tag != "" && !tagRE.MatchString(o.Tag) {
			return nil, fmt.Errorf("regionctl's version %q makes no image tag; give -tag", bi.Version)
		}
	}
	work, err := os.MkdirTemp(filepath.Dir(filepath.Clean(o.Out)), ".image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	epoch := time.Unix(o.Epoch, 0).UTC()
	layers := []struct {
		name    string
		entries func() ([]entry, error)
	}{
		{"base: CA certificates, users, Terraform CLI configuration", o.baseEntries},
		{"terraform " + o.TerraformVersion + " and the provider mirror", o.terraformEntries},
		{"Argo CD's install manifests", o.argocdEntries},
		{"regionctl", o.regionctlEntries},
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	res := &Result{}
	for i, l := range layers {
		entries, err := l.entries()
		if err != nil {
			return nil, err
		}
		blob := filepath.Join(work, fmt.Sprintf("layer%d.tar.gz", i))
		n, err := writeLayer(blob, entries, epoch)
		if err != nil {
			return nil, fmt.Errorf("layer %q: %w", l.name, err)
		}
		res.Unpacked += n
		layer, err := tarball.LayerFromFile(blob, tarball.WithMediaType(layerMedia))
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "regionctl image: " + l.name, Comment: "built without a container daemon"}})
		if err != nil {
			return nil, err
		}
		d, _ := layer.Digest()
		size, _ := layer.Size()
		res.Layers = append(res.Layers, d)
		res.Compressed += size
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Created = "amd64", "linux", v1.Time{Time: epoch}
	cf.Config = v1.Config{
		User:       imageUser,
		Entrypoint: []string{BinDir + "/regionctl"},
		WorkingDir: "/tmp",
		Env: []string{
			"PATH=" + BinDir,
			"HOME=/tmp",
			"TF_CLI_CONFIG_FILE=" + TerraformRC,
			"TF_IN_AUTOMATION=1",
			"CHECKPOINT_DISABLE=1",
			"SSL_CERT_FILE=" + CertsFile,
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "regionctl",
			"org.opencontainers.image.version":  bi.Version,
			"org.opencontainers.image.revision": bi.Commit,
			"io.regionctl.terraform.version":    o.TerraformVersion,
		},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	if res.Digest, err = img.Digest(); err != nil {
		return nil, err
	}

	res.Tags = tags(o.Tag, bi)
	if err := writeLayout(work, o.Out, img, res.Tags); err != nil {
		return nil, err
	}
	return res, nil
}

func (o Options) check() error {
	var errs []error
	need := func(v, flag string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("-%s is required", flag))
		}
	}
	need(o.Out, "out")
	need(o.Regionctl, "regionctl")
	need(o.Terraform, "terraform")
	need(o.Mirror, "mirror")
	need(o.Certs, "certs")
	need(o.ArgoCDManifests, "argocd-manifests")
	if o.ArgoCDManifests != "" {
		if b, err := os.ReadFile(o.ArgoCDManifests); err != nil {
			errs = append(errs, fmt.Errorf("-argocd-manifests: %w", err))
		} else if !bytes.Contains(b, []byte("name: applications.argoproj.io")) || !bytes.Contains(b, []byte("name: argocd-server")) {
			errs = append(errs, fmt.Errorf("-argocd-manifests %s is not Argo CD's install.yaml", o.ArgoCDManifests))
		}
	}
	if !repositoryRE.MatchString(o.Repository) {
		errs = append(errs, fmt.Errorf("-repository %q is not an image repository (host/path, lower case)", o.Repository))
	}
	if o.Tag != "" && !tagRE.MatchString(o.Tag) {
		errs = append(errs, fmt.Errorf("-tag %q is not an image tag", o.Tag))
	}
	if !versionRE.MatchString(o.TerraformVersion) {
		errs = append(errs, fmt.Errorf("-terraform-version %q is not a version like 1.11.4", o.TerraformVersion))
	}
	if o.Epoch < 0 {
		errs = append(errs, errors.New("-epoch is before 1970"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, b := range []string{o.Regionctl, o.Terraform} {
		if err := checkStatic(b); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := checkTerraformVersion(o.Terraform, o.TerraformVersion); err != nil {
			errs = append(errs, err)
		}
	}
	if providers, _ := filepath.Glob(filepath.Join(o.Mirror, providerGlob)); len(providers) == 0 {
		errs = append(errs, fmt.Errorf("-mirror %s holds no linux_amd64 provider (%s)", o.Mirror, providerGlob))
	}
	if b, err := os.ReadFile(o.Certs); err != nil {
		errs = append(errs, err)
	} else if !x509.NewCertPool().AppendCertsFromPEM(b) {
		errs = append(errs, fmt.Errorf("-certs %s holds no PEM certificate", o.Certs))
	}
	return errors.Join(errs...)
}

// checkStatic refuses a binary that needs a dynamic loader: the image has
// no libc to give it.
func checkStatic(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("%s: not an ELF binary: %w", file, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s is built for %v, the image is linux/amd64", file, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; build it static (CGO_ENABLED=0)", file)
		}
	}
	return nil
}

func checkTerraformVersion(bin, want string) error {
	out, err := exec.Command(bin, "version", "-json").Output()
	if err != nil {
		return fmt.Errorf("%s version: %w", bin, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("%s version -json: %w", bin, err)
	}
	if v.Version != want {
		return fmt.Errorf("%s is terraform %s, the image pins %s", bin, v.Version, want)
	}
	return nil
}

// versionInfo is what regionctl version -o json prints.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Platform string `json:"platform"`
}

// tags are the names the layout's index gives the image: tag (the
// release's version, or -tag), and sha-<12 hex digits> of the commit
// regionctl was built from when that build was of the commit's sources
// alone (not modified), so that a registry holds each image under its
// version and its commit.
func tags(tag string, bi versionInfo) []string {
	out := []string{tag}
	if commitRE.MatchString(bi.Commit) && !bi.Modified {
		if t := "sha-" + bi.Commit[:12]; t != tag {
			out = append(out, t)
		}
	}
	return out
}

var commitRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// regionctlVersion runs the binary the image will hold: it must run here
// (linux/amd64) and say its version.
func regionctlVersion(bin string) (versionInfo, error) {
	var v versionInfo
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		return v, fmt.Errorf("%s version: %w", bin, err)
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Version == "" {
		return v, fmt.Errorf("%s version -o json says %q", bin, out)
	}
	if v.Platform != "linux/amd64" {
		return v, fmt.Errorf("%s is built for %s, the image is linux/amd64", bin, v.Platform)
	}
	return v, nil
}

// entry is one file or directory of a layer.
type entry struct {
	name string // absolute path in the image
	mode fs.FileMode
	uid  int
	src  string // file on this machine, or
	data []byte // the content itself
}

func (o Options) baseEntries() ([]entry, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", NonRootUID, NonRootUID, nonRootHome)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootUID)
	rc := fmt.Sprintf(`# The regionctl image installs providers only from its own mirror.
provider_installation {
  filesystem_mirror {
    path    = %q
    include = ["registry.terraform.io/*/*"]
  }
  direct {
    exclude = ["registry.terraform.io/*/*"]
  }
}
`, MirrorDir)
	return []entry{
		{name: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "/etc/group", mode: 0o644, data: []byte(group)},
		{name: CertsFile, mode: 0o644, src: o.Certs},
		{name: TerraformRC, mode: 0o644, data: []byte(rc)},
		{name: "/tmp", mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{name: nonRootHome, mode: fs.ModeDir | 0o755, uid: NonRootUID},
	}, nil
}

func (o Options) terraformEntries() ([]entry, error) {
	out := []entry{{name: BinDir + "/terraform", mode: 0o755, src: o.Terraform}}
	err := filepath.WalkDir(o.Mirror, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(o.Mirror, p)
		name := path.Join(MirrorDir, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			out = append(out, entry{name: name, mode: fs.ModeDir | 0o755})
		case d.Type().IsRegular():
			mode := fs.FileMode(0o644)
			if strings.HasPrefix(d.Name(), "terraform-provider-") {
				mode = 0o755
			}
			out = append(out, entry{name: name, mode: mode, src: p})
		default:
			return fmt.Errorf("%s is a %v: the mirror may hold only files and directories", p, d.Type())
		}
		return nil
	})
	return out, err
}

func (o Options) argocdEntries() ([]entry, error) {
	return []entry{{name: ArgoCDManifestsFile, mode: 0o644, src: o.ArgoCDManifests}}, nil
}

func (o Options) regionctlEntries() ([]entry, error) {
	return []entry{{name: BinDir + "/regionctl", mode: 0o755, src: o.Regionctl}}, nil
}

// writeLayer writes entries, and the directories above them, as one
// gzipped tar: sorted, owned by root unless said otherwise, every time the
// epoch. It returns the bytes of file content.
func writeLayer(file string, entries []entry, epoch time.Time) (int64, error) {
	byName := map[string]entry{}
	for _, e := range entries {
		for dir := path.Dir(e.name); dir != "/"; dir = path.Dir(dir) {
			if _, ok := byName[dir]; !ok {
				byName[dir] = entry{name: dir, mode: fs.ModeDir | 0o755}
			}
		}
	}
	for _, e := range entries {
		byName[e.name] = e
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)

	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return 0, err
	}
	tw := tar.NewWriter(zw)
	var total int64
	for _, name := range names {
		e := byName[name]
		h := &tar.Header{Name: strings.TrimPrefix(name, "/"), Mode: int64(e.mode.Perm()), Uid: e.uid, Gid: e.uid, ModTime: epoch, Format: tar.FormatPAX}
		if e.mode&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		if e.mode.IsDir() {
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			if err := tw.WriteHeader(h); err != nil {
				return 0, err
			}
			continue
		}
		n, err := writeFile(tw, h, e)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		total += n
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return total, f.Close()
}

// writeFile writes one regular file of a layer.
func writeFile(tw *tar.Writer, h *tar.Header, e entry) (int64, error) {
	h.Typeflag = tar.TypeReg
	if e.src == "" {
		h.Size = int64(len(e.data))
		if err := tw.WriteHeader(h); err != nil {
			return 0, err
		}
		n, err := tw.Write(e.data)
		return int64(n), err
	}
	src, err := os.Open(e.src)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", e.src)
	}
	h.Size = st.Size()
	if err := tw.WriteHeader(h); err != nil {
		return 0, err
	}
	n, err := io.Copy(tw, io.LimitReader(src, h.Size))
	if err == nil && n != h.Size {
		err = fmt.Errorf("%s changed while it was read", e.src)
	}
	return n, err
}
