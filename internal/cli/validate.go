package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) validateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Check the fleet config against the schemas",
		Long: `validate loads every layer file under config/, checks each against its
layer schema, merges every cluster's effective config and checks it against
#Cluster and the fleet constraints. In a git repository it also refuses a
skipped rollout wave: a versioned value the change gives a sector while an
earlier sector runs it nowhere (compared with the merge base of HEAD and
origin/main), unless the sector's rollout_exceptions says why. Every problem
is listed with the file, line and column to change. Exit status 1 when any
is an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, diags, err := a.loadFleet()
			if err != nil {
				return err
			}
			if !diags.HasErrors() {
				waves, err := a.waveDiagnostics(f)
				if err != nil {
					return err
				}
				diags = append(diags, a.relative(waves)...)
			}
			if err := a.reportDiagnostics(diags); err != nil {
				return err
			}
			a.printer(a.stdout).OK("%d sectors, %d regions, %d clusters valid", len(f.Sectors), len(f.Regions), len(f.Clusters))
			return nil
		},
	}
}
