package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diff"
)

// TestMarkdownFitsOneComment: a change touching 2,000 files still yields one
// PR comment, the summary whole, file diffs cut with a note.
func TestMarkdownFitsOneComment(t *testing.T) {
	r := &diff.Report{Base: "abc (main)", Head: "def (HEAD)"}
	for i := 0; i < 2000; i++ {
		id := fmt.Sprintf("r%03d/mc01", i)
		r.Affected = append(r.Affected, diff.AffectedCluster{ID: id, Sector: "s1", Pipeline: "regional"})
		r.Files = append(r.Files, diff.FileDiff{Path: id + ".tfvars.json", Status: "changed",
			Unified: "--- a\n+++ b\n@@ -1 +1 @@\n-\"eks_version\": \"1.30\"\n+\"eks_version\": \"1.31\"\n" + strings.Repeat(" context line\n", 20)})
	}
	r.Sectors = []diff.SectorSummary{{Name: "s1", Environment: "production", Regions: []string{"r000"}, Changed: []string{"x"}}}
	r.Changes = []diff.ValueChange{{Path: "eks.version", Old: `"1.30"`, New: `"1.31"`, Origin: "config/sectors/s1.yaml:12:12", OriginLayer: "sector", Clusters: []string{"r000/mc01"}, Sectors: []string{"s1"}}}
	md := DiffMarkdown(r)
	if len(md) > MaxComment {
		t.Fatalf("comment is %d characters", len(md))
	}
	if !strings.Contains(md, "file diffs (") || !strings.Contains(md, "left out to fit one comment") {
		t.Error("the comment does not say what it left out")
	}
	if !strings.Contains(md, "`eks.version`: `\"1.30\"` → `\"1.31\"`") || !strings.Contains(md, "| s1 | production |") {
		t.Error("the summary was cut before the file diffs")
	}
	small := DiffMarkdown(&diff.Report{Base: "a", Head: "b", Files: r.Files[:2]})
	if strings.Contains(small, "left out") || strings.Count(small, "```diff") != 2 {
		t.Errorf("a small change lost its diffs:\n%s", small)
	}
}

// TestMarkdownFitsWithThousandsOfValues: the value table is cut too.
func TestMarkdownFitsWithThousandsOfValues(t *testing.T) {
	r := &diff.Report{Base: "a", Head: "b"}
	for i := 0; i < 5000; i++ {
		r.Changes = append(r.Changes, diff.ValueChange{Path: fmt.Sprintf("components.c%04d.values.replicas", i), Old: "1", New: "2",
			Origin: "config/global/10-components.yaml:12:5", OriginLayer: "global", Clusters: []string{"us-east-1/mc01"}, Sectors: []string{"s1"}})
	}
	r.Files = []diff.FileDiff{{Path: "x", Status: "changed", Unified: "+a\n"}}
	for i := 0; i < 40; i++ {
		r.Sectors = append(r.Sectors, diff.SectorSummary{Name: "s1", Environment: "production", Regions: []string{"us-east-1"}, Changed: []string{"us-east-1/mc01"}})
	}
	md := DiffMarkdown(r)
	if len(md) > MaxComment {
		t.Fatalf("comment is %d characters", len(md))
	}
	if !strings.Contains(md, "cut to fit 65,536 characters") || strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Error("the cut comment does not say so or leaves a section open")
	}
}

// TestMarkdownRevealsInvisibleCharacters: a bidirectional control or a
// zero-width character (a hand edit of deploy/ can bring one) is shown as
// its code point wherever the comment quotes text.
func TestMarkdownRevealsInvisibleCharacters(t *testing.T) {
	trojan := "admin\u202E\u2066 // not"
	for _, got := range []string{code(trojan), text(trojan), reveal("+  owner: team\u200Bx")} {
		if strings.ContainsFunc(got, config.Invisible) || !strings.Contains(got, "⟨U+") {
			t.Errorf("%q", got)
		}
	}
}
