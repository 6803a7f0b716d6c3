package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/argohealth"
	"github.com/regionctl/regionctl/internal/atomicfile"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/rollout"
	"github.com/regionctl/regionctl/internal/schema"
)

func (a *app) rolloutCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Follow versioned values as they roll out sector by sector"}
	var out *output
	status := &cobra.Command{
		Use:   "status [key]",
		Short: "Show which sectors and regions run which value of each versioned key, since when, and what blocks the next sector",
		Long: `status lists, for each versioned value (fields marked @rollout() in the schema,
e.g. eks.version or components.<name>.image), the value each sector runs, in
which regions, and since which commit (git blame of the line that sets it).
The value the first sector runs is the target; the next sector to promote is
the first that does not run it everywhere, blocked while the sector before it
is still behind or soaking (its soak time from the sector file, counted from
when the commit that gave it the value reached the deploy branch, gitops.revision
(default main): origin/<branch>, else <branch>, in first-parent history, so a branch commit soaks from its merge and a value
only on a branch has not started soaking).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.validFleet()
			if err != nil {
				return err
			}
			keys, err := schema.RolloutKeys()
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			var history rollout.Blamer
			if repo, err := gitbase.Open(a.root); err == nil {
				defer repo.Close()
				if head, err := repo.Commit("HEAD"); err == nil {
					b := repo.Blamer(head, a.root)
					if main, _ := repo.Mainline(a.deployBranch()); main != nil {
						b.WithMainline(main)
					}
					history = b
				}
			}
			only := ""
			if len(args) == 1 {
				only = args[0]
			}
			st, err := rollout.Status(f, keys, only, history, time.Now())
			if err != nil {
				return fail(ExitInput, "%v", err)
			}
			if out.format == "json" {
				return writeJSON(a.stdout, st)
			}
			a.printer(a.stdout).RolloutStatus(st)
			return nil
		},
	}
	out = outputFlag(status, "", "text", "json")
	status.ValidArgsFunction = a.rolloutCompleter(false)
	cmd.AddCommand(status, a.promoteCommand())
	return cmd
}

// promoteLong is rollout promote's help.
const promoteLong = `promote edits config/ so that the next sector without the value gets it: only
that value changes in the sector file, comments and layout stay. It refuses while
the sector before it has not soaked (its soak time, counted from when the commit
that gave it the value reached main, as status says), when that sector's Argo CD Applications are not all Healthy
and Synced at that commit or later, or when regions of the next sector pin
another value. When every sector runs the value, it moves into config/global and
the sector pins go. promote then renders deploy/ (as regionctl render does),
so config/ and deploy/ change together; when the result does not render,
config/ is put back. promote never commits: it prints what it changed and the
commit message to use.

The gate names every cluster of that sector that blocks. Where it looks
(--health-from):

  reports  (the default in the per-cluster topology) what each cluster's
           argocd-health-reporter last put into its region's health bucket
           (argocd.health_bucket), read with your AWS credentials: each
           cluster must have reported once, within --health-max-age by S3's
           clock. The seeds' clusters are private; this is how their health
           gets out.
  argocd   (the default in the central topology) the Argo CD that manages
           each cluster: its argocd.endpoint in config, or --argocd-server
           (ARGOCD_SERVER) for all. --argocd-auth-token (ARGOCD_AUTH_TOKEN),
           --insecure and --plaintext are as the argocd CLI takes them.`

func (a *app) promoteCommand() *cobra.Command {
	var skipHealth, allowDowngrade bool
	var healthFrom string
	var maxAge time.Duration
	argo := argohealth.Client{}
	cmd := &cobra.Command{
		Use:   "promote <key> <value>",
		Short: "Give a versioned value to the next sector that lacks it (or to config/global once all have it)",
		Long:  promoteLong,
		Example: `  regionctl rollout promote eks.version 1.32
  regionctl rollout promote hypershift.operator_image quay.io/...@sha256:... --skip-health`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.validFleet()
			if err != nil {
				return err
			}
			order, err := schema.RolloutOrderOf(args[0])
			var notVersioned *schema.NotVersionedError
			switch {
			case errors.As(err, &notVersioned):
				return fail(ExitUsage, "%v", err)
			case err != nil:
				return fail(ExitExternal, "%v", err)
			}
			opts := rollout.PromoteOptions{Now: time.Now(), SkipHealth: skipHealth, Order: order, AllowDowngrade: allowDowngrade,
				Read: func(file string) ([]byte, error) { return os.ReadFile(filepath.Join(a.root, file)) }}
			if repo, err := gitbase.Open(a.root); err == nil {
				defer repo.Close()
				if head, err := repo.Commit("HEAD"); err == nil {
					b := repo.Blamer(head, a.root)
					if main, _ := repo.Mainline(a.deployBranch()); main != nil {
						b.WithMainline(main)
					}
					opts.History = b
				}
				argo.Repo = repo
			}
			argo.WithEnv(os.Getenv)
			if !skipHealth {
				if opts.Health, err = healthGate(cmd.Context(), f, argo, healthFrom, maxAge); err != nil {
					return err
				}
			}
			p, err := rollout.Promote(f, args[0], args[1], opts)
			var refused *rollout.Refusal
			if errors.As(err, &refused) {
				return fail(ExitInput, "not promoting %s %s: %s", args[0], args[1], refused.Reason)
			}
			if err != nil {
				return fail(ExitInput, "%v", err)
			}
			if err := a.applyEdits(p.Edits); err != nil {
				return err
			}
			pr := a.printer(a.stdout)
			for _, e := range p.Edits {
				pr.Unified(diff.Unified("a/"+e.File, "b/"+e.File, e.Before, e.After, 2))
			}
			// deploy/ follows config/ in the same change: render it now, or
			// put config/ back as it was.
			if _, _, err := a.renderDeploy(false, "text"); err != nil {
				a.restoreEdits(p.Edits)
				return fail(ExitInput, "not promoting %s %s: the promoted config does not render (config/ is restored): %v", args[0], args[1], err)
			}
			fmt.Fprintf(a.stdout, "\nNothing is committed. Review config/ and deploy/, then commit both with:\n\n%s", indent(p.Message))
			return nil
		},
	}
	cmd.ValidArgsFunction = a.rolloutCompleter(true)
	cmd.Flags().BoolVar(&skipHealth, "skip-health", false, "promote without the Argo CD health gate (named in the commit message)")
	cmd.Flags().BoolVar(&allowDowngrade, "allow-downgrade", false, "give a sector a value older than one it runs (semver-ordered keys; named in the commit message)")
	cmd.Flags().StringVar(&healthFrom, "health-from", "", "where the health gate looks: reports (the clusters' reports in their regions' health buckets) or argocd (default: reports, argocd in the central topology)")
	cmd.Flags().DurationVar(&maxAge, "health-max-age", 10*time.Minute, "the oldest report the gate accepts (--health-from reports)")
	cmd.Flags().StringVar(&argo.Server, "argocd-server", "", "Argo CD API server (default $ARGOCD_SERVER)")
	cmd.Flags().StringVar(&argo.Token, "argocd-auth-token", "", "Argo CD token (default $ARGOCD_AUTH_TOKEN)")
	cmd.Flags().BoolVar(&argo.Insecure, "insecure", os.Getenv("ARGOCD_INSECURE") == "true", "skip TLS verification of the Argo CD server")
	cmd.Flags().BoolVar(&argo.Plaintext, "plaintext", false, "talk to Argo CD over plain HTTP")
	return cmd
}

// healthGate is the gate --health-from names: the clusters' reports
// (the default in the per-cluster topology) or Argo CD's API (in the
// central one).
func healthGate(ctx context.Context, f *config.Fleet, argo argohealth.Client, from string, maxAge time.Duration) (rollout.Health, error) {
	if from == "" {
		from = "reports"
		if render.GitOpsOf(f).Topology == "central" {
			from = "argocd"
		}
	}
	switch from {
	case "reports":
		g, err := reportGate(ctx, f, argo, maxAge)
		if err != nil {
			return nil, fail(ExitExternal, "%v", err)
		}
		return g, nil
	case "argocd":
		return &argohealth.Gate{Client: argo, Targets: func(sector string) ([]argohealth.Target, error) {
			return healthTargets(f, sector, argo.Server)
		}}, nil
	}
	return nil, fail(ExitUsage, "--health-from %q: reports or argocd", from)
}

// healthTargets are the clusters of a sector with the Argo CD that
// manages each: server for all when set, else each cluster's
// argocd.endpoint.
func healthTargets(f *config.Fleet, sector, server string) ([]argohealth.Target, error) {
	var out []argohealth.Target
	var missing []string
	for _, c := range f.Clusters {
		if c.SectorName() != sector || c.Deleting() {
			continue
		}
		endpoint := server
		if endpoint == "" {
			if v := c.Effective.Lookup("argocd", "endpoint"); v != nil && v.Kind == config.String {
				endpoint = v.Str
			}
		}
		if endpoint == "" {
			missing = append(missing, c.ID())
			continue
		}
		out = append(out, argohealth.Target{Region: c.Region.Name, Cluster: c.Name, Endpoint: endpoint})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no Argo CD endpoint for %s: set argocd.endpoint in config (or pass --argocd-server)", strings.Join(missing, ", "))
	}
	return out, nil
}

// applyEdits writes each edit atomically, then checks the fleet still
// validates; if it does not, every file is put back as it was.
// restoreEdits puts back the files edits changed.
func (a *app) restoreEdits(edits []rollout.Edit) {
	undo := make([]rollout.Edit, len(edits))
	for i, e := range edits {
		undo[i] = rollout.Edit{File: e.File, Before: e.After, After: e.Before}
	}
	_ = a.applyEdits(undo)
}

func (a *app) applyEdits(edits []rollout.Edit) error {
	write := func(file string, data []byte) error {
		return atomicfile.Write(filepath.Join(a.root, file), data, ".promote-*")
	}
	restore := func() {
		for _, e := range edits {
			_ = write(e.File, e.Before)
		}
	}
	for _, e := range edits {
		if err := write(e.File, e.After); err != nil {
			restore()
			return fail(ExitExternal, "writing %s: %v", e.File, err)
		}
	}
	if _, diags, err := a.loadFleet(); err != nil || diags.HasErrors() {
		restore()
		a.printer(a.stderr).Diagnostics(diags)
		return fail(ExitInput, "the promotion would make the fleet invalid; nothing was changed")
	}
	return nil
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("    " + l)
		}
	}
	return b.String()
}
