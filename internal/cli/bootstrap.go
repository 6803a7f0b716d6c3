package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/awsx"
	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/pipeline"
)

// DefaultArgoCDManifests is where the runner image keeps Argo CD's
// install manifests (image/build.go).
const DefaultArgoCDManifests = "/usr/share/regionctl/argocd/install.yaml"

// bootstrapCommand is `argocd bootstrap`, the command of a cluster's
// bootstrap task.
func (a *app) bootstrapCommand() *cobra.Command {
	var region, cluster, repoURL, manifests string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "bootstrap --region R --cluster C --repo-url URL [--manifests FILE]",
		Short: "Install Argo CD and the cluster's root Application (the bootstrap task's command)",
		Long: `bootstrap is what a cluster's bootstrap task runs, inside the cluster's own
VPC as its bootstrap role, the one principal its private API admits (cluster
admin). It reads the cluster's API endpoint and CA (eks:DescribeCluster),
signs an EKS token, and server-side applies Argo CD's own install manifests
(the runner image holds them at the version conformance/argocd pins), waiting
for their CustomResourceDefinitions, then the cluster's rendered AppProject and
root Application. From then on Argo CD manages the cluster, itself included.

The pipeline's argocd step starts the task and hands it the rendered
project.yaml and root.yaml in $` + pipeline.EnvRootDocuments + `, with their SHA-256 in
$` + pipeline.EnvRootDocumentsSHA256 + `. They are parsed as data and held to
what render writes: one AppProject, one Application of it, deploying only into
this cluster, from --repo-url only (the fleet repository, which the task
definition's command names from the reviewed config). Running it again
changes only what differs.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if region == "" || cluster == "" || repoURL == "" {
				return fail(ExitUsage, "--region, --cluster and --repo-url are required")
			}
			root, err := bootstrap.CheckRoot([]byte(os.Getenv(pipeline.EnvRootDocuments)), os.Getenv(pipeline.EnvRootDocumentsSHA256), repoURL)
			if err != nil {
				return fail(ExitInput, "%v", err)
			}
			install, err := os.ReadFile(manifests)
			if err != nil {
				return fail(ExitExternal, "Argo CD's install manifests: %v", err)
			}
			ctx := context.Background()
			cloud, err := awsx.New(ctx, awsx.Options{Region: region, RequestID: "bootstrap"})
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			kc, err := cloud.EKSClient(ctx, region, cluster)
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			if err := bootstrap.Run(ctx, kc, bootstrap.Install{Manifests: install, Root: root, Log: a.stdout, Wait: wait}); err != nil {
				return fail(ExitExternal, "%v", err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&region, "region", "", "the cluster's region (required)")
	fl.StringVar(&cluster, "cluster", "", "the EKS cluster's name (required)")
	fl.StringVar(&repoURL, "repo-url", "", "the fleet repository: the only source the root Application may have (required)")
	fl.StringVar(&manifests, "manifests", DefaultArgoCDManifests, "Argo CD's install.yaml")
	fl.DurationVar(&wait, "wait", 3*time.Minute, "how long to wait for Argo CD's CustomResourceDefinitions to be established")
	return cmd
}
