package view

import "fmt"

// RenderSummary reports what a render changed in the tree at dir.
func (p *Printer) RenderSummary(dir string, total int, added, changed, pruned, foreign []string) {
	if p.Quiet {
		return
	}
	if len(added)+len(changed)+len(pruned)+len(foreign) == 0 {
		p.OK("%s is up to date (%d files), nothing written", dir, total)
		return
	}
	nAdded, nChanged := len(added), len(changed)
	if len(added)+len(changed)+len(pruned)+len(foreign) > 25 {
		added, changed = nil, nil // too many to list: counts only
	}
	for _, f := range added {
		fmt.Fprintf(p.W, "  %s %s\n", p.paint(green, "added  "), f)
	}
	for _, f := range changed {
		fmt.Fprintf(p.W, "  %s %s\n", p.paint(yellow, "changed"), f)
	}
	for _, f := range pruned {
		fmt.Fprintf(p.W, "  %s %s\n", p.paint(red, "pruned "), f)
	}
	for _, f := range foreign {
		fmt.Fprintf(p.W, "  %s %s (not written by regionctl)\n", p.paint(red, "deleted"), f)
	}
	p.OK("wrote %s: %d added, %d changed, %d pruned, %d unchanged", dir, nAdded, nChanged, len(pruned)+len(foreign), total-nAdded-nChanged)
}

// StaleTree lists how the tree at dir differs from the render.
func (p *Printer) StaleTree(dir string, stale, missing, extra []string) {
	for _, group := range []struct {
		name  string
		files []string
	}{{"stale", stale}, {"missing", missing}, {"extra", extra}} {
		for _, f := range group.files {
			fmt.Fprintf(p.W, "%s: %s/%s\n", p.paint(red, group.name), dir, f)
		}
	}
}
