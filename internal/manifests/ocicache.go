package manifests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// The media types of a Helm chart in an OCI registry (Helm's registry
// package; Argo CD's OCI client reads the same).
const (
	HelmConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	HelmChartMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// OCISource is a Helm chart in an OCI registry, as an Application names it
// (repoURL oci://<registry>/<repository>, path ".", targetRevision a tag
// or a sha256 digest).
type OCISource struct{ URL, Revision string }

func (s OCISource) String() string { return s.URL + " at " + s.Revision }

var (
	ociTag    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	ociDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// reference is the registry's name for s: repository:tag, or
// repository@digest.
func (s OCISource) reference() (name.Reference, error) {
	repo, ok := strings.CutPrefix(s.URL, "oci://")
	if !ok || strings.ContainsAny(repo, "@?#") {
		return nil, fmt.Errorf("%s: an OCI chart is oci://<registry>/<repository>", s.URL)
	}
	switch {
	case ociDigest.MatchString(s.Revision):
		return name.NewDigest(repo+"@"+s.Revision, name.StrictValidation)
	case ociTag.MatchString(s.Revision):
		return name.NewTag(repo+":"+s.Revision, name.StrictValidation)
	}
	return nil, fmt.Errorf("%q: not a tag or a sha256 digest of an OCI registry", s.Revision)
}

// ociPath is where s is cached: <dir>/<sha256 of the URL, 32 hex>/
// oci-<sha256 of the revision, 32 hex>.tgz (the chart's layer), beside
// .sha256 (the layer's digest) and .manifest (the manifest's digest, hex).
func (c Cache) ociPath(s OCISource) (string, error) {
	if _, err := s.reference(); err != nil {
		return "", err
	}
	return c.keyed(s.URL, "oci-", s.Revision, ".tgz"), nil
}

// OCIPin is the manifest digest (hex) whose chart the cache holds for s,
// "" when it holds none.
func (c Cache) OCIPin(s OCISource) string {
	p, err := c.ociPath(s)
	if err != nil {
		return ""
	}
	return readPin(p+".manifest", hexDigest)
}

// OCIChart reads s from the cache with the digest of the manifest it came
// from: ErrNotCached when PullOCI has not fetched it, an error when the
// archive is not what PullOCI wrote.
func (c Cache) OCIChart(s OCISource) (*Chart, string, error) {
	p, err := c.ociPath(s)
	if err != nil {
		return nil, "", err
	}
	b, manifest, err := readPinned(p, ".manifest", hexDigest)
	if err != nil {
		return nil, "", err
	}
	ch, err := loadChartArchive(b)
	return ch, manifest, err
}

// loadChartArchive loads a chart archive of any name and version, as Argo
// CD reads an OCI chart's layer: its one directory is the chart.
func loadChartArchive(b []byte) (*Chart, error) {
	files, err := loader.LoadArchiveFiles(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if _, err := loader.LoadFiles(files); err != nil {
		return nil, err
	}
	return &Chart{files: files}, nil
}

// PullOCI fetches the Helm chart s names from its OCI registry, over https
// alone (transport carries every request; a plain-http one is refused,
// where go-containerregistry would fall back to it for a loopback or
// private address), anonymously: the manifest the tag names, which must
// be a Helm chart's (its config's media type) with one chart layer, then
// that layer, checked against its digest as it is read, at most
// MaxArchive bytes. A pin that is not "" is the manifest digest (hex) the
// tag must name (what the repository's lock file pins). It returns the
// manifest's digest.
func (c Cache) PullOCI(ctx context.Context, s OCISource, transport http.RoundTripper, pin string) (string, error) {
	p, err := c.ociPath(s)
	if err != nil {
		return "", err
	}
	ref, _ := s.reference()
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(authn.Anonymous), remote.WithTransport(httpsOnly{transport})}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", s, err)
	}
	if pin != "" && desc.Digest.Hex != pin {
		return "", &PinMismatch{Chart: Locked{Repo: strings.TrimSuffix(s.URL, "/"), Path: ".", Revision: s.Revision, SHA256: pin}, Served: desc.Digest.Hex, Republish: "the tag moved"}
	}
	img, err := desc.Image()
	if err != nil {
		return "", fmt.Errorf("%s: %w", s, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return "", fmt.Errorf("%s: %w", s, err)
	}
	if string(m.Config.MediaType) != HelmConfigMediaType {
		return "", fmt.Errorf("%s is not a Helm chart (its config is %s, not %s)", s, m.Config.MediaType, HelmConfigMediaType)
	}
	var chart []byte
	for _, l := range m.Layers {
		if string(l.MediaType) != HelmChartMediaType {
			continue
		}
		if chart != nil {
			return "", fmt.Errorf("%s holds more than one chart layer", s)
		}
		if l.Size > MaxArchive {
			return "", fmt.Errorf("%s: its chart is over %d MiB", s, MaxArchive>>20)
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return "", fmt.Errorf("%s: %w", s, err)
		}
		// The registry's reader checks the digest as it reaches the end.
		rc, err := layer.Compressed()
		if err != nil {
			return "", fmt.Errorf("%s: %w", s, err)
		}
		chart, err = io.ReadAll(io.LimitReader(rc, MaxArchive+1))
		rc.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", s, err)
		}
		if len(chart) > MaxArchive || int64(len(chart)) != l.Size {
			return "", fmt.Errorf("%s: its chart layer is not the %d bytes its manifest gives", s, l.Size)
		}
	}
	if chart == nil {
		return "", fmt.Errorf("%s holds no layer of type %s", s, HelmChartMediaType)
	}
	if _, err := loadChartArchive(chart); err != nil {
		return "", fmt.Errorf("%s: %w", s, err)
	}
	// .manifest last: OCIPin looks for it.
	if err := writeCached(p, chart, [2]string{".manifest", desc.Digest.Hex}); err != nil {
		return "", err
	}
	return desc.Digest.Hex, nil
}

// httpsOnly refuses any request that is not https.
type httpsOnly struct{ next http.RoundTripper }

func (t httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return nil, fmt.Errorf("%s: regionctl fetches charts over https alone", req.URL.Redacted())
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}
