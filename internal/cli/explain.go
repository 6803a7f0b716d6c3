package cli

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/config"
)

func (a *app) explainCommand() *cobra.Command {
	var out *output
	cmd := &cobra.Command{
		Use:   "explain <region>/<cluster> [dotted.path]",
		Short: "Show each effective value of a cluster and the layer that set it",
		Long: `explain prints the effective config of one cluster, or the subtree under a
dotted path, with the layer and file:line:col that set each value and, below
it, the values it overrode in lower layers.`,
		Example: `  regionctl explain us-east-1/mc03
  regionctl explain us-east-1/mc03 eks.node_instance_family
  regionctl explain us-east-1/regional components --output json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			region, name, ok := strings.Cut(args[0], "/")
			if !ok || region == "" || name == "" {
				return fail(ExitUsage, "name the cluster as <region>/<cluster>, e.g. us-east-1/mc01; got %q", args[0])
			}
			f, diags, err := a.loadFleet()
			if err != nil {
				return err
			}
			var c *config.Cluster
			var ids []string
			for _, cl := range f.Clusters {
				ids = append(ids, cl.ID())
				if cl.Region.Name == region && cl.Name == name {
					c = cl
				}
			}
			if c == nil {
				a.reportDiagnostics(diags)
				sort.Strings(ids)
				return fail(ExitInput, "no cluster %s in %s; clusters: %s", args[0], configDir, strings.Join(ids, ", "))
			}
			path := ""
			if len(args) == 2 {
				path = args[1]
			}
			if c.Effective == nil {
				return a.reportDiagnostics(diags)
			}
			entries, err := config.Explain(c, path)
			if err != nil {
				a.reportDiagnostics(diags)
				return fail(ExitInput, "%v", err)
			}
			if out.format == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"cluster": c.ID(), "partial": c.Partial, "values": entries}); err != nil {
					return err
				}
			} else {
				a.printer(a.stdout).Explain(c.ID(), c.Type, c.SectorName(), c.Environment(), c.Partial, entries)
			}
			return a.reportDiagnostics(diags)
		},
	}
	out = outputFlag(cmd, "", "text", "json")
	cmd.ValidArgsFunction = completeExplain
	return cmd
}
