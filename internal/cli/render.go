package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/diskfs"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/review"
	"github.com/regionctl/regionctl/internal/view"
)

// deployDir is where the rendered tree lives inside the root.
const deployDir = "deploy"

func (a *app) renderCommand() *cobra.Command {
	var check, pruneForeign, showDiff, allowDrift, exitCode, manifests bool
	var base string
	var out *output
	cmd := &cobra.Command{
		Use:   "render [--check | --diff [--base REF]] [-o text|json|markdown]",
		Short: "Compile the fleet into deploy/",
		Long:  renderLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showDiff {
				return a.runDiff(base, out.format, allowDrift, exitCode, manifests)
			}
			if cmd.Flags().Changed("base") || cmd.Flags().Changed("full") || cmd.Flags().Changed("allow-drift") || exitCode {
				return fail(ExitUsage, "--base, --full, --allow-drift and --exit-code go with --diff")
			}
			if out.format == "markdown" {
				return fail(ExitUsage, "-o markdown goes with --diff")
			}
			// A render may trust size and time to skip work it would
			// only redo; --check, the gate CI runs, compares the bytes.
			if n, ok := a.unchangedSinceLastRender(); ok && !pruneForeign && !check {
				return a.reportUnchanged(check, n, out.format)
			}
			if !pruneForeign && !check {
				if c, ok := a.committedByThisRenderer(); ok {
					a.recordRenderWith(c.Files, writtenTree{stats: c.Stats})
					return a.reportCommitted(c.Files, c.Commit, out.format)
				}
			}
			a.snapshotInputsBeside()
			if !check {
				rendered, tree, err := a.renderDeploy(pruneForeign, out.format)
				if err != nil {
					return err
				}
				a.recordRenderWith(len(rendered.Artifacts), tree)
				return nil
			}
			return a.runCheck(out.format)
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; fail when deploy/ is stale")
	cmd.Flags().BoolVar(&pruneForeign, "prune-foreign", false, "delete files in deploy/ that regionctl did not write")
	cmd.Flags().BoolVar(&showDiff, "diff", false, "write nothing; show what the change since --base does")
	cmd.Flags().StringVar(&base, "base", "", "git ref to compare with (default: merge base of HEAD and the deploy branch, gitops.revision: origin/<branch>, else <branch>)")
	out = outputFlag(cmd, "format", "text", "json", "markdown")
	cmd.Flags().BoolVar(&a.fullReview, "full", false, "with --diff: render every cluster on both sides, not only those whose inputs differ")
	cmd.Flags().BoolVar(&allowDrift, "allow-drift", false, "with --diff: report drift in deploy/ without failing")
	cmd.Flags().BoolVar(&manifests, "manifests", true, "with --diff: render the charts of this repository that the change's Applications use, on both sides, and show the objects that change (Helm's renderer)")
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "with --diff: exit 2 when the change does something, 0 when it does nothing, 1 on any error (as terraform plan -detailed-exitcode)")
	cmd.MarkFlagsMutuallyExclusive("check", "diff")
	return cmd
}

// renderLong is render's help.
const renderLong = `render validates the fleet and writes deploy/: per region its IAM documents and
the central bootstrap's Terraform variables, per cluster its effective config
and Terraform variables, and index.json. deploy/ is replaced atomically: a
render that fails leaves it exactly as it was. Files of removed regions and
clusters are pruned; files regionctl did not write stop the render. In a git
repository it refuses what validate refuses against the merge base: a skipped
rollout wave, and a cluster deleted in fewer than three steps; so do --check,
--diff and affected.

--check writes nothing and fails (exit 1) when deploy/ is not what the config
renders to, listing the stale, missing and extra files.

--diff writes nothing either: it renders the base ref (read from git objects,
no checkout; default the merge base of HEAD and the deploy branch named by
gitops.revision, default main: origin/<branch>, else <branch>) and
the working tree, and shows what the change does: destroyed clusters and
pruned files, skipped rollout waves, drift, the blast radius by sector in
rollout order with the pipelines that will run, every changed value with the
file and line that set it, the objects Argo CD will apply differently, and
the rendered files' diffs. -o markdown fits one
pull request comment; -o json is for bots (docs/diff-json.md). With
--exit-code it exits 2 when the change does something, 0 when it does
nothing and 1 on any error.

The objects: for each changed Application of a chart of this repository
(charts/; in the central topology, what an ApplicationSet makes of a
cluster's Secret and values file), the chart is rendered on both sides with Helm's own Go packages as
helm template --include-crds renders it (the Application's release name,
namespace and values, held to the chart's values.schema.json; the cluster's
eks.version; Helm's default API versions; no cluster lookups), at the
Application's targetRevision: a tag of this clone, else a full commit hash,
else (and a note says so) the side's own charts/. Each object that changes is
shown once with every cluster it changes on alike; Secret values never show.
A head chart that does not render fails the review (exit 1), as Argo CD's
sync would fail; values that the schema of the chart at the revision named
refuses fail it at their file and line in config/, as render's check of the
working tree's chart does. Another project's chart (a Helm repository's, an
OCI registry's, or a git repository's directory at a tag) or kustomization
(built as kustomize build builds it, nothing remote) is rendered from the
chart cache (regionctl charts pull, --base for the base's revisions) when
both sides' revisions are there, as each side's charts.lock pins them (one
it does not pin is rendered with a note; a cache holding another is not
rendered); the review never fetches. A note lists what was left out, and the
commit or manifest each tag named.
--manifests=false leaves the objects out.

-o json also describes a render (the files added, changed and pruned) and a
--check (the stale, missing and extra files) for scripts.

The base is what it committed to deploy/: a file a newer regionctl renders
differently shows as changed in the commit that re-renders it, and its
pipelines run.

A render that finds every file it read and wrote as its last clean render
left them (by size and time, or by content for files written just before)
renders nothing; nor does the first render of a clean checkout of a commit
on the deploy branch's first-parent history whose index.json names this
renderer, since that commit's CI held it to render --check. --check always
renders and compares bytes.

When the base's committed deploy/ was rendered by this renderer (its
index.json names the renderer "regionctl version" prints, which every build
of the same renderer source shares, however built) and the base is on the
deploy branch's first-parent history, --diff checks only the
clusters whose inputs differ between the two sides and renders them for the
head alone (the base's files are the ones its index.json lists): the others
render the same on both, so they cannot change. Their committed files are
held to the base's instead, so drift the change adds is reported and drift
the base already had is left to render --check. A build of modified sources,
and --full, render every cluster on both sides.`

// runCheck is render --check: the rendered files are compared with
// deploy/ as each region and cluster is rendered, so that they are not all
// held, and nothing is written.
func (a *app) runCheck(format string) error {
	dir := filepath.Join(a.root, deployDir)
	stream, err := deploytree.Compare(deploytree.OS{}, dir)
	if err != nil {
		return deployFail(err)
	}
	rendered, err := a.renderFleetTo(stream.Put, a.startHistoryBeside(stream.Index()))
	if err != nil {
		return err
	}
	a.settleHeap()
	if err := a.renderLifecycle(stream.Index()); err != nil {
		return err
	}
	if err := a.renderWaves(); err != nil {
		return err
	}
	ch, err := stream.Finish(rendered)
	if err != nil {
		return deployFail(err)
	}
	if ch.Clean() {
		a.recordRenderWith(len(rendered.Artifacts), writtenTree{stream.Stats(), stream.Sums()})
	}
	return a.reportCheck(dir, ch, format)
}

// renderDeploy renders the working tree into deploy/ and prints what
// changed. Each region's and cluster's files go to deploy/'s staging tree
// as they are rendered, so that they are not all held at once; deploy/ is
// replaced only once the whole fleet rendered and passed its checks. It
// returns the size and time of each file of deploy/ as it wrote or read
// them, and the hashes of the last it wrote.
func (a *app) renderDeploy(pruneForeign bool, format string) (*render.Output, writtenTree, error) {
	dir := filepath.Join(a.root, deployDir)
	stream, err := deploytree.Begin(deploytree.OS{}, dir, deploytree.Options{PruneForeign: pruneForeign, LockWait: 2 * time.Minute,
		Waiting: func(holder string) {
			fmt.Fprintf(a.stderr, "waiting for another render of %s to finish (%s)...\n", a.display(dir), holder)
		}})
	if err != nil {
		return nil, writtenTree{}, deployFail(err)
	}
	defer stream.Abort()
	out, err := a.renderFleetTo(stream.Put, a.startHistoryBeside(stream.Index()))
	if err != nil {
		return nil, writtenTree{}, err
	}
	a.settleHeap()
	if err := a.writeDeploy(stream, out, format); err != nil {
		return nil, writtenTree{}, err
	}
	return out, writtenTree{stream.Stats(), stream.Sums()}, nil
}

// writeDeploy replaces deploy/ with a rendered fleet (a.fleet), whose
// region and cluster files went to stream as they were rendered, and
// prints what changed.
func (a *app) writeDeploy(stream *deploytree.Stream, out *render.Output, format string) error {
	dir := filepath.Join(a.root, deployDir)
	old := stream.Index()
	if err := a.reportDiagnostics(render.CheckRemovals(old, a.fleet)); err != nil {
		return err
	}
	if err := a.renderLifecycle(old); err != nil {
		return err
	}
	if err := a.renderWaves(); err != nil {
		return err
	}
	ch, err := stream.Finish(out)
	if err != nil {
		return deployFail(err)
	}
	if format == "json" {
		return writeJSON(a.stdout, renderResult{Dir: a.display(dir), Files: len(out.Artifacts), Added: ch.Added, Changed: ch.Changed,
			Pruned: append(append([]string{}, ch.Removed...), ch.Foreign...), Unchanged: len(ch.Unchanged)})
	}
	a.printer(a.stdout).RenderSummary(a.display(dir), len(out.Artifacts), ch.Added, ch.Changed, ch.Removed, ch.Foreign)
	return nil
}

// deployFail is the exit for an error reading or replacing deploy/: the
// user's to fix (files regionctl did not write, links, another render
// holding it, an index.json it did not write), or the system's.
func deployFail(err error) error {
	var foreign *deploytree.ForeignFilesError
	var links *deploytree.LinksError
	var locked *deploytree.LockedError
	var index *deploytree.IndexError
	if errors.As(err, &foreign) || errors.As(err, &links) || errors.As(err, &locked) || errors.As(err, &index) {
		return fail(ExitInput, "%v", err)
	}
	return fail(ExitExternal, "%v", err)
}

// renderFleet loads, validates and renders the working tree, reporting
// problems.
func (a *app) renderFleet() (*render.Output, error) { return a.renderFleetTo(nil, nil) }

// renderFleetTo is renderFleet handing each region's and cluster's files to
// sink as they are rendered (render.Options.Sink; nil keeps them all), and
// calling loaded once the fleet is loaded (render.Options.Loaded).
func (a *app) renderFleetTo(sink func([]render.Artifact) error, loaded func(*config.Fleet, diag.Diagnostics)) (*render.Output, error) {
	opts := a.renderOptions()
	opts.Sink, opts.Loaded = sink, loaded
	f, out, diags, err := a.renderFSWith(diskfs.New(a.root), opts)
	if err != nil {
		return nil, err
	}
	a.fleet, a.fleetDiags = f, diags
	if err := a.reportDiagnostics(a.relative(diags)); err != nil {
		return nil, err
	}
	return out, nil
}

// renderFS renders the repository in fsys through the result cache.
func (a *app) renderFS(fsys fs.FS) (*config.Fleet, *render.Output, diag.Diagnostics, error) {
	return a.renderFSWith(fsys, a.renderOptions())
}

func (a *app) renderFSWith(fsys fs.FS, opts render.Options) (*config.Fleet, *render.Output, diag.Diagnostics, error) {
	checker, err := a.checker()
	if err != nil {
		return nil, nil, nil, err
	}
	f, out, diags, err := render.FromFS(fsys, checker, opts)
	if err != nil {
		return nil, nil, nil, fail(ExitInput, "%v", err)
	}
	return f, out, diags, nil
}

// renderOptions are the options of every render of this invocation: one
// memo, and the result cache unless --no-cache (the memo alone shares
// renders within the run, without a second, encoded copy of them).
func (a *app) renderOptions() render.Options {
	if a.renderMemo == nil {
		a.renderMemo = &render.Memo{}
	}
	opts := render.Options{Renderer: renderer().ID, CacheSalt: cacheSalt(), Memo: a.renderMemo}
	if a.store != nil {
		opts.Cache = a.store
	}
	return opts
}

func (a *app) reportCheck(dir string, ch *deploytree.Changes, format string) error {
	extra := append(append([]string{}, ch.Removed...), ch.Foreign...)
	if format == "json" {
		if err := writeJSON(a.stdout, checkResult{Dir: a.display(dir), UpToDate: ch.Clean(), Stale: ch.Changed, Missing: ch.Added, Extra: extra}); err != nil {
			return err
		}
		if ch.Clean() {
			return nil
		}
		return &exitError{code: ExitInput, err: errReported}
	}
	if ch.Clean() {
		a.printer(a.stdout).OK("%s is up to date (%d files)", a.display(dir), len(ch.Unchanged))
		return nil
	}
	a.printer(a.stderr).StaleTree(a.display(dir), ch.Changed, ch.Added, extra)
	fix := "regionctl render"
	if a.root != "." {
		fix += " --root " + a.root
	}
	return fail(ExitInput, "%s is stale; run `%s` and commit the result", a.display(dir), fix)
}

// display shows a path relative to the working directory.
func (a *app) display(p string) string {
	if rel, err := filepath.Rel(".", p); err == nil {
		return filepath.ToSlash(rel)
	}
	return fmt.Sprint(p)
}

// reportUnchanged says that deploy/ is up to date without rendering: its
// files and the render's inputs are as the last clean render left them.
func (a *app) reportUnchanged(check bool, files int, format string) error {
	dir := a.display(filepath.Join(a.root, deployDir))
	if format == "json" {
		if check {
			return writeJSON(a.stdout, checkResult{Dir: dir, UpToDate: true})
		}
		return writeJSON(a.stdout, renderResult{Dir: dir, Files: files, Unchanged: files})
	}
	if check {
		a.printer(a.stdout).OK("%s is up to date (%d files; nothing changed since the last render, by size and time)", dir, files)
	} else {
		a.printer(a.stdout).OK("%s is up to date (%d files; nothing changed since the last render, by size and time), nothing written", dir, files)
	}
	return nil
}

// reportCommitted says a render found deploy/ as the deploy branch's
// commit holds it, rendered by this renderer (committedByThisRenderer).
func (a *app) reportCommitted(files int, commit, format string) error {
	dir := a.display(filepath.Join(a.root, deployDir))
	if format == "json" {
		return writeJSON(a.stdout, renderResult{Dir: dir, Files: files, Unchanged: files})
	}
	a.printer(a.stdout).OK("%s is up to date (%d files; as commit %s of %s holds them, rendered by this renderer and checked by its CI), nothing written", dir, files, commit, a.deployBranch())
	return nil
}

// renderResult is `render -o json`: what the render wrote.
type renderResult struct {
	Dir       string   `json:"dir"`
	Files     int      `json:"files"`
	Added     []string `json:"added"`
	Changed   []string `json:"changed"`
	Pruned    []string `json:"pruned"`
	Unchanged int      `json:"unchanged"`
}

// checkResult is `render --check -o json`: how deploy/ differs from the
// render (exit 1 unless up to date).
type checkResult struct {
	Dir      string   `json:"dir"`
	UpToDate bool     `json:"up_to_date"`
	Stale    []string `json:"stale"`
	Missing  []string `json:"missing"`
	Extra    []string `json:"extra"`
}

func (a *app) runDiff(base, format string, allowDrift, exitCode, manifests bool) error {
	res, err := a.reviewOf(review.Options{Base: base, Drift: true, Manifests: manifests, ChartCache: chartCache()})
	if err != nil {
		return err
	}
	r := res.Report
	// The report is written in many small pieces (6,000 at a sector's
	// change of 2,200 clusters): one system call each, unbuffered.
	out := bufio.NewWriterSize(a.stdout, 64<<10)
	switch format {
	case "json":
		err = writeJSON(out, r)
	case "markdown":
		_, err = fmt.Fprint(out, view.DiffMarkdown(r))
	default:
		a.printer(out).DiffText(r)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if err := a.driftError(r, allowDrift); err != nil {
		return err
	}
	if err := wavesError(r); err != nil {
		return err
	}
	return changesExit(exitCode && !r.Empty())
}

// changesExit is the answer of a review that found changes, with
// --exit-code: Run turns it into ExitChanges.
func changesExit(changed bool) error {
	if !changed {
		return nil
	}
	return &exitError{code: exitChanges, err: errReported}
}

// wavesError fails a review whose change skips a rollout wave without a
// rollout_exceptions entry: the rule validate and render hold, so that no
// command passes what another refuses.
func wavesError(r *diff.Report) error {
	var skipped []string
	for _, w := range r.Waves {
		if w.Exception == "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", w.Reach(), w.Origin))
		}
	}
	if len(skipped) == 0 {
		return nil
	}
	return fail(ExitInput, "skipped rollout wave: %s; roll the value out sector by sector, or give the sector a rollout_exceptions entry that says why (regionctl validate shows it)",
		strings.Join(skipped, "; "))
}

// driftError fails a review whose deploy/ holds files that are not what
// its config renders to: what runs would not be what was reviewed.
func (a *app) driftError(r *diff.Report, allow bool) error {
	if len(r.Drift) == 0 {
		return nil
	}
	if allow {
		if a.quiet {
			return nil
		}
		fmt.Fprintf(a.stderr, "warning: drift: %s not what config/ renders to; run regionctl render\n", filesAre(len(r.Drift)))
		return nil
	}
	return fail(ExitInput, "drift: %s not what config/ renders to (%s); run regionctl render and commit, or pass --allow-drift to only warn",
		filesAre(len(r.Drift)), clusterOrFiles(r.Drift))
}

func filesAre(n int) string {
	if n == 1 {
		return "1 file in deploy/ is"
	}
	return fmt.Sprintf("%d files in deploy/ are", n)
}

func clusterOrFiles(paths []string) string {
	if len(paths) <= 3 {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:3], ", "), len(paths)-3)
}
