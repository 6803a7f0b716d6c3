package cli

import (
	"encoding/json"
	"os"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

func (a *app) appsetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "appset",
		Short: "Inspect the rendered Argo CD ApplicationSets",
	}
	var env, typ, output string
	expand := &cobra.Command{
		Use:   "expand [--env E] [--type T]",
		Short: "List the Applications each ApplicationSet generates, with their RollingSync step",
		Long: `expand evaluates the ApplicationSets' generators offline, from the fleet and the
charts under charts/<type>/, as the ApplicationSet controller would, and prints
every generated Application with the RollingSync step (sector) it syncs in.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			f, err := a.validFleet()
			if err != nil {
				return err
			}
			charts, err := render.ReadCharts(os.DirFS(a.root))
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			type result struct {
				Environment  string               `json:"environment"`
				Type         string               `json:"cluster_type"`
				Steps        []string             `json:"steps"`
				Applications []argocd.Application `json:"applications"`
			}
			var results []result
			for _, in := range render.AppSetInputs(f, charts) {
				if (env != "" && in.Environment != env) || (typ != "" && in.Type != typ) {
					continue
				}
				set := argocd.Build(in)
				apps, err := argocd.Expand(set, in)
				if err != nil {
					return fail(ExitInput, "%v", err)
				}
				r := result{Environment: in.Environment, Type: in.Type, Applications: apps}
				for _, s := range in.Sectors {
					r.Steps = append(r.Steps, s.Name)
				}
				results = append(results, r)
			}
			if len(results) == 0 {
				return fail(ExitInput, "no ApplicationSet matches --env %q --type %q", env, typ)
			}
			if output == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(results)
			}
			p := a.printer(a.stdout)
			for _, r := range results {
				p.AppSetExpansion(argocd.Path(r.Environment, r.Type), r.Steps, r.Applications)
			}
			return nil
		},
	}
	expand.Flags().StringVar(&env, "env", "", "only this environment")
	expand.Flags().StringVar(&typ, "type", "", "only this cluster type (regional or management)")
	expand.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.AddCommand(expand)
	return cmd
}
