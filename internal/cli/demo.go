package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/demo"
)

func (a *app) demoCommand() *cobra.Command {
	var o demo.Options
	cmd := &cobra.Command{
		Use:   "demo [--region R] [--keep]",
		Short: "Provision one region end to end against a local AWS emulator (make demo)",
		Long: `demo starts moto_server (an AWS emulator) on a free 127.0.0.1 port and a local
platform API, renders a copy of this repository, runs the central and regional
pipelines for one region with the real Terraform roots and the aws provider,
prints what now exists (accounts and OUs, roles, buckets and state objects, EKS
clusters, registrations), then stops the emulator and removes the copy.

It needs moto_server and terraform on PATH and TF_CLI_CONFIG_FILE pointing at a
provider mirror; make demo sets that up with scripts/terraformrc.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Root = a.root
			o.Regionctl = func(args ...string) int { return Run(args, a.stdout, a.stderr) }
			if err := demo.Run(ctx, o, a.stdout); err != nil {
				return fail(ExitExternal, "demo: %v", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Region, "region", "eu-west-1", "the region of the example fleet to provision")
	_ = cmd.RegisterFlagCompletionFunc("region", completeRegions)
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "keep the working copy with its logs and workspaces")
	return cmd
}
