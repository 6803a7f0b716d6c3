package view

import (
	"fmt"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/rollout"
)

// RolloutStatus prints where each versioned key stands.
func (p *Printer) RolloutStatus(keys []rollout.KeyStatus) {
	for i, k := range keys {
		if i > 0 {
			fmt.Fprintln(p.W)
		}
		target := k.Target
		if target == "" {
			target = "(none)"
		}
		fmt.Fprintf(p.W, "%s  %s\n", p.paint(bold, k.Key), p.paint(dim, "target "+target))
		for _, s := range k.Sectors {
			for j, v := range s.Values {
				name := ""
				if j == 0 {
					name = fmt.Sprintf("%s (%s)", s.Sector, s.Environment)
				}
				mark := p.paint(yellow, "·")
				if v.Value == k.Target {
					mark = p.paint(green, "✓")
				}
				since := "since: not in git history"
				if v.Since != nil {
					since = fmt.Sprintf("since %s %s", v.Since.Commit[:8], v.Since.Time.UTC().Format(time.RFC3339))
				}
				fmt.Fprintf(p.W, "  %-26s %s %s  %s  %s  %s\n", name, mark, v.Value, p.paint(dim, strings.Join(v.Regions, ",")), p.paint(dim, since), p.paint(dim, v.Origin))
			}
		}
		switch {
		case k.Done:
			fmt.Fprintf(p.W, "  %s every sector runs the target\n", p.paint(green, "done:"))
		case len(k.Blocked) > 0 && k.Next != "":
			fmt.Fprintf(p.W, "  next: %s, %s %s\n", k.Next, p.paint(red, "blocked:"), strings.Join(k.Blocked, "; "))
		case len(k.Blocked) > 0:
			fmt.Fprintf(p.W, "  %s %s\n", p.paint(red, "blocked:"), strings.Join(k.Blocked, "; "))
		default:
			fmt.Fprintf(p.W, "  next: %s, ready to promote\n", k.Next)
		}
	}
}
