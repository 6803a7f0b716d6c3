package cli

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/pipeline"
)

func (a *app) pipelineCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "The central and regional provisioning pipelines (plans only, with --dry-run, in this version)",
		Long: `pipeline central provisions a region's account, regional cluster and regional
pipeline; pipeline regional provisions the management clusters of its own region.
This version prints their plans with --dry-run: every account, role ARN,
ExternalId, Terraform root, variables file, state backend and API call, in order.
Running the steps against AWS and Terraform is not available yet.`,
	}
	var region, cluster, api, output, step, requestID string
	var dryRun bool
	run := func(plan func() (*pipeline.Plan, error)) error {
		if err := checkOutput(output); err != nil {
			return err
		}
		if region == "" {
			return fail(ExitUsage, "--region is required")
		}
		if requestID == "" {
			b := make([]byte, 6)
			_, _ = rand.Read(b)
			requestID = hex.EncodeToString(b)
		}
		if _, err := a.validFleet(); err != nil {
			return err
		}
		p, err := plan()
		if err != nil {
			return fail(ExitInput, "%v", err)
		}
		if step != "" {
			var kept []pipeline.Step
			for _, s := range p.Steps {
				if s.Name == step {
					kept = append(kept, s)
				}
			}
			p.Steps = kept
		}
		if !dryRun {
			a.printer(a.stdout).PipelinePlan(p)
			return fail(ExitUsage, "running the %s pipeline's steps is not available in this version; the plan above is what it will do (--dry-run prints it without this error)", p.Pipeline)
		}
		if output == "json" {
			return writeJSON(a.stdout, p)
		}
		a.printer(a.stdout).PipelinePlan(p)
		return nil
	}
	central := &cobra.Command{
		Use:   "central --region R [--dry-run]",
		Short: "The central pipeline of one region",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return run(func() (*pipeline.Plan, error) { return pipeline.Central(a.fleet, region, requestID) })
		},
	}
	regional := &cobra.Command{
		Use:   "regional --region R [--cluster C] [--dry-run]",
		Short: "The regional pipeline: the management clusters of one region",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return run(func() (*pipeline.Plan, error) { return pipeline.Regional(a.fleet, region, cluster, api, requestID) })
		},
	}
	for _, c := range []*cobra.Command{central, regional} {
		c.Flags().StringVar(&region, "region", "", "the region to run for (required)")
		c.Flags().StringVar(&cluster, "cluster", "", "only this cluster")
		c.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan; call no AWS or Terraform")
		c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
		c.Flags().StringVar(&step, "step", "", "only this step (account, assume-role, terraform, bootstrap, register)")
		c.Flags().StringVar(&requestID, "request-id", "", "id carried into session names, logs and API calls (default: generated)")
	}
	regional.Flags().StringVar(&api, "api-endpoint", "", "platform API base URL (default: the regional cluster's platform_api.endpoint)")
	cmd.AddCommand(central, regional)
	return cmd
}
