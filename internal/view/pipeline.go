package view

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

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
		pairs := func(m map[string]string) string {
			var kv []string
			for k, v := range m {
				kv = append(kv, k+"="+v)
			}
			sort.Strings(kv)
			return strings.Join(kv, " ")
		}
		detail("account", s.Account)
		detail("ou", s.OU)
		detail("mgmt ou", s.ManagementOU)
		detail("handoff", s.Handoff)
		detail("minting role", s.MintingRole)
		detail("role", s.RoleARN)
		detail("external id", s.ExternalID)
		detail("session", s.SessionName)
		detail("root", s.Root)
		detail("var file", s.VarFile)
		detail("command", s.Command)
		detail("backend", pairs(s.Backend))
		detail("bucket owner", s.BucketOwner)
		detail("run-time vars", pairs(s.Vars))
		for _, c := range s.Calls {
			detail("api call", c)
		}
	}
}

// Progress prints one line per pipeline step as it ends and, on a
// terminal, a live status line for the steps that are running. It is safe
// for concurrent use (clusters may run in parallel).
type Progress struct {
	p       *Printer
	live    bool
	mu      sync.Mutex
	running map[string]time.Time // "cluster step" → started
	stop    chan struct{}
}

// NewProgress returns a Progress writing to the printer's writer; the live
// line is shown only on a terminal.
func (p *Printer) NewProgress() *Progress {
	return &Progress{p: p, live: isTerminal(p.W) && !p.Quiet, running: map[string]time.Time{}}
}

// Event records a step's start or end.
func (g *Progress) Event(e pipeline.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := fmt.Sprintf("%-22s %-12s", e.Cluster, e.Step)
	if e.Status == "start" {
		g.running[key] = time.Now()
		if g.live && g.stop == nil {
			g.stop = make(chan struct{})
			go g.tick(g.stop)
		}
		g.redraw()
		return
	}
	if e.Status == "waiting" {
		// The step goes on: it waits for an approver, and says for what.
		if g.live {
			fmt.Fprint(g.p.W, "\r\033[K")
		}
		fmt.Fprintf(g.p.W, "%8s  %s %s  %s\n", "", key, g.p.paint(yellow, "waiting"), e.Detail)
		g.redraw()
		return
	}
	delete(g.running, key)
	if g.p.Quiet && e.Status != "failed" {
		return
	}
	if g.live {
		fmt.Fprint(g.p.W, "\r\033[K")
	}
	mark := g.p.paint(green, "ok")
	switch e.Status {
	case "failed":
		mark = g.p.paint(red, "FAILED")
	case "skipped":
		mark = g.p.paint(dim, "skipped")
	}
	fmt.Fprintf(g.p.W, "%8s  %s %s  %s\n", e.Elapsed.Round(100*time.Millisecond), key, mark, e.Detail)
	g.redraw()
}

// Close stops the live line.
func (g *Progress) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stop != nil {
		close(g.stop)
		g.stop = nil
	}
}

func (g *Progress) tick(stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			g.mu.Lock()
			g.redraw()
			g.mu.Unlock()
		}
	}
}

// redraw shows the longest-running step and how many others run.
func (g *Progress) redraw() {
	if !g.live || len(g.running) == 0 {
		return
	}
	var oldest string
	var since time.Time
	for k, t := range g.running {
		if oldest == "" || t.Before(since) || (t.Equal(since) && k < oldest) {
			oldest, since = k, t
		}
	}
	more := ""
	if n := len(g.running) - 1; n > 0 {
		more = fmt.Sprintf(" (+%d more)", n)
	}
	fmt.Fprintf(g.p.W, "\r\033[K%8s  %s %s%s", time.Since(since).Round(time.Second), oldest, g.p.paint(dim, "running…"), more)
}
