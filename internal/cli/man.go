package cli

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manCommand writes a man page per command, generated from the commands
// themselves, so the pages say what --help says. Release archives carry
// them (make dist).
func (a *app) manCommand() *cobra.Command {
	var date string
	cmd := &cobra.Command{
		Use:   "man DIR",
		Short: "Write regionctl's man pages (section 1) into DIR",
		Long: `man writes one page per command into DIR (regionctl.1, regionctl-render.1, ...),
generated from the same help text --help prints. --date (YYYY-MM-DD) is the
date the pages carry; releases pass the commit's date so that the pages are
reproducible.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			when := time.Now()
			if date != "" {
				t, err := time.Parse("2006-01-02", date)
				if err != nil {
					return fail(ExitUsage, "--date %q: want YYYY-MM-DD", date)
				}
				when = t
			}
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return fail(ExitExternal, "%v", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{Title: "REGIONCTL", Section: "1", Source: "regionctl " + Version, Manual: "regionctl manual", Date: &when}
			if err := doc.GenManTree(root, header, args[0]); err != nil {
				return fail(ExitExternal, "writing man pages: %v", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&date, "date", "", "the date the pages carry (default: today)")
	return cmd
}
