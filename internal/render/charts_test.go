package render_test

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
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

// repoFS is the repository's example fleet (config/, charts/, pipelines/)
// as a MapFS a test may change.
func repoFS(t *testing.T) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	for _, dir := range []string{"config", "charts", "pipelines"} {
		err := fs.WalkDir(os.DirFS("../.."), dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(os.DirFS("../.."), p)
			out[p] = &fstest.MapFile{Data: b}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestComponentValuesAreHeldToTheirChartsSchema: a value the chart's
// values.schema.json refuses (Helm would refuse to render the chart, and
// the Application never sync) fails the render at the value's file and
// line; a value the schema allows passes; a changed schema is part of every
// cluster's input identity, so a review checks every cluster again.
func TestComponentValuesAreHeldToTheirChartsSchema(t *testing.T) {
	checker, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	region := "config/regions/eu-west-1.yaml"
	for _, tc := range []struct {
		name, values, want string
	}{
		{"a string for an integer", "      replicas: three\n", `eu-west-1/regional: component platform-api's value values.replicas fails charts/platform-api/values.schema.json: got string, want integer`},
		{"under the minimum", "      replicas: 0\n", `eu-west-1/regional: component platform-api's value values.replicas fails charts/platform-api/values.schema.json: minimum: got 0, want 1`},
		{"a pattern", "      database:\n        instance_class: large\n", `eu-west-1/regional: component platform-api's value values.database.instance_class fails charts/platform-api/values.schema.json: '`},
		{"allowed", "      replicas: 4\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := repoFS(t)
			b := string(fsys[region].Data)
			// The value's line: the last of those added.
			line := strings.Count(b, "\n") + 3 + strings.Count(tc.values, "\n")
			fsys[region] = &fstest.MapFile{Data: []byte(b + "components:\n  platform-api:\n    values:\n" + tc.values)}
			_, out, diags, err := render.FromFS(fsys, checker, render.Options{Renderer: "test"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range diags {
				if strings.Contains(d.Summary, "values.schema.json") {
					got = append(got, d.Pos.File+":"+strconv.Itoa(d.Pos.Line)+" "+d.Summary)
				}
			}
			if tc.want == "" {
				if len(got) > 0 || out == nil {
					t.Fatalf("an allowed value refused: %v %v", got, diags)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], region+":"+strconv.Itoa(line)+" "+tc.want) {
				t.Fatalf("got %q, want one finding at %s:%d: %s", got, region, line, tc.want)
			}
			if out != nil {
				t.Error("a render with a refused value wrote its output")
			}
		})
	}
	input := func(fsys fstest.MapFS) string {
		_, out, diags, err := render.FromFS(fsys, checker, render.Options{Renderer: "test"})
		if err != nil || out == nil {
			t.Fatal(err, diags)
		}
		for _, c := range out.Index.Clusters {
			if c.ID == "us-east-1/mc01" {
				return c.Input
			}
		}
		t.Fatal("no us-east-1/mc01")
		return ""
	}
	fsys := repoFS(t)
	before := input(fsys)
	schemaFile := "charts/observability/values.schema.json"
	fsys[schemaFile] = &fstest.MapFile{Data: []byte(strings.Replace(string(fsys[schemaFile].Data), `"title": "`, `"title": "changed: `, 1))}
	if input(fsys) == before {
		t.Error("a changed values.schema.json left the cluster's input identity as it was")
	}
}
