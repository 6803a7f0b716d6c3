package cli

import (
	"bytes"
	"io"
	"regexp"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpNamesEachFlagsType: the help of every command shows each flag
// with its type (a backquoted word in a usage text becomes the type's
// name in pflag's help, as `pipeline ... --plan` once did).
func TestHelpNamesEachFlagsType(t *testing.T) {
	a := &app{stdout: io.Discard, stderr: io.Discard}
	word := regexp.MustCompile(`^[a-zA-Z]*$`)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			n++
			if name, _ := pflag.UnquoteUsage(f); !word.MatchString(name) {
				t.Errorf("%s --%s shows its type as %q", c.CommandPath(), f.Name, name)
			}
		})
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Help(); err != nil {
			t.Errorf("%s --help: %v", c.CommandPath(), err)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.rootCommand())
	if n < 100 {
		t.Errorf("only %d flags seen", n)
	}
}
