package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/rollout"
	"github.com/regionctl/regionctl/internal/schema"
)

func (a *app) rolloutCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Follow versioned values as they roll out sector by sector"}
	var output string
	status := &cobra.Command{
		Use:   "status [key]",
		Short: "Show which sectors and regions run which value of each versioned key, since when, and what blocks the next sector",
		Long: `status lists, for each versioned value (fields marked @rollout() in the schema,
e.g. eks.version or components.<name>.image), the value each sector runs, in
which regions, and since which commit (git blame of the line that sets it).
The value the first sector runs is the target; the next sector to promote is
the first that does not run it everywhere, blocked while the sector before it
is still behind or soaking (its soak time from the sector file, counted from
the commit that gave it the value).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fail(ExitUsage, "--output must be text or json, not %q", output)
			}
			f, diags, err := a.loaded()
			if err != nil {
				return err
			}
			if err := a.reportDiagnostics(diags); err != nil {
				return err
			}
			keys, err := schema.RolloutKeys()
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			var history rollout.Blamer
			if repo, err := gitbase.Open(a.root); err == nil {
				if head, err := repo.Commit("HEAD"); err == nil {
					history = repo.Blamer(head, a.root)
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
			if output == "json" {
				return writeJSON(a.stdout, st)
			}
			a.printer(a.stdout).RolloutStatus(st)
			return nil
		},
	}
	status.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.AddCommand(status)
	return cmd
}
