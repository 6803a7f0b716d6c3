package view

import (
	"fmt"

	"github.com/regionctl/regionctl/internal/render/argocd"
)

// Applications prints the Applications of the fleet's Argo CDs, grouped by
// cluster: component, revision, chart source and namespace, and the
// RollingSync step of the central topology.
func (p *Printer) Applications(topology string, apps []argocd.Planned) {
	fmt.Fprintf(p.W, "%s  %s\n", p.paint(bold, "Argo CD topology "+topology), p.paint(dim, fmt.Sprintf("%d Applications", len(apps))))
	cluster := ""
	for _, a := range apps {
		if a.Cluster != cluster {
			cluster = a.Cluster
			fmt.Fprintf(p.W, "  %s  %s\n", p.paint(bold, cluster), p.paint(dim, "sector "+a.Sector))
		}
		src := a.RepoURL
		if a.Chart != "" {
			src += " chart " + a.Chart
		} else if a.Path != "" {
			src += " path " + a.Path
		}
		step := ""
		if a.Step > 0 {
			step = fmt.Sprintf("  step %d", a.Step)
		}
		fmt.Fprintf(p.W, "    %-28s %-30s %s%s\n", a.Component, a.Revision, p.paint(dim, src+" → "+a.Namespace), step)
	}
}
