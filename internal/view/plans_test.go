package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/mdjudge"
	"github.com/regionctl/regionctl/internal/pipeline"
)

const hostileName = "mc`01|</details><img src=x onerror=alert(1)>\n# heading"

func planRuns() []PlanRun {
	return []PlanRun{
		{Pipeline: "regional", Region: "eu-west-1", RequestID: "r1", Plans: []pipeline.PlanSummary{
			{Cluster: "eu-west-1/mc02", Root: "management-cluster", ID: "p2", SHA256: "aa", Add: 1},
			{Cluster: "eu-west-1/" + hostileName, Root: "management-cluster", ID: "p1", SHA256: "bb", Add: 2, Change: 1, Destroy: 1,
				Resources: []pipeline.ResourceChange{{Address: "aws_eks_cluster.this", Action: "replace"}, {Address: "aws_s3_bucket.x", Action: "update"}}},
		}},
		{Pipeline: "central", Region: "us-east-1", RequestID: "r2", Plans: []pipeline.PlanSummary{{Cluster: "us-east-1/regional", Root: "regional-cluster", New: true}}},
		{Pipeline: "regional", Region: "us-east-2", RequestID: "r3", Error: "terraform plan: `x` </details><script>alert(1)</script>"},
	}
}

// TestPlanRunsComment: one comment of many runs adds up their plans, puts
// what is destroyed or replaced and the runs that did not plan before the
// table, orders the table destroying plans first, and keeps every name and
// error text.
func TestPlanRunsComment(t *testing.T) {
	md := PlanRunsMarkdown(planRuns())
	for _, want := range []string{
		"**3 plans in 3 runs: 3 to add, 1 to change, 1 to destroy**; 1 plan for new accounts",
		":x: **1 run did not plan**",
		"**replace** `aws_eks_cluster.this`",
		"#### Runs that did not plan",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "aws_s3_bucket.x") {
		t.Error("an updated resource is listed among the destroyed")
	}
	destroyed, failed, table := strings.Index(md, "Destroyed or replaced"), strings.Index(md, "Runs that did not plan"), strings.Index(md, "| cluster |")
	if destroyed < 0 || failed < destroyed || table < failed {
		t.Errorf("destroyed at %d, failed runs at %d, table at %d: want that order", destroyed, failed, table)
	}
	rows := strings.Split(md[table:], "\n")[2:5]
	if !strings.Contains(rows[0], "1 ⚠") || !strings.Contains(rows[1], "mc02") || !strings.Contains(rows[2], "new account") {
		t.Errorf("the table is not ordered destroying plans first, then by cluster:\n%s", strings.Join(rows, "\n"))
	}
	prose := withoutCode(md)
	for _, bad := range []string{"<img", "<script>", "\n# heading"} {
		if strings.Contains(prose, bad) {
			t.Errorf("the comment holds %q as markup:\n%s", bad, prose)
		}
	}
	if open, closed := strings.Count(md, "<details>"), strings.Count(md, "\n</details>\n"); open != 1 || closed != 1 {
		t.Errorf("%d <details> opened, %d closed; want 1 and 1", open, closed)
	}
}

// TestPlanRunsCommentFitsAtFleetScale: 480 runs, each destroying
// resources with long addresses, still make one comment, cut at the
// table's end or in the destroyed list, every <details> closed, saying so.
func TestPlanRunsCommentFitsAtFleetScale(t *testing.T) {
	var runs []PlanRun
	for i := 0; i < 480; i++ {
		s := pipeline.PlanSummary{Cluster: fmt.Sprintf("region-%03d/mc01", i), Root: "management-cluster", ID: fmt.Sprintf("plan-%d", i), SHA256: "cafe", Add: 3, Destroy: 2}
		for j := 0; j < 2; j++ {
			s.Resources = append(s.Resources, pipeline.ResourceChange{Address: fmt.Sprintf("module.cluster.aws_eks_node_group.workers[\"pool-%02d-%s\"]", j, strings.Repeat("x", 60)), Action: "delete"})
		}
		runs = append(runs, PlanRun{Pipeline: "regional", Region: fmt.Sprintf("region-%03d", i), RequestID: "r", Plans: []pipeline.PlanSummary{s}})
	}
	md := PlanRunsMarkdown(runs)
	if len(md) > MaxComment {
		t.Fatalf("%d characters, over %d", len(md), MaxComment)
	}
	if !strings.Contains(md, "**480 plans in 480 runs: 1440 to add, 0 to change, 960 to destroy**") || !strings.Contains(md, "was cut to fit") {
		t.Errorf("the totals or the cut note are missing:\n%s", md[:min(len(md), 600)])
	}
	if open, closed := strings.Count(md, "<details>"), strings.Count(md, "\n</details>\n"); open != closed {
		t.Errorf("%d <details> opened, %d closed", open, closed)
	}
}

// TestPlanRunsCommentAsGitHubShowsIt: the second judge, markdown-it with
// GitHub's extensions and raw HTML on (tools/markdown --gfm), shows the
// hostile names and error as text: no tag of theirs reaches the page, and
// the table keeps one row per plan.
func TestPlanRunsCommentAsGitHubShowsIt(t *testing.T) {
	page := mdjudge.Render(t, PlanRunsMarkdown(planRuns()), true)
	for _, bad := range []string{"<img", "<script", "<h1"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %s:\n%s", bad, page)
		}
	}
	if n := strings.Count(page, "<tr>"); n != 4 {
		t.Errorf("%d table rows, want a header and 3 plans:\n%s", n, page)
	}
	if !strings.Contains(page, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the hostile name is not shown as text:\n%s", page)
	}
}
