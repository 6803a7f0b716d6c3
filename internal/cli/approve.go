package cli

import (
	"context"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/awsx"
	"github.com/regionctl/regionctl/internal/pipeline"
)

var planIDRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// approveCommand is `pipeline approve`: an approver records that a
// reviewed plan may be applied.
func (a *app) approveCommand() *cobra.Command {
	var region, cluster, id, planSHA, reason, output string
	cmd := &cobra.Command{
		Use:   "approve --region R --cluster C --plan-id ID [--reason TEXT]",
		Short: "Approve a reviewed plan of a cluster (as an approver role of its region)",
		Long: `approve records that the reviewed plan --plan-id of a cluster may be applied:
a run that waits for an approval (every destroy, and every run of a sector with
approval: always) applies exactly that plan, and only once approved. It runs as
one of the region's approver roles (regionctl-approver-<region>, which
gitops.approvers may assume): in the regional account for a management
cluster, in the management account for the regional cluster. The state
buckets' policies let no other principal write an approval, the pipeline that
waits for it least of all. It prints what the plan does before recording it.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if region == "" || cluster == "" {
				return fail(ExitUsage, "--region and --cluster are required")
			}
			if !planIDRE.MatchString(id) {
				return fail(ExitUsage, "--plan-id %q is not a plan id (64 hex digits, as `pipeline ... --plan` prints it)", id)
			}
			if strings.ContainsAny(reason, "\n\r") || len(reason) > 500 {
				return fail(ExitUsage, "--reason is one line of at most 500 characters")
			}
			if _, err := a.validFleet(); err != nil {
				return err
			}
			p, err := pipeline.Regional(a.fleet, region, cluster, "", "approve")
			if err != nil {
				if central, cerr := pipeline.Central(a.fleet, region, cluster, "approve"); cerr == nil {
					p, err = central, nil
				}
			}
			if err != nil {
				return fail(ExitInput, "%v", err)
			}
			ctx := context.Background()
			cloud, err := awsx.New(ctx, awsx.Options{Region: region, RequestID: "approve"})
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			r := &pipeline.Runner{Cloud: cloud}
			sum, err := r.Approve(ctx, p, region+"/"+cluster, id, planSHA, reason)
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			if output == "json" {
				return writeJSON(a.stdout, sum)
			}
			printer := a.printer(a.stdout)
			printer.PlanSummaries([]pipeline.PlanSummary{sum})
			printer.OK("approved plan %s of %s/%s (sha256:%s): the next run applies exactly these bytes", id[:12], region, cluster, sum.SHA256)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&region, "region", "", "the cluster's region (required)")
	fl.StringVar(&cluster, "cluster", "", "the cluster (required)")
	fl.StringVar(&id, "plan-id", "", "the reviewed plan's id, as pipeline ... --plan names it (required)")
	fl.StringVar(&planSHA, "plan-sha256", "", "the hash of the plan you read (its summary shows it): refused when the plan was made again since")
	fl.StringVar(&reason, "reason", "", "why, recorded with the approval (a change ticket, say)")
	fl.StringVarP(&output, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("region", completeRegions)
	_ = cmd.RegisterFlagCompletionFunc("cluster", completeClusterOfRegion)
	return cmd
}
