package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/diff"
)

// docs/diff-json.md promises lists are never null: a report whose sector
// summaries and changes hold nil slices still writes [] for each.
func TestJSONListsAreNeverNull(t *testing.T) {
	r := &diff.Report{
		Sectors:  []diff.SectorSummary{{Name: "stage", Regions: []string{"eu-west-1"}}},
		Changes:  []diff.ValueChange{{Path: "eks.version"}},
		Affected: []diff.AffectedCluster{{ID: "eu-west-1/mc01"}},
	}
	var b bytes.Buffer
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "null") {
		t.Errorf("the JSON holds null:\n%s", b.String())
	}
	for _, want := range []string{`"added": []`, `"clusters": []`, `"reasons": []`, `"files": []`, `"drift": []`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
	if r.Sectors[0].Added != nil {
		t.Error("JSON changed the report it wrote")
	}
}

func TestHeadlineCounts(t *testing.T) {
	for n, want := range map[int]string{0: "0 clusters destroyed", 1: "1 cluster destroyed", 2: "2 clusters destroyed"} {
		r := &diff.Report{Files: []diff.FileDiff{{Path: "x"}}, Destroyed: make([]diff.Cluster, n)}
		if got := Headline(r); !strings.Contains(got, want) {
			t.Errorf("%d destroyed: %q, want %q in it", n, got, want)
		}
	}
}

// Strings from config reach the pull request comment as text: none of them
// can close a code span, a fence or a <details>, or inject HTML.
func TestMarkdownKeepsHostileStringsAsText(t *testing.T) {
	hostile := "a`b``</details><img src=x onerror=alert(1)>|c\n```\n# heading [link](http://x)"
	r := &diff.Report{
		Base: "main", Head: "HEAD",
		Sectors: []diff.SectorSummary{{Name: "stage</summary><b>x", Environment: "staging", Regions: []string{"eu-west-1"}, Changed: []string{"eu-west-1/mc01"}}},
		Changes: []diff.ValueChange{{Path: "components.x.values.note", Old: "(unset)", New: hostile, Origin: "config/sectors/stage.yaml:3:9",
			OriginLayer: "sector", Clusters: []string{"eu-west-1/mc01"}, Sectors: []string{"stage</summary><b>x"}}},
		Waves:    []diff.SkippedWave{{Key: "eks.version", Value: hostile, Sector: "prod", Missing: []string{"stage"}, Exception: hostile}},
		Files:    []diff.FileDiff{{Path: "staging/eu-west-1/argocd/mc01/apps/x.yaml", Status: "changed", Unified: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+```\n+</details>\n+<img src=x>\n"}},
		Affected: []diff.AffectedCluster{{ID: "eu-west-1/mc01"}},
	}
	md := diffMarkdown(r)
	// Outside code spans and the file's fence, nothing is markup.
	prose := withoutCode(strings.ReplaceAll(md, "+<img src=x>", ""))
	for _, bad := range []string{"<img", "</summary><b>", "</details><img", "\n# heading", "[link]"} {
		if strings.Contains(prose, bad) {
			t.Errorf("the comment holds %q as markup:\n%s", bad, prose)
		}
	}
	// Our own <details> blocks are the only ones: one per sector and file.
	if open, closed := strings.Count(md, "<details>"), strings.Count(md, "\n</details>\n"); open != 2 || closed != 2 {
		t.Errorf("%d <details> opened, %d closed at a line start; want 2 and 2:\n%s", open, closed, md)
	}
	// The file's diff sits in a fence its content cannot close.
	if !strings.Contains(md, "````diff\n") || !strings.Contains(md, "+<img src=x>\n````\n") {
		t.Errorf("the file diff is not fenced beyond its content:\n%s", md)
	}
	// Every table row keeps its four cells.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| `") || strings.HasPrefix(line, "| ``") {
			if n := strings.Count(line, "|") - strings.Count(line, "\\|"); n != 5 {
				t.Errorf("table row with %d cell borders: %s", n, line)
			}
		}
	}
}

// withoutCode drops inline code spans: a run of n backticks up to the next
// run of exactly n.
func withoutCode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(s) && s[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 || n >= 3 && (i == 0 || s[i-1] == '\n') {
			b.WriteString(s[i : i+n]) // a fence, or an unclosed run
			i += n
			continue
		}
		i = end
	}
	return b.String()
}

// A change that moves clusters to an older version of an ordered key is
// called a downgrade in every form of the review.
func TestDowngradesAreCalledOut(t *testing.T) {
	r := &diff.Report{Changes: []diff.ValueChange{
		{Path: "eks.version", Old: `"1.32"`, New: `"1.31"`, Clusters: []string{"us-west-2/mc01"}, Rollout: true},
		{Path: "eks.version", Old: `"1.31"`, New: `"1.32"`, Clusters: []string{"us-east-1/mc01"}, Rollout: true},
		{Path: "hypershift.operator_image", Old: `"a@sha256:1"`, New: `"a@sha256:0"`, Clusters: []string{"us-east-1/mc01"}, Rollout: true},
	}, Affected: []diff.AffectedCluster{{ID: "us-west-2/mc01"}}}
	orders := map[string]string{"eks.version": "semver", "hypershift.operator_image": ""}
	diff.MarkDowngrades(r, orders)
	if !r.Changes[0].Downgrade || r.Changes[1].Downgrade || r.Changes[2].Downgrade {
		t.Fatalf("downgrade flags: %v %v %v", r.Changes[0].Downgrade, r.Changes[1].Downgrade, r.Changes[2].Downgrade)
	}
	var b bytes.Buffer
	(&Printer{W: &b}).DiffText(r)
	if !strings.Contains(b.String(), "DOWNGRADES\n  downgrade eks.version \"1.32\" → \"1.31\" on us-west-2/mc01") {
		t.Errorf("text:\n%s", b.String())
	}
	if md := diffMarkdown(r); !strings.Contains(md, "#### :warning: Downgrades") || strings.Count(md, "**downgrade**") != 1 {
		t.Errorf("markdown:\n%s", md)
	}
	b.Reset()
	if err := JSON(&b, r); err != nil || strings.Count(b.String(), `"downgrade": true`) != 1 {
		t.Errorf("json: %v\n%s", err, b.String())
	}
}
