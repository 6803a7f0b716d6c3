package view

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diff"
)

// MaxComment is the largest PR comment the markdown form may produce.
const MaxComment = 65536

func clusterList(ids []string, max int) string {
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:max], ", "), len(ids)-max)
}

func origin(c diff.ValueChange) string {
	s := c.Origin + " (" + c.OriginLayer
	if c.OriginChanged {
		s += ", changed here"
	}
	return s + ")"
}

func plural1(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}

// Headline says in one line what the change does.
func Headline(r *diff.Report) string {
	if r.Empty() {
		return "no change to the fleet"
	}
	runs := len(diff.Runs(r.Affected))
	return fmt.Sprintf("%s affected, %s to run, %s, %s changed",
		plural1(len(r.Affected), "cluster"), plural1(runs, "pipeline"), plural1(len(r.Destroyed), "cluster")+" destroyed", plural1(len(r.Files), "file"))
}

// DiffText prints the report for a terminal or a CI log.
func (p *Printer) DiffText(r *diff.Report) {
	w := p.W
	fmt.Fprintf(w, "%s %s → %s\n", p.paint(bold, "regionctl render --diff:"), r.Base, r.Head)
	if len(r.Uncommitted) > 0 {
		fmt.Fprintf(w, "  includes %s not yet committed: %s\n", plural1(len(r.Uncommitted), "file"), strings.Join(r.Uncommitted, ", "))
	}
	if r.BaseRendered != "" {
		fmt.Fprintf(w, "  base re-rendered: %s\n", r.BaseRendered)
	}
	fmt.Fprintf(w, "  %s\n", Headline(r))
	if r.Stale > 0 {
		fmt.Fprintf(w, "  %s in deploy/ not re-rendered yet: run regionctl render and commit them\n", plural1(r.Stale, "file"))
	}
	section := func(title string) { fmt.Fprintf(w, "\n%s\n", p.paint(bold, title)) }
	if len(r.Destroyed) > 0 || len(r.Pruned) > 0 {
		section("DESTROYED AND PRUNED")
		for _, c := range r.Destroyed {
			fmt.Fprintf(w, "  %s %s (%s, sector %s, %s)\n", p.paint(red, "destroy"), c.ID, c.Type, c.Sector, c.Environment)
		}
		for _, f := range r.Pruned {
			fmt.Fprintf(w, "  %s deploy/%s\n", p.paint(red, "prune  "), f)
		}
	}
	if len(r.Waves) > 0 {
		section("ROLLOUT ORDER")
		for _, s := range r.Waves {
			if s.Exception != "" {
				fmt.Fprintf(w, "  %s %s = %q reaches %s before %s; exception: %s\n", p.paint(yellow, "exception"), s.Key, s.Value, s.Sector, strings.Join(s.Missing, ", "), s.Exception)
			} else {
				fmt.Fprintf(w, "  %s %s = %q reaches %s before %s has it (skipped wave)\n", p.paint(red, "skipped"), s.Key, s.Value, s.Sector, strings.Join(s.Missing, ", "))
			}
		}
	}
	if downs := downgrades(r); len(downs) > 0 {
		section("DOWNGRADES")
		for _, c := range downs {
			fmt.Fprintf(w, "  %s %s %s → %s on %s\n", p.paint(red, "downgrade"), c.Path, c.Old, c.New, clusterList(c.Clusters, 6))
		}
	}
	if len(r.Drift) > 0 {
		section("DRIFT")
		fmt.Fprintf(w, "  deploy/ holds files that are not what config/ renders to (edited by hand?):\n")
		for _, f := range r.Drift {
			fmt.Fprintf(w, "  %s deploy/%s\n", p.paint(red, "drift"), f)
		}
		if len(r.DriftFiles) > 0 {
			fmt.Fprintf(w, "  what config/ renders (a/) against what is committed (b/):\n")
			for _, f := range r.DriftFiles {
				p.unified(w, f.Unified)
			}
		}
	}
	if len(r.Sectors) > 0 {
		section("BLAST RADIUS (rollout order)")
		for _, s := range r.Sectors {
			fmt.Fprintf(w, "  %s %s  regions %s: %d changed, %d added, %d destroyed\n", p.paint(bold, s.Name), p.paint(dim, "("+s.Environment+")"),
				strings.Join(s.Regions, ", "), len(s.Changed), len(s.Added), len(s.Destroyed))
			if len(s.Pipelines) > 0 {
				fmt.Fprintf(w, "      pipelines: %s\n", clusterList(s.Pipelines, 6))
			}
		}
	}
	if len(r.Changes) > 0 {
		section("VALUE CHANGES")
		for _, c := range r.Changes {
			down := ""
			if c.Downgrade {
				down = " " + p.paint(red, "DOWNGRADE")
			}
			fmt.Fprintf(w, "  %s %s → %s%s  %s\n", p.paint(bold, c.Path), c.Old, c.New, down, p.paint(dim, origin(c)))
			fmt.Fprintf(w, "      %s: %s\n", plural1(len(c.Clusters), "cluster"), clusterList(c.Clusters, 6))
		}
	}
	p.manifestsText(r)
	if len(r.Files) > 0 {
		section("FILE DIFFS")
		for _, f := range r.Files {
			p.unified(w, f.Unified)
		}
	}
}

// manifestsText prints the notes, then each object change with the
// clusters it reaches and its diff.
func (p *Printer) manifestsText(r *diff.Report) {
	if len(r.Manifests) == 0 && len(r.ManifestNotes) == 0 {
		return
	}
	fmt.Fprintf(p.W, "\n%s\n", p.paint(bold, "RENDERED MANIFESTS (Helm, the objects Argo CD will apply)"))
	for _, n := range r.ManifestNotes {
		fmt.Fprintf(p.W, "  %s %s\n", p.paint(yellow, "note"), n)
	}
	for _, m := range r.Manifests {
		fmt.Fprintf(p.W, "  %s %s %s  %s\n", p.paint(bold, m.Application), m.Object, m.Status, p.paint(dim, manifestReach(m, 6)))
		p.unified(p.W, m.Unified)
	}
}

// Unified prints a unified diff, coloured on a terminal.
func (p *Printer) Unified(u string) { p.unified(p.W, u) }

func (p *Printer) unified(w io.Writer, u string) {
	for _, line := range strings.SplitAfter(u, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			fmt.Fprint(w, p.paint(bold, strings.TrimSuffix(line, "\n"))+"\n")
		case strings.HasPrefix(line, "+"):
			fmt.Fprint(w, p.paint(green, strings.TrimSuffix(line, "\n"))+"\n")
		case strings.HasPrefix(line, "-"):
			fmt.Fprint(w, p.paint(red, strings.TrimSuffix(line, "\n"))+"\n")
		case strings.HasPrefix(line, "@@"):
			fmt.Fprint(w, p.paint(dim, strings.TrimSuffix(line, "\n"))+"\n")
		default:
			fmt.Fprint(w, line)
		}
	}
}

// DiffMarkdown renders the report as one PR comment of at most MaxComment
// characters: the summary and value changes first, collapsible per sector,
// then as many file diffs as fit; what is left out is said.
func DiffMarkdown(r *diff.Report) string { return Fit(diffMarkdown(r), MaxComment) }

// Fit cuts a markdown comment longer than limit bytes (thousands of sectors
// or values) at a line boundary, closes the code fence and <details> the
// cut left open, and says so.
func Fit(s string, limit int) string {
	return fitWith(s, limit, "\n\n_This comment was cut to fit 65,536 characters; run `regionctl render --diff` to see all of it._\n")
}

// fitWith is Fit with the note a cut comment ends with.
func fitWith(s string, limit int, note string) string {
	if len(s) <= limit {
		return s
	}
	cut := s[:max(limit-len(note)-200, 0)]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	}
	// Only the comment's own fences and <details> start a line: values sit in
	// code spans within a line, diff lines start with + - @ or a space.
	fence, open := "", 0
	for _, line := range strings.Split(cut, "\n") {
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = line[:longestRun(line, '`')]
		case fence != "" && line == fence:
			fence = ""
		case fence == "" && strings.HasPrefix(line, "<details>"):
			open++
		case fence == "" && line == "</details>":
			open--
		}
	}
	if fence != "" {
		cut += fence + "\n"
	}
	for ; open > 0; open-- {
		cut += "</details>\n"
	}
	return cut + note
}

func diffMarkdown(r *diff.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### regionctl render --diff\n\n%s → %s", code(r.Base), code(r.Head))
	if len(r.Uncommitted) > 0 {
		fmt.Fprintf(&b, " (with %s not yet committed)", plural1(len(r.Uncommitted), "file"))
	}
	if r.BaseRendered != "" {
		fmt.Fprintf(&b, "\n\nBase re-rendered: %s", text(r.BaseRendered))
	}
	fmt.Fprintf(&b, "\n\n**%s**\n", Headline(r))
	if r.Stale > 0 {
		fmt.Fprintf(&b, "\n:warning: %s in `deploy/` not re-rendered yet: run `regionctl render` and commit them.\n", plural1(r.Stale, "file"))
	}
	warningsMarkdown(&b, r)
	sectorsMarkdown(&b, r)
	valuesMarkdown(&b, r)
	manifestsMarkdown(&b, r)
	filesMarkdown(&b, r)
	return b.String()
}

// warningsMarkdown writes what a reviewer must not miss: destroyed
// clusters and pruned files, skipped waves, downgrades, drift.
func warningsMarkdown(b *strings.Builder, r *diff.Report) {
	if len(r.Destroyed)+len(r.Pruned) > 0 {
		b.WriteString("\n#### :warning: Destroyed and pruned\n\n")
		for _, c := range r.Destroyed {
			fmt.Fprintf(b, "- **destroy** %s (%s, sector %s, %s)\n", code(c.ID), text(c.Type), text(c.Sector), text(c.Environment))
		}
		for _, f := range r.Pruned {
			fmt.Fprintf(b, "- prune %s\n", code("deploy/"+f))
		}
	}
	if len(r.Waves) > 0 {
		b.WriteString("\n#### :warning: Rollout order\n\n")
		for _, s := range r.Waves {
			if s.Exception != "" {
				fmt.Fprintf(b, "- **exception**: %s = %s reaches **%s** before %s. Reason: %s\n", code(s.Key), code(s.Value), text(s.Sector), text(strings.Join(s.Missing, ", ")), text(s.Exception))
			} else {
				fmt.Fprintf(b, "- **skipped wave**: %s = %s reaches **%s** before %s has it\n", code(s.Key), code(s.Value), text(s.Sector), text(strings.Join(s.Missing, ", ")))
			}
		}
	}
	if downs := downgrades(r); len(downs) > 0 {
		b.WriteString("\n#### :warning: Downgrades\n\n")
		for _, c := range downs {
			fmt.Fprintf(b, "- %s: %s → %s on %s\n", code(c.Path), code(c.Old), code(c.New), text(clusterList(c.Clusters, 6)))
		}
	}
	if len(r.Drift) > 0 {
		b.WriteString("\n#### :warning: Drift\n\n`deploy/` holds files that are not what `config/` renders to:\n\n")
		for _, f := range r.Drift {
			fmt.Fprintf(b, "- %s\n", code("deploy/"+f))
		}
		// Each edit as a diff from the render, within a share of the
		// comment; render --diff shows them all.
		budget := MaxComment / 4
		for i, f := range r.DriftFiles {
			block := detailsDiff("drift", f)
			if len(block) > budget {
				fmt.Fprintf(b, "\n_%d drift diffs left out to fit one comment; run `regionctl render --diff` to see them._\n", len(r.DriftFiles)-i)
				break
			}
			budget -= len(block)
			b.WriteString(block)
		}
	}
}

// sectorsMarkdown writes the blast radius in rollout order, with each
// sector's value changes folded.
func sectorsMarkdown(b *strings.Builder, r *diff.Report) {
	if len(r.Sectors) > 0 {
		b.WriteString("\n#### Blast radius, in rollout order\n\n| sector | environment | regions | changed | added | destroyed | pipelines |\n|---|---|---|---|---|---|---|\n")
		for _, s := range r.Sectors {
			fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d | %d |\n", text(s.Name), text(s.Environment), text(strings.Join(s.Regions, ", ")), len(s.Changed), len(s.Added), len(s.Destroyed), len(s.Pipelines))
		}
		for _, s := range r.Sectors {
			fmt.Fprintf(b, "\n<details><summary>%s (%s): %s</summary>\n\n", html.EscapeString(s.Name), html.EscapeString(s.Environment), plural1(len(s.Changed)+len(s.Added)+len(s.Destroyed), "cluster"))
			listed, more := 0, 0
			for _, c := range r.Changes {
				if !contains(c.Sectors, s.Name) {
					continue
				}
				if listed == 30 {
					more++
					continue
				}
				listed++
				fmt.Fprintf(b, "- %s: %s → %s — %s, %s\n", code(c.Path), code(c.Old), code(c.New), text(origin(c)), plural1(len(c.Clusters), "cluster"))
			}
			if more > 0 {
				fmt.Fprintf(b, "- and %d more value changes (see the table below)\n", more)
			}
			if len(s.Pipelines) > 0 {
				fmt.Fprintf(b, "\nPipelines: %s\n", text(strings.Join(s.Pipelines, ", ")))
			}
			b.WriteString("\n</details>\n")
		}
	}
}

// valuesMarkdown writes the table of value changes, in at most half of
// what the comment has left.
func valuesMarkdown(b *strings.Builder, r *diff.Report) {
	if len(r.Changes) > 0 {
		b.WriteString("\n#### Value changes\n\n| value | old → new | set at | clusters |\n|---|---|---|---|\n")
		// The table gets at most half of what is left; file diffs go first
		// when cutting, but a change of thousands of values must fit too.
		limit := b.Len() + (MaxComment-b.Len())/2
		for i, c := range r.Changes {
			down := ""
			if c.Downgrade {
				down = " :warning: **downgrade**"
			}
			row := fmt.Sprintf("| %s | %s → %s%s | %s | %s |\n", code(c.Path), code(c.Old), code(c.New), down, text(origin(c)), text(clusterList(c.Clusters, 4)))
			if b.Len()+len(row) > limit {
				fmt.Fprintf(b, "\n_%d more value changes left out to fit one comment; run `regionctl render --diff`._\n", len(r.Changes)-i)
				break
			}
			b.WriteString(row)
		}
	}
}

// manifestReach says on which clusters an object changes, and whose diff
// is shown when their context differs.
func manifestReach(m diff.ManifestChange, max int) string {
	s := plural1(len(m.Clusters), "cluster") + ": " + clusterList(m.Clusters, max)
	if m.Varies {
		s += " (the same lines change on each; shown for " + m.Shown + ")"
	}
	return s
}

// manifestsMarkdown writes the objects of the rendered charts that change,
// each folded, in at most half of what is left of the comment (the file
// diffs it leaves out show the same change as values).
func manifestsMarkdown(b *strings.Builder, r *diff.Report) {
	if len(r.Manifests) == 0 && len(r.ManifestNotes) == 0 {
		return
	}
	b.WriteString("\n#### Rendered manifests\n\nThe objects Argo CD will apply differently, rendered on both sides as Argo CD renders them: charts by Helm, kustomizations by kustomize (the notes say where each came from).\n")
	for _, n := range r.ManifestNotes {
		fmt.Fprintf(b, "\n- %s", text(n))
	}
	if len(r.ManifestNotes) > 0 {
		b.WriteString("\n")
	}
	limit := b.Len() + (MaxComment-b.Len())/2
	for i, m := range r.Manifests {
		unified := reveal(m.Unified)
		fence := fenceFor(unified)
		block := fmt.Sprintf("\n<details><summary>%s <code>%s</code> of <code>%s</code> on %s</summary>\n\n%sdiff\n%s%s\n</details>\n",
			html.EscapeString(m.Status), html.EscapeString(reveal(m.Object)), html.EscapeString(reveal(m.Application)),
			html.EscapeString(manifestReach(m, 4)), fence, unified, fence)
		if b.Len()+len(block) > limit {
			fmt.Fprintf(b, "\n_%d more object diffs left out to fit one comment; run `regionctl render --diff`._\n", len(r.Manifests)-i)
			break
		}
		b.WriteString(block)
	}
}

// filesMarkdown writes each rendered file's diff, folded, until the
// comment is full.
func filesMarkdown(b *strings.Builder, r *diff.Report) {
	if len(r.Files) == 0 {
		return
	}
	b.WriteString("\n#### Rendered files\n")
	note := func(left, lines int) string {
		return fmt.Sprintf("\n_%d file diffs (%d lines) left out to fit one comment; run `regionctl render --diff` to see them._\n", left, lines)
	}
	budget := MaxComment - b.Len() - len(note(1_000_000, 1_000_000_000)) - 64
	for i, f := range r.Files {
		block := detailsDiff(f.Status, f)
		if len(block) > budget {
			lines := 0
			for _, g := range r.Files[i:] {
				lines += strings.Count(g.Unified, "\n")
			}
			b.WriteString(note(len(r.Files)-i, lines))
			break
		}
		budget -= len(block)
		b.WriteString(block)
	}
}

// downgrades are the value changes that move a cluster to an older
// version of an ordered key.
func downgrades(r *diff.Report) []diff.ValueChange {
	var out []diff.ValueChange
	for _, c := range r.Changes {
		if c.Downgrade {
			out = append(out, c)
		}
	}
	return out
}

// code writes s as an inline code span that nothing in s can end: its
// fence is longer than any run of backticks in s. A pipe is escaped (GitHub
// splits table cells on it even in code) and a line break shown as ⏎, so
// the span stays on its line.
func code(s string) string {
	s = strings.ReplaceAll(reveal(s), "|", "\\|")
	s = strings.NewReplacer("\r\n", "⏎", "\n", "⏎", "\r", "⏎").Replace(s)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// text writes s as plain text: HTML and markdown syntax in it are shown,
// never interpreted.
func text(s string) string {
	var b strings.Builder
	for _, r := range strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(reveal(s)) {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '|', '#', '~', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// reveal shows each character that changes how text reads without being
// seen (bidirectional controls, zero-width characters) as its code point,
// ⟨U+202E⟩, so that a reviewer reads what is there: the loader refuses them
// in config/, but a hand edit of deploy/ can still bring one.
func reveal(s string) string {
	if !strings.ContainsFunc(s, config.Invisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if config.Invisible(r) {
			fmt.Fprintf(&b, "⟨%U⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fenceFor is a code fence that no line of s can close.
func fenceFor(s string) string {
	return strings.Repeat("`", max(3, longestRun(s, '`')+1))
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// detailsDiff is a file diff as a folded block of a comment: the summary
// escaped as HTML, the diff in a fence longer than any run of backticks in
// it.
func detailsDiff(status string, f diff.FileDiff) string {
	unified := reveal(f.Unified)
	fence := fenceFor(unified)
	return fmt.Sprintf("\n<details><summary>%s <code>deploy/%s</code></summary>\n\n%sdiff\n%s%s\n</details>\n",
		html.EscapeString(status), html.EscapeString(reveal(f.Path)), fence, unified, fence)
}
