package secrets

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestNoFalseAlarmsInTheRepository: no string of the example fleets,
// their rendered deploy/ trees, the charts and the Tekton resources looks
// like a secret by shape (the loader would refuse them). Extra roots:
// REGIONCTL_SECRET_FP_ROOTS (colon separated) scans other trees and only
// reports.
func TestNoFalseAlarmsInTheRepository(t *testing.T) {
	n, flagged := 0, 0
	roots := []string{"../../config", "../../golden", "../../charts", "../../deploy", "../../pipelines", "../../docs"}
	extra := strings.Split(os.Getenv("REGIONCTL_SECRET_FP_ROOTS"), ":")
	for _, root := range append(roots, extra...) {
		if root == "" {
			continue
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json")) || strings.Contains(p, "testdata/gitleaks") {
				return nil
			}
			b, _ := os.ReadFile(p)
			var docs []any
			dec := yaml.NewDecoder(strings.NewReader(string(b)))
			for {
				var v any
				if dec.Decode(&v) != nil {
					break
				}
				docs = append(docs, v)
			}
			var walk func(k string, v any)
			walk = func(k string, v any) {
				switch x := v.(type) {
				case map[string]any:
					for kk, vv := range x {
						walk(kk, vv)
					}
				case []any:
					for _, vv := range x {
						walk("", vv)
					}
				case string:
					n++
					if w := findShape(x); w != "" && len(x) >= 16 {
						flagged++
						t.Logf("%s: %s=%.80q: %s", p, k, x, w)
						if strings.HasPrefix(p, "../../") {
							t.Errorf("%s: %s looks like %s", p, k, w)
						}
					}
				}
			}
			for _, d := range docs {
				walk("", d)
			}
			return nil
		})
	}
	t.Logf("%d strings, %d taken for secrets", n, flagged)
	if n < 10000 {
		t.Errorf("only %d strings scanned", n)
	}
}
