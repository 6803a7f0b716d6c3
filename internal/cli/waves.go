package cli

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/history"
	"github.com/regionctl/regionctl/internal/render"
)

// history is this invocation's review base for the rules that hold a
// change to it (package history): on CI (CI=true, as GitHub Actions and
// GitLab set it) a rule that cannot run fails the run; elsewhere it is a
// warning on standard error, unless --quiet.
func (a *app) history() *history.Base {
	if a.past == nil {
		a.past = a.historyWarning(a.warnNotRun)
	}
	return a.past
}

// historyWarning is a review base like history's that tells warn of a rule
// that did not run.
func (a *app) historyWarning(warn func(rule, why string)) *history.Base {
	return history.New(history.Options{
		Root: a.root, Branch: a.deployBranch(), Checker: a.checker, CI: os.Getenv("CI") == "true", Warn: warn,
	})
}

// warnNotRun says on standard error that a rule did not run, unless
// --quiet.
func (a *app) warnNotRun(rule, why string) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, "warning: the %s did not run: %s\n", rule, why)
	}
}

// historyFail maps an error of package history to an exit: a rule that
// could not run on CI is the input's fault, anything else the world's.
func historyFail(err error) error {
	var notRun *history.NotRunError
	var exit *exitError
	switch {
	case errors.As(err, &exit):
		return err
	case errors.As(err, &notRun):
		return fail(ExitInput, "%v", err)
	}
	return fail(ExitExternal, "%v", err)
}

// historyDiagnostics are the rules that hold a change to the review base
// (the rollout waves and the clusters' deletion phases) and to the date of
// its commit (EKS's support calendar). validate and the pipelines apply
// them all; render applies them as renderWaves and renderLifecycle, the
// reviews as the report's Waves and Lifecycle.
func (a *app) historyDiagnostics(f *config.Fleet, diags diag.Diagnostics) (diag.Diagnostics, error) {
	ds, err := a.history().All(f, diags)
	if err != nil {
		return nil, historyFail(err)
	}
	return a.relative(ds), nil
}

// calendarAt holds f's EKS versions to the support calendar at date at,
// which when names.
func (a *app) calendarAt(f *config.Fleet, at time.Time, when string) (diag.Diagnostics, error) {
	ds, err := history.CalendarAt(f, at, when)
	if err != nil {
		return nil, historyFail(err)
	}
	return a.relative(ds), nil
}

// renderLifecycle holds the clusters' deletion phases to the merge base
// (or, without one, to the last render's index, old) when a render could
// break them (history.LifecycleAtRisk).
func (a *app) renderLifecycle(old *render.Index) error {
	if h := a.beside; h != nil {
		<-h.done
		return a.reportHistory(h.lifecycle)
	}
	ds, err := lifecycleChecks(a.history(), a.fleet, a.fleetDiags, old)
	return a.reportHistory(historyOutcome{ds: ds, err: err})
}

// renderWaves refuses a render of a skipped rollout wave, as validate
// does: one rule, whichever command meets the change; and holds the EKS
// versions to the calendar.
func (a *app) renderWaves() error {
	if h := a.beside; h != nil {
		<-h.done
		return a.reportHistory(h.waves)
	}
	ds, err := waveChecks(a.history(), a.fleet, a.fleetDiags, a.root)
	return a.reportHistory(historyOutcome{ds: ds, err: err})
}

// lifecycleChecks is renderLifecycle's rule with past as the review base.
func lifecycleChecks(past *history.Base, f *config.Fleet, diags diag.Diagnostics, old *render.Index) (diag.Diagnostics, error) {
	if !history.LifecycleAtRisk(f, old) {
		return nil, nil
	}
	return past.Lifecycle(f, diags, old)
}

// waveChecks is renderWaves' rules (the waves, then the calendar at root's
// date) with past as the review base.
func waveChecks(past *history.Base, f *config.Fleet, diags diag.Diagnostics, root string) (diag.Diagnostics, error) {
	ds, err := past.Waves(f, diags)
	if err != nil {
		return nil, err
	}
	calendar, err := history.Calendar(f, root)
	if err != nil {
		return nil, err
	}
	return append(ds, calendar...), nil
}

// historyOutcome is what one of a render's history rules gave: its
// diagnostics or error, and the rules it said did not run.
type historyOutcome struct {
	ds     diag.Diagnostics
	err    error
	notRun [][2]string // rule, why
}

// reportHistory reports o as the rule would have as it ran: what did not
// run, then its error or diagnostics.
func (a *app) reportHistory(o historyOutcome) error {
	for _, w := range o.notRun {
		a.warnNotRun(w[0], w[1])
	}
	if o.err != nil {
		return historyFail(o.err)
	}
	return a.reportDiagnostics(a.relative(o.ds))
}

// historyBeside is the render's history rules (renderLifecycle's and
// renderWaves'), run on a goroutine from the moment the fleet is loaded
// (render.Options.Loaded) instead of after the render: they need only the
// fleet as loaded, its diagnostics (history's headDiags) and the last
// render's index (old), and read the merge base's config from git and the
// calendar's date. After a cold render of the 2,200-cluster benchmark fleet
// they took some 0.1 s on one core while the other had nothing to do. What
// each says of a rule that did not run is kept and printed where the rule
// reports, so that the output is the same. done is closed when both ran.
type historyBeside struct {
	done             chan struct{}
	lifecycle, waves historyOutcome
}

// startHistoryBeside returns the render.Options.Loaded that starts
// historyBeside (a.beside) for old, the index the render replaces or
// compares with.
func (a *app) startHistoryBeside(old *render.Index) func(*config.Fleet, diag.Diagnostics) {
	return func(f *config.Fleet, diags diag.Diagnostics) {
		h := &historyBeside{done: make(chan struct{})}
		var mu sync.Mutex
		into := &h.lifecycle
		past := a.historyWarning(func(rule, why string) {
			mu.Lock()
			into.notRun = append(into.notRun, [2]string{rule, why})
			mu.Unlock()
		})
		root := a.root
		a.beside = h
		go func() {
			defer close(h.done)
			h.lifecycle.ds, h.lifecycle.err = lifecycleChecks(past, f, diags, old)
			mu.Lock()
			into = &h.waves
			mu.Unlock()
			h.waves.ds, h.waves.err = waveChecks(past, f, diags, root)
		}()
	}
}

// deployBranch is the branch the fleet deploys from (history.DeployBranch),
// read once.
func (a *app) deployBranch() string {
	if a.branch == "" {
		a.branch = history.DeployBranch(a.root)
	}
	return a.branch
}
