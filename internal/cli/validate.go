package cli

import (
	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/secrets"
)

func (a *app) validateCommand() *cobra.Command {
	var out *output
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the fleet config against the schemas",
		Long: `validate loads every layer file under config/, checks each against its
layer schema, merges every cluster's effective config and checks it against
#Cluster and the fleet constraints. In a git repository it also refuses a
skipped rollout wave: a versioned value the change gives a sector while an
earlier sector runs it nowhere (compared with the merge base of HEAD and
the deploy branch, gitops.revision: origin/<branch>, else <branch>), unless the sector's rollout_exceptions says why, and a cluster
deleted in fewer than three merged steps (delete: true, then
delete_pipeline: true, then removing its file). Every problem
is listed with the file, line and column to change. Exit status 1 when any
is an error.

-o json prints {"valid", "sectors", "regions", "clusters", "diagnostics":
[{"severity", "summary", "detail", "pos": {"file", "line", "col"}, ...}]}
on standard output instead (docs/diff-json.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, diags, err := a.loadFleet()
			if err != nil {
				return err
			}
			if !diags.HasErrors() {
				history, err := a.historyDiagnostics(f, diags)
				if err != nil {
					return err
				}
				diags = append(diags, history...)
			}
			if out.format == "json" {
				return a.validateJSON(f, diags)
			}
			if err := a.reportDiagnostics(diags); err != nil {
				return err
			}
			a.printer(a.stdout).OK("%d sectors, %d regions, %d clusters valid", len(f.Sectors), len(f.Regions), len(f.Clusters))
			return nil
		},
	}
	out = outputFlag(cmd, "", "text", "json")
	return cmd
}

// validateResult is `validate -o json`.
type validateResult struct {
	Valid       bool             `json:"valid"`
	Sectors     int              `json:"sectors"`
	Regions     int              `json:"regions"`
	Clusters    int              `json:"clusters"`
	Diagnostics []diagnosticJSON `json:"diagnostics"`
}

// diagnosticJSON is a diagnostic as scripts read it: its severity spelled
// out, and no secret material in any message.
type diagnosticJSON struct {
	Severity string `json:"severity"`
	diag.Diagnostic
}

func (a *app) validateJSON(f *config.Fleet, diags diag.Diagnostics) error {
	res := validateResult{Valid: !diags.HasErrors(), Diagnostics: []diagnosticJSON{}}
	if f != nil {
		res.Sectors, res.Regions, res.Clusters = len(f.Sectors), len(f.Regions), len(f.Clusters)
	}
	for _, d := range diags {
		sev := "error"
		if d.Severity == diag.Warning {
			sev = "warning"
		}
		d.Summary, d.Detail = secrets.Mask(d.Summary), secrets.Mask(d.Detail)
		for i := range d.Related {
			d.Related[i].Message = secrets.Mask(d.Related[i].Message)
		}
		res.Diagnostics = append(res.Diagnostics, diagnosticJSON{sev, d})
	}
	if err := writeJSON(a.stdout, res); err != nil {
		return err
	}
	if !res.Valid {
		return &exitError{code: ExitInput, err: errReported}
	}
	return nil
}
