// Package history holds a change to what came before it: its rollout
// waves and its clusters' deletion phases to the review base (the merge
// base of HEAD and the deploy branch), and its EKS versions to the support
// calendar at the date of its commit. validate, render, the reviews and the
// pipelines apply these rules through one Base; the command layer only
// prints what they find. Entry points: New, DeployBranch.
package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

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

const (
	configDir = "config"
	deployDir = "deploy"
)

// Options say where the fleet is and how a rule that cannot run is met.
type Options struct {
	Root    string // the fleet's directory
	Branch  string // the deploy branch (DeployBranch)
	Checker func() (*schema.Checker, error)
	// CI makes a rule that cannot run (no base: a shallow clone) fail the
	// run with a *NotRunError; elsewhere Warn is told, once per rule.
	CI   bool
	Warn func(rule, why string)
}

// Base is the review base of one invocation, loaded at most once for each
// use.
type Base struct {
	o      Options
	full   *baseFleet // checked whole: the wave rule needs effective configs
	phases *baseFleet // its layers only: the deletion phases need no more
	warned map[string]bool
}

// New is the review base of the fleet o names; nothing is read yet.
func New(o Options) *Base { return &Base{o: o} }

// baseFleet is the merge base's fleet, as one use loads it.
type baseFleet struct {
	fleet *config.Fleet
	label string
	// missing says why there is no fleet: no repository, no base, or a
	// base whose config does not load.
	missing string
}

// NotRunError is a rule that compares with the review base and could not
// run on CI, where a missing base is a clone without the deploy branch's
// history and a change the rule refuses would pass unseen.
type NotRunError struct{ Rule, Why string }

func (e *NotRunError) Error() string {
	return fmt.Sprintf("the %s cannot run: %s; on CI (CI=true) that fails the run: fetch the deploy branch with its history (fetch-depth: 0 in actions/checkout, GIT_DEPTH: 0 on GitLab) or pass --base", e.Rule, e.Why)
}

// All are every rule's findings for f (loaded with diags): the rollout
// waves, the deletion phases and EKS's support calendar at CalendarDate's
// date.
func (b *Base) All(f *config.Fleet, diags diag.Diagnostics) (diag.Diagnostics, error) {
	waves, err := b.Waves(f, diags)
	if err != nil {
		return nil, err
	}
	phases, err := b.Lifecycle(f, diags, nil)
	if err != nil {
		return nil, err
	}
	calendar, err := Calendar(f, b.o.Root)
	if err != nil {
		return nil, err
	}
	return append(append(waves, phases...), calendar...), nil
}

// merged is the merge base's fleet, checked whole, loaded once beside
// head, loaded with headDiags (fleet.LoadBeside: the files head has byte
// for byte, most of them, are decoded once and not checked again).
func (b *Base) merged(head *config.Fleet, headDiags diag.Diagnostics) (*baseFleet, error) {
	if b.full == nil {
		b.full = &baseFleet{}
		if err := b.load(b.full, func(tree fs.FS, checker *schema.Checker) (*config.Fleet, diag.Diagnostics) {
			return fleet.LoadBeside(tree, configDir, checker, head, headDiags)
		}); err != nil {
			return nil, err
		}
	}
	return b.full, nil
}

// phaseBase is the merge base's fleet for holding the clusters' deletion
// phases to it, beside head (loaded with headDiags): merged's when this
// invocation loaded it, else one loaded without the cluster checks
// (fleet.LoadLayersBeside), which decide nothing of a cluster's phase: its
// own file's delete and delete_pipeline, held by the layer check, do. The
// base's files the head has byte for byte are decoded once; when they are
// all of them, the base is head.
func (b *Base) phaseBase(head *config.Fleet, headDiags diag.Diagnostics) (*baseFleet, error) {
	if b.full != nil {
		return b.full, nil
	}
	if b.phases == nil {
		b.phases = &baseFleet{}
		if err := b.load(b.phases, func(tree fs.FS, checker *schema.Checker) (*config.Fleet, diag.Diagnostics) {
			return fleet.LoadLayersBeside(tree, configDir, checker, head, headDiags)
		}); err != nil {
			return nil, err
		}
	}
	return b.phases, nil
}

// load fills bf with the merge base's fleet as load reads it from the
// base's tree, and its label; bf stays empty outside a git repository,
// without a base, or when load reports an error.
func (b *Base) load(bf *baseFleet, load func(fs.FS, *schema.Checker) (*config.Fleet, diag.Diagnostics)) error {
	repo, err := gitbase.Open(b.o.Root)
	if err != nil {
		bf.missing = err.Error()
		return nil
	}
	defer repo.Close()
	base, label, err := repo.DefaultBase(b.o.Branch)
	if errors.Is(err, gitbase.ErrNoHistory) {
		return nil // the first commit: everything is new, nothing to hold it to
	}
	if err != nil {
		bf.missing = err.Error()
		return nil
	}
	tree, err := repo.FS(base)
	if err != nil {
		return err
	}
	checker, err := b.o.Checker()
	if err != nil {
		return err
	}
	f, diags := load(tree, checker)
	if diags.HasErrors() {
		bf.missing = fmt.Sprintf("the config at the base %s (%s) does not load (first error: %s)", base.Hash.String()[:8], label, firstError(diags))
		return nil
	}
	bf.fleet, bf.label = f, base.Hash.String()[:8]+" ("+label+")"
	return nil
}

// notRun meets a rule that could not run: a *NotRunError on CI, else a
// warning, once per rule.
func (b *Base) notRun(rule, why string) error {
	if b.o.CI {
		return &NotRunError{Rule: rule, Why: why}
	}
	if b.o.Warn != nil && !b.warned[rule] {
		if b.warned == nil {
			b.warned = map[string]bool{}
		}
		b.warned[rule] = true
		b.o.Warn(rule, why)
	}
	return nil
}

// Lifecycle holds each cluster's deletion phase to the merge base's
// (diff.Lifecycle); head was loaded with headDiags.
//
// Without a base (a fleet outside a repository, a clone without the deploy
// branch), the last render's deploy/index.json remembers each cluster's
// phase; old is that index when the caller has read it already. With
// neither, the rule cannot run (notRun).
func (b *Base) Lifecycle(head *config.Fleet, headDiags diag.Diagnostics, old *render.Index) (diag.Diagnostics, error) {
	base, err := b.phaseBase(head, headDiags)
	if err != nil {
		return nil, err
	}
	if base.fleet != nil {
		return diff.Lifecycle(base.fleet, head, base.label), nil
	}
	if old == nil {
		old, _ = deploytree.ReadIndex(deploytree.OS{}, filepath.Join(b.o.Root, deployDir))
	}
	if old != nil {
		return diff.LifecycleOfIndex(old, head, "deploy/index.json (the last render)"), nil
	}
	if base.missing == "" {
		return nil, nil // the first commit: no cluster existed before
	}
	return nil, b.notRun("deletion-phase check", base.missing)
}

// LifecycleAtRisk says whether a render of head could break a cluster's
// deletion phases, given the last render's index (old, nil when there is
// none): a cluster with delete_pipeline: true, a cluster old lists that
// head no longer has, or no index at all (its loss is no reason to forget
// what existed: the merge base in git remembers). Otherwise nothing can
// have skipped a phase, and the merge base need not be loaded.
func LifecycleAtRisk(head *config.Fleet, old *render.Index) bool {
	need := old == nil
	now := map[string]bool{}
	for _, c := range head.Clusters {
		now[c.ID()] = true
		need = need || c.Bool("delete_pipeline")
	}
	if old != nil {
		for _, c := range old.Clusters {
			need = need || !now[c.ID]
		}
	}
	return need
}

// Waves refuses skipped rollout waves: versioned values head gives a
// sector, compared with the merge base, while an earlier sector runs them
// nowhere. A sector's rollout_exceptions entry turns the error into a
// warning. Without a base there is nothing to compare with (notRun).
// headDiags are head's diagnostics as it loaded.
func (b *Base) Waves(head *config.Fleet, headDiags diag.Diagnostics) (diag.Diagnostics, error) {
	base, err := b.merged(head, headDiags)
	if err != nil {
		return nil, err
	}
	if base.fleet == nil {
		if base.missing == "" {
			return nil, nil
		}
		return nil, b.notRun("rollout-wave check", base.missing)
	}
	keys, err := schema.RolloutKeys()
	if err != nil {
		return nil, err
	}
	var out diag.Diagnostics
	for _, w := range diff.SkippedWaves(base.fleet, head, keys) {
		d := diag.Diagnostic{
			Severity: diag.Error,
			Pos:      w.Pos,
			Path:     w.Key,
			Summary:  w.Reach() + " (skipped wave)",
			Detail: fmt.Sprintf("Compared with %s. Roll the value out sector by sector (regionctl rollout status), or say why this sector goes first in config/sectors/%s.yaml:\n"+
				"  rollout_exceptions:\n    - key: %s\n      value: %q\n      reason: <why>", base.label, w.Sector, w.Key, w.Value),
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

// Calendar holds f's EKS versions to the support calendar at
// CalendarDate(root).
func Calendar(f *config.Fleet, root string) (diag.Diagnostics, error) {
	at, when := CalendarDate(root)
	return CalendarAt(f, at, when)
}

// CalendarAt holds f's EKS versions to the support calendar at date at,
// which when names.
func CalendarAt(f *config.Fleet, at time.Time, when string) (diag.Diagnostics, error) {
	cal, err := ekscalendar.Load()
	if err != nil {
		return nil, err
	}
	return cal.Check(f, at, when), nil
}

// CalendarDate is the date the support calendar is held at, and what it
// is: SOURCE_DATE_EPOCH when set (a reproducible build's date), else the
// date of the commit whose config this is (HEAD, when config/ holds no
// uncommitted change), so that checking an old commit again gives the
// same answer; else today.
func CalendarDate(root string) (time.Time, string) {
	if at, ok := sourceDate(); ok {
		return at, "SOURCE_DATE_EPOCH"
	}
	repo, err := gitbase.Open(root)
	if err != nil {
		return time.Now().UTC(), "today"
	}
	defer repo.Close()
	head, err := repo.Commit("HEAD")
	if err != nil {
		return time.Now().UTC(), "today"
	}
	changed, err := repo.Changed(head, root, configDir)
	return CalendarDateOf(head, err != nil || len(changed) > 0)
}

// CalendarDateOf is CalendarDate for a working tree whose HEAD is head and
// whose config/ does or does not hold uncommitted changes (dirty), for a
// caller that has found both (a review of the working tree).
func CalendarDateOf(head *object.Commit, dirty bool) (time.Time, string) {
	if at, ok := sourceDate(); ok {
		return at, "SOURCE_DATE_EPOCH"
	}
	if dirty {
		return time.Now().UTC(), "today: config/ has uncommitted changes"
	}
	return head.Committer.When.UTC(), "the date of commit " + head.Hash.String()[:8]
}

// sourceDate is SOURCE_DATE_EPOCH's date, when it is set to a number.
func sourceDate() (time.Time, bool) {
	n, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	return time.Unix(n, 0).UTC(), err == nil
}

// DeployBranch is the branch the fleet under root deploys from:
// gitops.revision as the working tree's config/global sets it (its files
// merge in name order, a later one overriding), when it is a branch name
// (ValidBranch), else main. Reviews and the wave and deletion checks
// compare with it, not with a branch name regionctl assumes.
func DeployBranch(root string) string {
	branch := gitbase.DefaultBranch
	dir := filepath.Join(root, configDir, "global")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return branch
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
		if r := v.Lookup("gitops", "revision"); r != nil && r.Kind == config.String && ValidBranch(r.Str) {
			branch = r.Str
		}
	}
	return branch
}

// ValidBranch says whether name may be used as a branch name where it
// reaches a command's argument or a Task's: letters, digits and ._/-, not
// starting with one of the last four, without "..", at most 200 bytes.
func ValidBranch(name string) bool {
	return branchRE.MatchString(name) && !strings.Contains(name, "..")
}

var branchRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$`)

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
