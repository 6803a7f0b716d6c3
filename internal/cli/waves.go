package cli

import (
	"errors"
	"fmt"
	"os"
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
		a.past = history.New(history.Options{
			Root: a.root, Branch: a.deployBranch(), Checker: a.checker, CI: os.Getenv("CI") == "true",
			Warn: func(rule, why string) {
				if !a.quiet {
					fmt.Fprintf(a.stderr, "warning: the %s did not run: %s\n", rule, why)
				}
			},
		})
	}
	return a.past
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
// when the render could break them (history.LifecycleAtRisk).
func (a *app) renderLifecycle(old *render.Index) error {
	if !history.LifecycleAtRisk(a.fleet, old) {
		return nil
	}
	ds, err := a.history().Lifecycle(a.fleet, a.fleetDiags, old)
	if err != nil {
		return historyFail(err)
	}
	return a.reportDiagnostics(a.relative(ds))
}

// renderWaves refuses a render of a skipped rollout wave, as validate
// does: one rule, whichever command meets the change; and holds the EKS
// versions to the calendar.
func (a *app) renderWaves() error {
	ds, err := a.history().Waves(a.fleet, a.fleetDiags)
	if err != nil {
		return historyFail(err)
	}
	calendar, err := history.Calendar(a.fleet, a.root)
	if err != nil {
		return historyFail(err)
	}
	return a.reportDiagnostics(a.relative(append(ds, calendar...)))
}

// deployBranch is the branch the fleet deploys from (history.DeployBranch),
// read once.
func (a *app) deployBranch() string {
	if a.branch == "" {
		a.branch = history.DeployBranch(a.root)
	}
	return a.branch
}
