package view

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// PlanSummaries prints what a plan-only run proposes, cluster by cluster:
// counts, then every resource destroyed or replaced.
func (p *Printer) PlanSummaries(plans []pipeline.PlanSummary) {
	for _, s := range plans {
		if s.New {
			fmt.Fprintf(p.W, "%s %s: new account; its first apply creates every resource\n", s.Cluster, s.Root)
			continue
		}
		fmt.Fprintf(p.W, "%s %s: %d to add, %d to change, %d to destroy (plan %s, sha256:%s, %s)\n", s.Cluster, s.Root, s.Add, s.Change, s.Destroy, short(s.ID), short(s.SHA256), s.Command)
		for _, r := range s.Resources {
			if r.Action == "delete" || r.Action == "replace" {
				fmt.Fprintf(p.W, "    %s %s\n", p.paint(red, r.Action), r.Address)
			}
		}
	}
}

// PlansMarkdown is a pull request comment of what a plan-only run
// proposes: a table of counts per cluster, then the resources each
// destroys or replaces. Every name is escaped; the comment fits GitHub's
// limit.
func PlansMarkdown(pipelineName, region string, plans []pipeline.PlanSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### regionctl pipeline %s --plan: %s\n\n", text(pipelineName), text(region))
	if len(plans) == 0 {
		b.WriteString("No Terraform root to plan.\n")
		return Fit(b.String(), MaxComment)
	}
	b.WriteString(planTableHead)
	destroys := 0
	for _, s := range plans {
		if !s.New && s.Destroy > 0 {
			destroys++
		}
		planRow(&b, s)
	}
	if destroys > 0 {
		b.WriteString("\n#### Destroyed or replaced\n\n")
		for _, s := range plans {
			for _, r := range s.Resources {
				if r.Action == "delete" || r.Action == "replace" {
					fmt.Fprintf(&b, "- %s %s: **%s** %s\n", code(s.Cluster), code(s.Root), text(r.Action), code(r.Address))
				}
			}
		}
	}
	b.WriteString("\nAn apply of these inputs applies exactly these plans; Terraform refuses one whose state changed since.\n")
	return Fit(b.String(), MaxComment)
}

const planTableHead = "| cluster | root | add | change | destroy | plan |\n|---|---|---:|---:|---:|---|\n"

// planRow is one plan's row of a plans table: its counts, a warning sign
// when it destroys, and the plan's id and the sha256 an approval binds.
func planRow(b *strings.Builder, s pipeline.PlanSummary) {
	if s.New {
		fmt.Fprintf(b, "| %s | %s | all | | | new account |\n", code(s.Cluster), code(s.Root))
		return
	}
	warn := ""
	if s.Destroy > 0 {
		warn = " ⚠"
	}
	fmt.Fprintf(b, "| %s | %s | %d | %d | %d%s | %s sha256:%s |\n", code(s.Cluster), code(s.Root), s.Add, s.Change, s.Destroy, warn, code(short(s.ID)), code(short(s.SHA256)))
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// PlanRun is one plan-only pipeline run as `regionctl pipeline ... --plan
// -o json` writes it.
type PlanRun struct {
	Pipeline  string                 `json:"pipeline"`
	Region    string                 `json:"region"`
	RequestID string                 `json:"request_id"`
	Plans     []pipeline.PlanSummary `json:"plans"`
	Error     string                 `json:"error"`
}

// plansCut is what a plans comment says when it was cut to fit.
const plansCut = "\n\n_This comment was cut to fit 65,536 characters; each run's `regionctl pipeline ... --plan -o markdown` shows all of its plans._\n"

// PlanRunsMarkdown is one pull request comment of every plan-only run of
// a change (CI recipes run one per affected cluster): the totals, then
// every resource destroyed or replaced and every run that did not plan,
// and only then the table of all plans, folded, each with the sha256 an
// approval binds. What matters most comes first, so a comment cut to fit
// GitHub's limit cuts the table. Every name is escaped.
func PlanRunsMarkdown(runs []PlanRun) string {
	type row struct {
		run PlanRun
		s   pipeline.PlanSummary
	}
	var rows []row
	var add, change, destroy, fresh int
	var failed []PlanRun
	for _, r := range runs {
		if r.Error != "" {
			failed = append(failed, r)
		}
		for _, s := range r.Plans {
			rows = append(rows, row{r, s})
			if s.New {
				fresh++
				continue
			}
			add, change, destroy = add+s.Add, change+s.Change, destroy+s.Destroy
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i].s, rows[j].s
		if (a.Destroy > 0) != (b.Destroy > 0) {
			return a.Destroy > 0
		}
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		return a.Root < b.Root
	})
	var b strings.Builder
	b.WriteString("### regionctl: the Terraform plans of this change\n\n")
	fmt.Fprintf(&b, "**%s in %s: %d to add, %d to change, %d to destroy**", plural1(len(rows), "plan"), plural1(len(runs), "run"), add, change, destroy)
	if fresh > 0 {
		fmt.Fprintf(&b, "; %s for new accounts, whose first apply creates every resource", plural1(fresh, "plan"))
	}
	b.WriteString("\n")
	if len(failed) > 0 {
		fmt.Fprintf(&b, "\n:x: **%s did not plan**: the table below is not the whole change.\n", plural1(len(failed), "run"))
	}
	if destroy > 0 {
		b.WriteString("\n#### :warning: Destroyed or replaced\n\n")
		for _, r := range rows {
			for _, rc := range r.s.Resources {
				if rc.Action == "delete" || rc.Action == "replace" {
					fmt.Fprintf(&b, "- %s %s: **%s** %s\n", code(r.s.Cluster), code(r.s.Root), text(rc.Action), code(rc.Address))
				}
			}
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n#### Runs that did not plan\n\n")
		for _, r := range failed {
			fmt.Fprintf(&b, "- %s pipeline of %s (request %s): %s\n", code(r.Pipeline), code(r.Region), code(r.RequestID), code(r.Error))
		}
	}
	if len(rows) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%s, those that destroy first</summary>\n\n", plural1(len(rows), "plan"))
		b.WriteString(planTableHead)
		for _, r := range rows {
			planRow(&b, r.s)
		}
		b.WriteString("\n</details>\n")
	}
	b.WriteString("\nAn apply of these inputs applies exactly these plans (an approval binds each plan's sha256); Terraform refuses one whose state changed since.\n")
	return fitWith(b.String(), MaxComment, plansCut)
}
