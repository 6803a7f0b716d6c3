package render_test

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/render"
)

// TestChartLinksAreRefused: a symbolic link anywhere in charts/ (a chart
// itself, or a file nested deep in one) is refused, naming it: Argo CD
// and regionctl read charts from the repository itself.
func TestChartLinksAreRefused(t *testing.T) {
	chart := func() fstest.MapFS {
		return fstest.MapFS{
			"charts/app/Chart.yaml":            {Data: []byte("name: app\n")},
			"charts/app/values.yaml":           {Data: []byte("x: 1\n")},
			"charts/app/templates/deploy.yaml": {Data: []byte("kind: Deployment\n")},
		}
	}
	if got, err := render.ReadCharts(chart()); err != nil || strings.Join(got, " ") != "app" {
		t.Fatalf("a chart without links: %v, %v", got, err)
	}
	for _, link := range []string{"charts/other", "charts/app/templates/passwd.yaml", "charts/app/templates/deep/er/secret.yaml"} {
		fsys := chart()
		fsys[link] = &fstest.MapFile{Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink}
		if _, err := render.ReadCharts(fsys); err == nil || !strings.Contains(err.Error(), link) {
			t.Errorf("a link at %s: %v", link, err)
		}
	}
}
