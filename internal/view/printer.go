package view

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/secrets"
)

// Printer writes to one stream, with or without colour.
type Printer struct {
	W     io.Writer
	Color bool
	// Quiet prints errors only: no success lines, summaries or warnings.
	Quiet bool
}

// New returns a printer for w, coloured only when w is a terminal and
// NO_COLOR is not set.
func New(w io.Writer, noColor bool) *Printer {
	return &Printer{W: w, Color: !noColor && os.Getenv("NO_COLOR") == "" && isTerminal(w)}
}

// isTerminal asks the terminal driver (golang.org/x/term): a character
// device is not a terminal for that alone (/dev/null is one, and output
// sent there or through a pipe gets no colour codes or live progress).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

const (
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	green  = "\x1b[32m"
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

func (p *Printer) paint(code, s string) string {
	if !p.Color {
		return s
	}
	return code + s + reset
}

// Diagnostics prints each diagnostic as `file:line:col: severity: summary`
// with its detail and related positions indented below, then a count.
func (p *Printer) Diagnostics(ds diag.Diagnostics) {
	errs, warns := 0, 0
	for _, d := range ds {
		if p.Quiet && d.Severity == diag.Warning {
			continue
		}
		sev := p.paint(red, "error")
		if d.Severity == diag.Warning {
			sev = p.paint(yellow, "warning")
			warns++
		} else {
			errs++
		}
		// No message quotes secret material, whatever produced it.
		fmt.Fprintf(p.W, "%s: %s: %s\n", p.paint(bold, d.Pos.String()), sev, secrets.Mask(d.Summary))
		if d.Detail != "" {
			for _, line := range strings.Split(secrets.Mask(d.Detail), "\n") {
				fmt.Fprintf(p.W, "    %s\n", line)
			}
		}
		for _, r := range d.Related {
			fmt.Fprintf(p.W, "    %s: %s\n", p.paint(dim, r.Pos.String()), secrets.Mask(r.Message))
		}
	}
	if errs+warns > 0 && !(p.Quiet && errs == 0) {
		fmt.Fprintf(p.W, "%s, %s\n", plural(errs, "error"), plural(warns, "warning"))
	}
}

// OK prints a success line.
func (p *Printer) OK(format string, args ...any) {
	if p.Quiet {
		return
	}
	fmt.Fprintf(p.W, "%s %s\n", p.paint(green, "ok"), fmt.Sprintf(format, args...))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
