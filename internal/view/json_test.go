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
