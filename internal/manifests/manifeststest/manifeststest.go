// Package manifeststest packs charts for tests, as helm package does.
package manifeststest

import (
	"os"
	"testing"

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
