package argocd_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/render/argocd"
)

// TestChartValuesRefuseWhatTheyCannotHold: a chart's values.yaml and
// values.schema.json are files of the fleet repository, so hostile: a
// schema that refers outside itself (which Helm's loader would fetch) is
// refused, as are a schema or defaults that do not parse, each naming the
// file; a chart without either checks nothing.
func TestChartValuesRefuseWhatTheyCannotHold(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"a remote $ref": {map[string]string{"values.schema.json": `{"properties": {"x": {"$ref": "https://example.com/evil.json"}}}`},
			"charts/app/values.schema.json"},
		"a file $ref": {map[string]string{"values.schema.json": `{"$ref": "file:///etc/passwd"}`},
			"charts/app/values.schema.json"},
		"a schema that is not JSON": {map[string]string{"values.schema.json": `{"type": `}, "charts/app/values.schema.json"},
		"a schema of an unknown type": {map[string]string{"values.schema.json": `{"type": "integr"}`},
			"charts/app/values.schema.json"},
		"defaults that are not YAML": {map[string]string{"values.yaml": "a: [1, 2\n"}, "charts/app/values.yaml"},
		"a schema of 11 MiB":         {map[string]string{"values.schema.json": `{"description": "` + strings.Repeat("x", 11<<20) + `"}`}, "charts/app/values.schema.json is 11534"},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{"charts/app/Chart.yaml": {Data: []byte("name: app\n")}}
			for f, b := range tc.files {
				fsys["charts/app/"+f] = &fstest.MapFile{Data: []byte(b)}
			}
			if _, err := argocd.ReadChartValues(fsys, "app"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
	cv, err := argocd.ReadChartValues(fstest.MapFS{"charts/app/Chart.yaml": {Data: []byte("name: app\n")}}, "app")
	if err != nil {
		t.Fatal(err)
	}
	if found, err := cv.Check(map[string]any{"anything": []any{1, "two"}}); err != nil || found != nil {
		t.Errorf("a chart without a schema: %v, %v", found, err)
	}
}

// TestCoalesceIsHelms: the values a schema sees are the Application's
// coalesced over the chart's defaults, as Helm coalesces them: maps merged
// key by key, anything else replaced, a null removing the default.
func TestCoalesceIsHelms(t *testing.T) {
	fsys := fstest.MapFS{
		"charts/app/values.yaml": {Data: []byte("replicas: 1\nresources:\n  cpu: 100m\n  memory: 1Gi\nlist: [a, b]\n")},
		"charts/app/values.schema.json": {Data: []byte(`{"type": "object", "required": ["replicas"], "properties": {
			"replicas": {"type": "integer"},
			"resources": {"type": "object", "required": ["cpu", "memory"], "additionalProperties": false, "properties": {"cpu": {"type": "string"}, "memory": {"type": "string"}}},
			"list": {"type": "array", "maxItems": 1}, "extra": {"type": "string"}}}`)},
	}
	cv, err := argocd.ReadChartValues(fsys, "app")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		values map[string]any
		paths  string
	}{
		"a nested map merges":       {map[string]any{"resources": map[string]any{"cpu": "1"}, "list": []any{"x"}}, ""},
		"a list replaces":           {map[string]any{"list": []any{"x", "y"}}, "list"},
		"the default list stands":   {map[string]any{}, "list"},
		"a null removes a default":  {map[string]any{"replicas": nil, "list": []any{}}, "(root)"},
		"an unknown key in a merge": {map[string]any{"resources": map[string]any{"gpu": 1}, "list": []any{}}, "resources"},
		// Helm removes a null only where the chart has a default.
		"a null without a default stays":    {map[string]any{"extra": nil, "list": []any{}}, "extra"},
		"a nested null without a default":   {map[string]any{"resources": map[string]any{"gpu": nil}, "list": []any{}}, "resources"},
		"a nested null removes its default": {map[string]any{"resources": map[string]any{"cpu": nil}, "list": []any{}}, "resources"},
	} {
		found, err := cv.Check(tc.values)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range found {
			p := strings.Join(f.Path, ".")
			if p == "" {
				p = "(root)"
			}
			paths = append(paths, p)
		}
		if got := strings.Join(paths, " "); got != tc.paths {
			t.Errorf("%s: findings at %q, want %q (%v)", name, got, tc.paths, found)
		}
	}
}

// TestCyclicSchemasEndAndRefuse: a schema whose references loop neither
// hangs the render nor lets values through.
func TestCyclicSchemasEndAndRefuse(t *testing.T) {
	for _, s := range []string{`{"$ref": "#"}`, `{"allOf": [{"$ref": "#/allOf/0"}]}`,
		`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`} {
		cv, err := argocd.ReadChartValues(fstest.MapFS{"charts/app/values.schema.json": {Data: []byte(s)}}, "app")
		if err != nil {
			continue // refused when read: as good
		}
		if found, err := cv.Check(map[string]any{"a": 1}); err == nil && len(found) == 0 {
			t.Errorf("%s: values pass a schema that loops", s)
		}
	}
}
