package fleet_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/schema"
)

// layerFile is where a test puts a value for a layer: a file the base fleet
// reads, overlaid.
var layerFile = map[string]struct{ file, head string }{
	"global":  {"config/global/zz-walk.yaml", ""},
	"sector":  {"config/sectors/prod.yaml", "order: 1\nenvironment: production\n"},
	"region":  {"config/regions/us-east-1.yaml", "sector: prod\n"},
	"cluster": {"config/clusters/us-east-1/mc01.yaml", "type: management\n"},
}

// failing lists values the schema must refuse at a field, by what the
// reference says the field allows.
func failing(f schema.Field) []string {
	t := f.Type
	switch {
	case strings.HasPrefix(t, "a mapping"):
		return []string{"[1, 2]"}
	case strings.HasPrefix(t, "a list"):
		return []string{"{not: a-list}"}
	case t == "bool":
		return []string{`"maybe"`}
	case strings.Contains(t, "int") || strings.Contains(t, "uint"):
		out := []string{`"many"`}
		for _, b := range regexp.MustCompile(`[<>]=?\s*([0-9]+)`).FindAllStringSubmatch(t, -1) {
			if strings.HasPrefix(b[0], "<") {
				out = append(out, fmt.Sprint(atoi(b[1])+1))
			} else if atoi(b[1]) > 0 {
				out = append(out, fmt.Sprint(atoi(b[1])-1))
			}
		}
		return out
	case t == "string": // any string: only another kind fails
		return []string{"{a: b}"}
	default: // strings: a pattern, a choice, a named type
		return []string{`"Not A Valid Value!"`, "{a: b}"}
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// Every constraint of the schema, given a value it refuses, gives an error
// at the value's file:line that names the field in the user's words (and
// the bound it broke, for a number), never CUE's internals.
func TestEveryConstraintSpeaksPlainly(t *testing.T) {
	fields, err := schema.Reference()
	if err != nil {
		t.Fatal(err)
	}
	checker := newChecker(t)
	// Identity keys are checked against the file's path, not only the
	// schema: their own tests cover them (identity-*.txtar).
	identity := map[string]bool{"cluster": true, "region": true, "sector": true, "type": true, "environment": true, "order": true}
	walked := 0
	for _, f := range fields {
		if identity[f.Path] {
			continue
		}
		path := strings.Split(strings.ReplaceAll(f.Path, "<name>", "x"), ".")
		lf := layerFile[f.Layers[len(f.Layers)-1]]
		for _, bad := range failing(f) {
			var b strings.Builder
			b.WriteString(lf.head)
			for i, p := range path[:len(path)-1] {
				fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", i), p)
			}
			line := strings.Count(b.String(), "\n") + 1
			fmt.Fprintf(&b, "%s%s: %s\n", strings.Repeat("  ", len(path)-1), path[len(path)-1], bad)
			fsys := baseFleet(t)
			fsys[lf.file] = &fstest.MapFile{Data: []byte(b.String())}
			_, diags := fleet.Load(fsys, "config", checker)
			walked++
			var at []diag.Diagnostic
			for _, d := range diags {
				if d.Severity == diag.Error && d.Pos.File == lf.file && d.Pos.Line == line {
					at = append(at, d)
				}
			}
			if len(at) == 0 {
				t.Errorf("%s: %s: %s is refused nowhere at %s:%d: %v", f.Path, lf.file, bad, lf.file, line, diags)
				continue
			}
			msg := ""
			for _, d := range at {
				msg += d.Summary + "\n" + d.Detail + "\n"
			}
			if m := rawCUE.FindString(msg); m != "" {
				t.Errorf("%s = %s: raw CUE (%q) reaches the user:\n%s", f.Path, bad, m, msg)
			}
			dotted := strings.Join(path, ".")
			if !strings.Contains(msg, dotted) && !strings.Contains(msg, `"`+path[len(path)-1]+`"`) {
				t.Errorf("%s = %s: the message does not name the field:\n%s", f.Path, bad, msg)
			}
			if n := regexp.MustCompile(`^[0-9]+$`).FindString(bad); n != "" {
				for _, bound := range regexp.MustCompile(`[<>]=?\s*([0-9]+)`).FindAllStringSubmatch(f.Type, -1) {
					if !strings.Contains(msg, bound[1]) {
						t.Errorf("%s = %s: the message does not give the bound %s:\n%s", f.Path, bad, bound[1], msg)
					}
				}
			}
		}
	}
	if walked < 80 {
		t.Errorf("walked %d values: the schema walk lost fields", walked)
	}
	t.Logf("%d fields, %d failing values", len(fields), walked)
}
