package view

import (
	"fmt"

	"github.com/regionctl/regionctl/internal/render/argocd"
)

// AppSetExpansion prints the Applications of one ApplicationSet by step.
func (p *Printer) AppSetExpansion(file string, steps []string, apps []argocd.Application) {
	fmt.Fprintf(p.W, "%s  %s\n", p.paint(bold, file), p.paint(dim, fmt.Sprintf("%d Applications in %d steps", len(apps), len(steps))))
	step := 0
	for _, a := range apps {
		if a.Step != step {
			step = a.Step
			fmt.Fprintf(p.W, "  step %d: sector %s\n", step, a.Sector)
		}
		fmt.Fprintf(p.W, "    %-52s %s  %s\n", a.Name, a.Cluster, p.paint(dim, a.ValuesFile))
	}
}
