package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/ekscalendar"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// mergeBase is the fleet at the review base (the merge base of HEAD and
// origin/<deploy branch>, else <deploy branch>), loaded once, and the base's label; nil outside a
// git repository, without a base, or when the base does not load (a broken
// base says nothing about history).
func (a *app) mergeBase() (*config.Fleet, string, error) {
	if a.base == nil {
		a.base = &baseFleet{}
		if err := a.loadBase(a.base, func(tree fs.FS, checker *schema.Checker) (*config.Fleet, diag.Diagnostics) {
			return fleet.Load(tree, configDir, checker)
		}); err != nil {
			return nil, "", err
		}
	}
	return a.base.fleet, a.base.label, nil
}

// phaseBase is the merge base's fleet for holding the clusters' deletion
// phases to it (diff.Lifecycle), beside head, the working tree's fleet:
// mergeBase's when this invocation loaded it, else one loaded without the
// cluster checks (fleet.LoadLayers), which decide nothing of a cluster's
// phase: its own file's delete and delete_pipeline, held by the layer
// check, do. The base's files the head has byte for byte are decoded once.
func (a *app) phaseBase(head *config.Fleet) (*config.Fleet, string, error) {
	if a.base != nil {
		return a.base.fleet, a.base.label, nil
	}
	if a.phases == nil {
		a.phases = &baseFleet{}
		if err := a.loadBase(a.phases, func(tree fs.FS, checker *schema.Checker) (*config.Fleet, diag.Diagnostics) {
			return fleet.LoadLayers(tree, configDir, checker, head.Docs)
		}); err != nil {
			return nil, "", err
		}
	}
	return a.phases.fleet, a.phases.label, nil
}

// loadBase fills b with the merge base's fleet as load reads it from the
// base's tree, and its label; b stays empty outside a git repository,
// without a base, or when load reports an error.
func (a *app) loadBase(b *baseFleet, load func(fs.FS, *schema.Checker) (*config.Fleet, diag.Diagnostics)) error {
	repo, err := gitbase.Open(a.root)
	if err != nil {
		b.missing = err.Error()
		return nil
	}
	defer repo.Close()
	base, label, err := repo.DefaultBase(a.deployBranch())
	if errors.Is(err, gitbase.ErrNoHistory) {
		return nil // the first commit: everything is new, nothing to hold it to
	}
	if err != nil {
		b.missing = err.Error()
		return nil
	}
	tree, err := repo.FS(base)
	if err != nil {
		return fail(ExitExternal, "%v", err)
	}
	checker, err := a.checker()
	if err != nil {
		return err
	}
	f, diags := load(tree, checker)
	if diags.HasErrors() {
		b.missing = fmt.Sprintf("the config at the base %s (%s) does not load (first error: %s)", base.Hash.String()[:8], label, firstError(diags))
		return nil
	}
	b.fleet, b.label = f, base.Hash.String()[:8]+" ("+label+")"
	return nil
}

// ruleNotRun says on standard error that a rule which compares with the
// review base did not run, and why; on CI (CI=true, as GitHub Actions and
// GitLab set it) it fails the run instead, since there a missing base is a
// clone without the deploy branch's history (a shallow checkout), and a
// change the rule refuses would pass unseen.
func (a *app) ruleNotRun(rule, why string) error {
	if os.Getenv("CI") == "true" {
		return fail(ExitInput, "the %s cannot run: %s; on CI (CI=true) that fails the run: fetch the deploy branch with its history (fetch-depth: 0 in actions/checkout, GIT_DEPTH: 0 on GitLab) or pass --base", rule, why)
	}
	if !a.quiet && !a.notRun[rule] {
		if a.notRun == nil {
			a.notRun = map[string]bool{}
		}
		a.notRun[rule] = true
		fmt.Fprintf(a.stderr, "warning: the %s did not run: %s\n", rule, why)
	}
	return nil
}

// baseFleet is the merge base's fleet of this invocation.
type baseFleet struct {
	fleet *config.Fleet
	label string
	// missing says why there is no fleet: no repository, no base, or a
	// base whose config does not load.
	missing string
}

// historyDiagnostics are the rules that hold a change to the review base
// (the rollout waves and the clusters' deletion phases) and to the date
// of its commit (EKS's support calendar). validate and the pipelines apply
// them all; render applies them as renderWaves and renderLifecycle, the
// reviews as the report's Waves and Lifecycle.
func (a *app) historyDiagnostics(f *config.Fleet) (diag.Diagnostics, error) {
	waves, err := a.waveDiagnostics(f)
	if err != nil {
		return nil, err
	}
	phases, err := a.lifecycleDiagnostics(f, nil)
	if err != nil {
		return nil, err
	}
	calendar, err := a.calendarDiagnostics(f)
	if err != nil {
		return nil, err
	}
	return append(append(a.relative(waves), phases...), calendar...), nil
}

// calendarDiagnostics holds the clusters' EKS versions to EKS's support
// calendar at calendarDate.
func (a *app) calendarDiagnostics(f *config.Fleet) (diag.Diagnostics, error) {
	at, when := a.calendarDate()
	return a.calendarAt(f, at, when)
}

// calendarAt holds f's EKS versions to the support calendar at date at,
// which when names.
func (a *app) calendarAt(f *config.Fleet, at time.Time, when string) (diag.Diagnostics, error) {
	cal, err := ekscalendar.Load()
	if err != nil {
		return nil, fail(ExitExternal, "%v", err)
	}
	return a.relative(cal.Check(f, at, when)), nil
}

// calendarDate is the date the support calendar is held at, and what it
// is: SOURCE_DATE_EPOCH when set (a reproducible build's date), else the
// date of the commit whose config this is (HEAD, when config/ holds no
// uncommitted change), so that checking an old commit again gives the
// same answer; else today.
func (a *app) calendarDate() (time.Time, string) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC(), "SOURCE_DATE_EPOCH"
		}
	}
	now := time.Now().UTC()
	repo, err := gitbase.Open(a.root)
	if err != nil {
		return now, "today"
	}
	defer repo.Close()
	head, err := repo.Commit("HEAD")
	if err != nil {
		return now, "today"
	}
	if changed, err := repo.Changed(head, a.root, configDir); err != nil || len(changed) > 0 {
		return now, "today: config/ has uncommitted changes"
	}
	return head.Committer.When.UTC(), "the date of commit " + head.Hash.String()[:8]
}

// lifecycleDiagnostics holds each cluster's deletion phase to the merge
// base's (diff.Lifecycle).
//
// Without a base (a fleet outside a repository, a clone without the deploy
// branch), the last render's deploy/index.json remembers each cluster's
// phase; old is that index when the caller has read it already. With
// neither, the rule cannot run: ruleNotRun says so.
func (a *app) lifecycleDiagnostics(head *config.Fleet, old *render.Index) (diag.Diagnostics, error) {
	base, label, err := a.phaseBase(head)
	if err != nil {
		return nil, err
	}
	if base != nil {
		return a.relative(diff.Lifecycle(base, head, label)), nil
	}
	if old == nil {
		old, _ = deploytree.ReadIndex(deploytree.OS{}, filepath.Join(a.root, deployDir))
	}
	if old != nil {
		return a.relative(diff.LifecycleOfIndex(old, head, "deploy/index.json (the last render)")), nil
	}
	missing := a.phaseMissing()
	if missing == "" {
		return nil, nil // the first commit: no cluster existed before
	}
	return nil, a.ruleNotRun("deletion-phase check", missing)
}

// phaseMissing is why phaseBase found no base ("" when there is nothing to
// find: a repository without a commit).
func (a *app) phaseMissing() string {
	if a.base != nil {
		return a.base.missing
	}
	if a.phases != nil {
		return a.phases.missing
	}
	return ""
}

// waveDiagnostics refuses skipped rollout waves: versioned values the
// working tree gives a sector, compared with the review base (the merge
// base of HEAD and the deploy branch), while an earlier sector runs
// them nowhere. A sector's rollout_exceptions entry turns the error into a
// warning. Outside a git repository, or without a base, there is nothing
// to compare with: ruleNotRun says so (and fails on CI).
func (a *app) waveDiagnostics(head *config.Fleet) (diag.Diagnostics, error) {
	baseFleet, label, err := a.mergeBase()
	if err != nil {
		return nil, err
	}
	if baseFleet == nil {
		if a.base.missing == "" {
			return nil, nil
		}
		return nil, a.ruleNotRun("rollout-wave check", a.base.missing)
	}
	keys, err := schema.RolloutKeys()
	if err != nil {
		return nil, fail(ExitExternal, "%v", err)
	}
	var out diag.Diagnostics
	for _, w := range diff.SkippedWaves(baseFleet, head, keys) {
		d := diag.Diagnostic{
			Severity: diag.Error,
			Pos:      w.Pos,
			Path:     w.Key,
			Summary:  w.Reach() + " (skipped wave)",
			Detail: fmt.Sprintf("Compared with %s. Roll the value out sector by sector (regionctl rollout status), or say why this sector goes first in config/sectors/%s.yaml:\n"+
				"  rollout_exceptions:\n    - key: %s\n      value: %q\n      reason: <why>", label, w.Sector, w.Key, w.Value),
		}
		if w.Exception != "" {
			d.Severity = diag.Warning
			d.Summary = w.Reach() + " by exception"
			d.Detail = "Reason given: " + w.Exception
		}
		out = append(out, d)
	}
	return out, nil
}

// deployBranch is the branch the fleet deploys from: gitops.revision as the
// working tree's config/global sets it (its files merge in name order, a
// later one overriding), else main. Reviews and the wave and deletion
// checks compare with it, not with a branch name regionctl assumes.
func (a *app) deployBranch() string {
	if a.branch != "" {
		return a.branch
	}
	a.branch = gitbase.DefaultBranch
	dir := filepath.Join(a.root, configDir, "global")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return a.branch
	}
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		v, diags := config.Decode(path.Join(configDir, "global", e.Name()), config.LayerGlobal, b)
		if v == nil || diags.HasErrors() {
			continue // validate reports it
		}
		if r := v.Lookup("gitops", "revision"); r != nil && r.Kind == config.String && branchRE.MatchString(r.Str) {
			a.branch = r.Str
		}
	}
	return a.branch
}

// firstError is the first error among ds, as one line.
func firstError(ds diag.Diagnostics) string {
	for _, d := range ds {
		if d.Severity == diag.Error {
			if d.Pos.File != "" {
				return fmt.Sprintf("%s:%d: %s", d.Pos.File, d.Pos.Line, d.Summary)
			}
			return d.Summary
		}
	}
	return "none"
}
