package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// output is the -o/--output flag every read command takes: one name, the
// formats the command knows, checked before the command runs and completed
// by the shell.
type output struct {
	format  string
	formats []string
}

// outputFlag registers -o/--output on cmd with the formats it accepts, the
// first being the default. An old flag name (render's --format, affected's
// --emit) stays as a deprecated alias of the same value.
func outputFlag(cmd *cobra.Command, alias string, formats ...string) *output {
	o := &output{format: formats[0], formats: formats}
	usage := "output format: " + strings.Join(formats, ", ")
	cmd.Flags().StringVarP(&o.format, "output", "o", formats[0], usage)
	if alias != "" {
		cmd.Flags().StringVar(&o.format, alias, formats[0], usage)
		// Hidden, not MarkDeprecated: pflag would print its notice on
		// stdout, into the JSON a script reads.
		_ = cmd.Flags().MarkHidden(alias)
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if alias != "" && c.Flags().Changed(alias) {
			fmt.Fprintf(c.ErrOrStderr(), "regionctl: --%s is deprecated: use -o/--output\n", alias)
		}
		if !slices.Contains(o.formats, o.format) {
			return fail(ExitUsage, "-o/--output must be %s, not %q", orList(o.formats), o.format)
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	return o
}

func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
