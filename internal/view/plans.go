package view

import (
	"fmt"
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
	b.WriteString("| cluster | root | add | change | destroy | plan |\n|---|---|---:|---:|---:|---|\n")
	destroys := 0
	for _, s := range plans {
		if s.New {
			fmt.Fprintf(&b, "| %s | %s | all | | | new account |\n", code(s.Cluster), code(s.Root))
			continue
		}
		warn := ""
		if s.Destroy > 0 {
			warn = " ⚠"
			destroys++
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d%s | %s sha256:%s |\n", code(s.Cluster), code(s.Root), s.Add, s.Change, s.Destroy, warn, code(short(s.ID)), code(short(s.SHA256)))
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

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
