package view

import (
	"fmt"

	"github.com/regionctl/regionctl/internal/config"
)

// Explain prints a cluster's effective values, each with the layer that set
// it and the values it overrode.
func (p *Printer) Explain(id, typ, sector, env string, partial bool, entries []config.Explained) {
	fmt.Fprintf(p.W, "%s  %s\n", p.paint(bold, id), p.paint(dim, fmt.Sprintf("type=%s sector=%s environment=%s", typ, sector, env)))
	if partial {
		fmt.Fprintln(p.W, p.paint(yellow, "(partial: this cluster's config has errors, listed below)"))
	}
	for _, e := range entries {
		fmt.Fprintf(p.W, "\n%s = %s\n", p.paint(bold, e.Path), e.Text)
		if e.Template != "" {
			fmt.Fprintf(p.W, "    %s %q\n", p.paint(dim, "written as"), e.Template)
		}
		fmt.Fprintf(p.W, "    %-9s %s\n", "set by "+e.Origin.Layer.String(), e.Origin.Pos)
		for _, o := range e.Overrode {
			fmt.Fprintf(p.W, "    %s %s %s  %s\n", p.paint(dim, "overrode"), o.Scalar(), p.paint(dim, "("+o.Origin.Layer.String()+")"), p.paint(dim, o.Origin.Pos.String()))
		}
	}
}
