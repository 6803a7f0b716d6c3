package manifests

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
)

// TestPullOCITakesAHelmChart: PullOCI caches the chart layer of a Helm
// chart's manifest at a tag, over https alone, and OCIChart reads it back
// with the manifest's digest; a pin the tag does not name, an artifact
// that is no Helm chart, a tag the registry lacks and plain http are
// refused and nothing is cached.
func TestPullOCITakesAHelmChart(t *testing.T) {
	s, push := manifeststest.OCIRegistry(t)
	chart := manifeststest.Pack(t, filepath.Join("testdata", "c"), "fluent-bit", "1.2.3")
	manifest := push("charts/fluent-bit", "1.2.3", HelmConfigMediaType, chart, HelmChartMediaType)
	push("charts/image", "1.0.0", string(types.OCIConfigJSON), chart, string(types.OCILayer))
	host := strings.TrimPrefix(s.URL, "https://")
	c := Cache{Dir: t.TempDir()}
	ctx := context.Background()
	src := OCISource{URL: "oci://" + host + "/charts/fluent-bit", Revision: "1.2.3"}
	got, err := c.PullOCI(ctx, src, s.Client().Transport, "")
	if err != nil || got != manifest {
		t.Fatalf("pull: %s, %v (the manifest is %s)", got, err, manifest)
	}
	ch, pin, err := c.OCIChart(src)
	if err != nil || pin != manifest || c.OCIPin(src) != manifest {
		t.Fatalf("read back: %s, %v", pin, err)
	}
	if objs, err := ch.Render(Release{Name: "fb", Namespace: "ns"}); err != nil || len(objs) != 5 {
		t.Fatalf("the cached chart renders %d objects: %v", len(objs), err)
	}
	byDigest := OCISource{URL: src.URL, Revision: "sha256:" + manifest}
	if got, err := c.PullOCI(ctx, byDigest, s.Client().Transport, manifest); err != nil || got != manifest {
		t.Errorf("by digest: %s, %v", got, err)
	}
	plain := &http.Transport{}
	for name, tc := range map[string]struct {
		src       OCISource
		transport http.RoundTripper
		pin, want string
	}{
		"a moved tag":              {src, s.Client().Transport, strings.Repeat("0", 64), "the tag moved"},
		"an image, not a chart":    {OCISource{"oci://" + host + "/charts/image", "1.0.0"}, s.Client().Transport, "", "is not a Helm chart"},
		"a tag the registry lacks": {OCISource{src.URL, "9.9.9"}, s.Client().Transport, "", "MANIFEST_UNKNOWN"},
		"no TLS it trusts":         {OCISource{src.URL, "1.2.3-rc"}, plain, "", "https alone"},
		"a URL that is no OCI":     {OCISource{"https://" + host + "/charts/fluent-bit", "1.2.3"}, s.Client().Transport, "", "oci://<registry>/<repository>"},
		"a revision that is none":  {OCISource{src.URL, "1.2.3/../x"}, s.Client().Transport, "", "not a tag or a sha256 digest"},
	} {
		t.Run(name, func(t *testing.T) {
			cache := Cache{Dir: t.TempDir()}
			_, err := cache.PullOCI(ctx, tc.src, tc.transport, tc.pin)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if cache.OCIPin(tc.src) != "" {
				t.Error("refused, yet cached")
			}
		})
	}
}
