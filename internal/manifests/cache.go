package manifests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/atomicfile"
)

// Cache holds other projects' charts from Helm repositories, as Terraform's
// plugin cache holds providers: Pull fetches a chart at a pinned version
// once, checked against the digest its repository's index gives, and the
// review reads it from here and never from the network. Its layout:
// <dir>/<sha256 of the repository URL, 32 hex>/<name>-<version>.tgz, each
// beside <name>-<version>.tgz.sha256 (its digest when it was cached).
type Cache struct{ Dir string }

// Cached says whether an Application's chart is one the chart cache takes:
// another project's (a Helm repository's chart, or a git repository's
// directory, not this repository's, self) from an https or oci:// source.
// charts pull fetches exactly these, and the review reads them from the
// cache alone.
func Cached(repoURL, chart, self string) bool {
	other := chart != "" || repoURL != self
	return other && (strings.HasPrefix(repoURL, "https://") || strings.HasPrefix(repoURL, "oci://"))
}

// MaxIndex and MaxArchive bound what Pull reads from a repository.
const (
	MaxIndex   = 64 << 20
	MaxArchive = 32 << 20
)

// ErrNotCached is a chart Pull has not fetched.
var ErrNotCached = errors.New("not in the chart cache")

var (
	chartName    = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$`)
	chartVersion = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_+-]|\.[A-Za-z0-9_+-]){0,63}$`)
)

func (c Cache) path(repoURL, name, version string) (string, error) {
	if !chartName.MatchString(name) || !chartVersion.MatchString(version) {
		return "", fmt.Errorf("chart %q version %q: not a chart name and version", name, version)
	}
	return filepath.Join(c.repoDir(repoURL), name+"-"+version+".tgz"), nil
}

// repoDir is the cache's directory of a repository: the sha256 of its URL,
// 32 hex.
func (c Cache) repoDir(repoURL string) string {
	sum := sha256.Sum256([]byte(strings.TrimSuffix(repoURL, "/")))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16]))
}

// keyed is the file of a repository's cache directory for key: prefix,
// the sha256 of key (32 hex), then ext.
func (c Cache) keyed(repoURL, prefix, key, ext string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.repoDir(repoURL), prefix+hex.EncodeToString(sum[:16])+ext)
}

// Chart reads chart name at version of the Helm repository repoURL from
// the cache: ErrNotCached when Pull has not fetched it, an error when the
// archive is not what Pull checked.
func (c Cache) Chart(repoURL, name, version string) (*Chart, error) {
	p, err := c.path(repoURL, name, version)
	if err != nil {
		return nil, err
	}
	b, err := readCached(p)
	if err != nil {
		return nil, err
	}
	return loadArchive(b, name, version)
}

// readCached reads the archive at p, which must have the digest cached
// beside it: ErrNotCached when there is none.
func readCached(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotCached
	}
	if err != nil {
		return nil, err
	}
	want, err := os.ReadFile(p + ".sha256")
	if err != nil {
		return nil, fmt.Errorf("%s: its digest: %w", p, err)
	}
	if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != strings.TrimSpace(string(want)) {
		return nil, fmt.Errorf("%s is not what was pulled (sha256 %x): pull it again", p, got)
	}
	return b, nil
}

// loadArchive loads a chart archive, which must be the chart name at
// version.
func loadArchive(b []byte, name, version string) (*Chart, error) {
	files, err := loader.LoadArchiveFiles(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, err
	}
	if ch.Metadata.Name != name || ch.Metadata.Version != version {
		return nil, fmt.Errorf("the archive holds chart %s %s, not %s %s", ch.Metadata.Name, ch.Metadata.Version, name, version)
	}
	return &Chart{files: files}, nil
}

// Has says whether the cache holds the chart.
func (c Cache) Has(repoURL, name, version string) bool {
	return c.HelmPin(repoURL, name, version) != ""
}

// HelmPin is the sha256 digest of the archive the cache holds for the
// chart, "" when it holds none.
func (c Cache) HelmPin(repoURL, name, version string) string {
	p, err := c.path(repoURL, name, version)
	if err != nil {
		return ""
	}
	return readPin(p+".sha256", hexDigest)
}

// readPinned reads the archive at p, which must have the digest cached
// beside it, and the pin in p+ext, which must be of form.
func readPinned(p, ext string, form *regexp.Regexp) ([]byte, string, error) {
	b, err := readCached(p)
	if err != nil {
		return nil, "", err
	}
	pin := readPin(p+ext, form)
	if pin == "" {
		return nil, "", fmt.Errorf("%s: no %s beside it: pull it again", p, ext)
	}
	return b, pin, nil
}

// writeCached writes archive at p, its digest beside it, then each
// sidecar (extension and content) in order: whole or not at all, and the
// last one, which says the entry is there, last.
func writeCached(p string, archive []byte, sidecars ...[2]string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	sum := sha256.Sum256(archive)
	if err := atomicfile.Write(p, archive, ".pull-*"); err != nil {
		return err
	}
	sidecars = append([][2]string{{".sha256", hex.EncodeToString(sum[:])}}, sidecars...)
	for _, sc := range sidecars {
		if err := atomicfile.Write(p+sc[0], []byte(sc[1]+"\n"), ".pull-*"); err != nil {
			return err
		}
	}
	return nil
}

// readPin is the pin in file, "" when there is none of the form.
func readPin(file string, form *regexp.Regexp) string {
	b, err := os.ReadFile(file)
	if s := strings.TrimSpace(string(b)); err == nil && form.MatchString(s) {
		return s
	}
	return ""
}

// Pull fetches chart name at version from the Helm repository repoURL
// (https): its index.yaml, then the archive the index names for that
// version, which must have the index's sha256 digest, and pin's when pin
// is not "" (what the repository's lock file pins); Put caches it. It
// returns the digest.
func (c Cache) Pull(ctx context.Context, client *http.Client, repoURL, name, version, pin string) (string, error) {
	if _, err := c.path(repoURL, name, version); err != nil {
		return "", err
	}
	base, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil || base.Scheme != "https" || base.User != nil {
		return "", fmt.Errorf("%s: a chart repository is an https URL without credentials", repoURL)
	}
	idx, err := fetch(ctx, client, base.JoinPath("index.yaml").String(), MaxIndex)
	if err != nil {
		return "", err
	}
	var index struct {
		Entries map[string][]struct {
			Version string   `json:"version"`
			URLs    []string `json:"urls"`
			Digest  string   `json:"digest"`
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(idx, &index); err != nil {
		return "", fmt.Errorf("%sindex.yaml: %w", base, err)
	}
	var archiveURL, digest string
	for _, e := range index.Entries[name] {
		if e.Version == version && len(e.URLs) > 0 {
			archiveURL, digest = e.URLs[0], strings.ToLower(e.Digest)
			break
		}
	}
	if archiveURL == "" {
		return "", fmt.Errorf("%sindex.yaml has no chart %s at version %s", base, name, version)
	}
	if !hexDigest.MatchString(digest) {
		return "", fmt.Errorf("%sindex.yaml gives chart %s %s no sha256 digest: regionctl takes no chart it cannot check", base, name, version)
	}
	if pin != "" && digest != pin {
		return "", &PinMismatch{Chart: Locked{Repo: strings.TrimSuffix(repoURL, "/"), Chart: name, Revision: version, SHA256: pin}, Served: digest, Republish: "the repository republished the version"}
	}
	u, err := base.Parse(archiveURL)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return "", fmt.Errorf("%sindex.yaml names %q for %s %s: not an https URL without credentials", base, archiveURL, name, version)
	}
	b, err := fetch(ctx, client, u.String(), MaxArchive)
	if err != nil {
		return "", err
	}
	if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != digest {
		return "", fmt.Errorf("%s: sha256 %x, but the index says %s", u, got, digest)
	}
	if err := c.Put(repoURL, name, version, b); err != nil {
		return "", fmt.Errorf("%s: %w", u, err)
	}
	return digest, nil
}

// Put caches archive as chart name at version of the Helm repository
// repoURL, once it holds that chart: how a chart fetched by other means (an
// air-gapped mirror) joins the cache. It is written whole or not at all.
func (c Cache) Put(repoURL, name, version string, archive []byte) error {
	p, err := c.path(repoURL, name, version)
	if err != nil {
		return err
	}
	if _, err := loadArchive(archive, name, version); err != nil {
		return err
	}
	return writeCached(p, archive)
}

func fetch(ctx context.Context, client *http.Client, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: over %d MiB", u, limit>>20)
	}
	return b, nil
}
