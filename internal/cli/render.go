package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
)

// deployDir is where the rendered tree lives inside the root.
const deployDir = "deploy"

func (a *app) renderCommand() *cobra.Command {
	var check, pruneForeign bool
	cmd := &cobra.Command{
		Use:   "render [--check]",
		Short: "Compile the fleet into deploy/",
		Long: `render validates the fleet and writes deploy/: per region its IAM documents and
the central bootstrap's Terraform variables, per cluster its effective config
and Terraform variables, and index.json. deploy/ is replaced atomically: a
render that fails leaves it exactly as it was. Files of removed regions and
clusters are pruned; files regionctl did not write stop the render.

--check writes nothing and fails (exit 1) when deploy/ is not what the config
renders to, listing the stale, missing and extra files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := a.renderFleet()
			if err != nil {
				return err
			}
			dir := filepath.Join(a.root, deployDir)
			disk := deploytree.OS{}
			if check {
				ch, _, err := deploytree.Plan(disk, dir, out)
				if err != nil {
					return fail(ExitExternal, "%v", err)
				}
				return a.reportCheck(dir, ch)
			}
			old, err := deploytree.ReadIndex(disk, dir)
			if err != nil {
				return fail(ExitInput, "%v", err)
			}
			f, _, _ := a.loaded()
			if err := a.reportDiagnostics(render.CheckRemovals(old, f)); err != nil {
				return err
			}
			ch, err := deploytree.Write(disk, dir, out, deploytree.Options{PruneForeign: pruneForeign})
			var foreign *deploytree.ForeignFilesError
			if errors.As(err, &foreign) {
				return fail(ExitInput, "%v", err)
			}
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			a.printer(a.stdout).RenderSummary(a.display(dir), len(out.Artifacts), ch.Added, ch.Changed, ch.Removed, ch.Foreign)
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; fail when deploy/ is stale")
	cmd.Flags().BoolVar(&pruneForeign, "prune-foreign", false, "delete files in deploy/ that regionctl did not write")
	return cmd
}

// renderFleet loads, validates and renders the fleet, reporting problems.
func (a *app) renderFleet() (*render.Output, error) {
	f, diags, err := a.loaded()
	if err != nil {
		return nil, err
	}
	if err := a.reportDiagnostics(diags); err != nil {
		return nil, err
	}
	charts, err := render.ReadCharts(os.DirFS(a.root))
	if err != nil {
		return nil, fail(ExitExternal, "%v", err)
	}
	pipelines, err := tekton.ReadPipelines(os.DirFS(a.root))
	if err != nil {
		return nil, fail(ExitInput, "reading %s: %v", tekton.Dir, err)
	}
	opts := render.Options{Version: Version, CacheSalt: binaryStamp(), Charts: charts, Pipelines: pipelines}
	if a.store != nil {
		opts.Cache = a.store
		defer a.store.Save()
	}
	out, rdiags := render.Render(f, opts)
	if err := a.reportDiagnostics(a.relative(rdiags)); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *app) reportCheck(dir string, ch *deploytree.Changes) error {
	if ch.Clean() {
		a.printer(a.stdout).OK("%s is up to date (%d files)", a.display(dir), len(ch.Unchanged))
		return nil
	}
	extra := append(append([]string{}, ch.Removed...), ch.Foreign...)
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
