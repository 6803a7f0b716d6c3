package view

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// PipelinePlan prints a pipeline's steps in order.
func (p *Printer) PipelinePlan(plan *pipeline.Plan) {
	fmt.Fprintf(p.W, "%s %s %s\n", p.paint(bold, plan.Pipeline+" pipeline of "+plan.Region), p.paint(dim, "request"), plan.RequestID)
	for i, s := range plan.Steps {
		fmt.Fprintf(p.W, "%3d. %-20s %-12s %s\n", i+1, s.Cluster, p.paint(bold, s.Name), s.Action)
		detail := func(k, v string) {
			if v != "" {
				fmt.Fprintf(p.W, "       %-14s %s\n", p.paint(dim, k), v)
			}
		}
		detail("account", s.Account)
		detail("account id", s.AccountRef)
		detail("ou", s.OU)
		detail("role", s.RoleARN)
		detail("external id", s.ExternalID)
		detail("session", s.SessionName)
		detail("root", s.Root)
		detail("var file", s.VarFile)
		detail("command", s.Command)
		if len(s.Backend) > 0 {
			var kv []string
			for k, v := range s.Backend {
				kv = append(kv, k+"="+v)
			}
			sort.Strings(kv)
			detail("backend", strings.Join(kv, " "))
		}
		for _, c := range s.Calls {
			detail("api call", c)
		}
	}
}
