package cli

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/argohealth"
	"github.com/regionctl/regionctl/internal/awsx"
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/pipeline"
)

// The shapes of the names report takes from its chart's values, as the
// schema has them (#RegionName, #Name); a bucket name as S3 allows it.
var (
	reportRegionRE  = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]{1,12}-[0-9]{1,2}$`)
	reportClusterRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$`)
	reportBucketRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
)

func (a *app) reportCommand() *cobra.Command {
	var bucket, region, cluster, namespace string
	cmd := &cobra.Command{
		Use:   "report --bucket B --region R --cluster C",
		Short: "Report the health of this cluster's Argo CD Applications into its region's health bucket (run inside the cluster)",
		Long: `report runs in a cluster, as the argocd-health-reporter chart's CronJob: it
lists the Applications of its cluster in --namespace through the Kubernetes API,
as the pod's ServiceAccount (which may only list and get Applications there),
and puts their health, sync status and revisions into the region's health
bucket, under the prefix of the account its role is in, with the credentials
the pod holds through its EKS Pod Identity association. rollout promote reads
those reports: the clusters are private, so nothing outside can ask their
Argo CD.`,
		Example: `  regionctl argocd report --bucket regionctl-argocd-health-prod-eu-west-1 --region eu-west-1 --cluster mc01`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, c := range []struct {
				flag, v string
				re      *regexp.Regexp
			}{{"bucket", bucket, reportBucketRE}, {"region", region, reportRegionRE}, {"cluster", cluster, reportClusterRE}, {"namespace", namespace, reportClusterRE}} {
				if !c.re.MatchString(c.v) {
					return fail(ExitUsage, "--%s %q is not a %s name", c.flag, c.v, c.flag)
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			kube, err := argohealth.InCluster(os.Getenv, argohealth.ServiceAccountDir)
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			r, err := argohealth.Collect(ctx, kube, namespace, region, cluster, time.Now())
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			cloud, err := awsx.New(ctx, awsx.Options{Region: region, RequestID: "health-report"})
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			cfg := cloud.Config(pipeline.Credentials{}, "")
			p := &argohealth.Publisher{S3: s3.NewFromConfig(cfg), STS: sts.NewFromConfig(cfg), Bucket: bucket}
			where, err := p.Publish(ctx, r)
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			fmt.Fprintf(a.stdout, "reported %d Applications of %s/%s to %s\n", len(r.Applications), region, cluster, where)
			return nil
		},
	}
	cmd.Flags().StringVar(&bucket, "bucket", "", "the region's health bucket (argocd.health_bucket)")
	cmd.Flags().StringVar(&region, "region", "", "this cluster's region")
	cmd.Flags().StringVar(&cluster, "cluster", "", "this cluster's name")
	cmd.Flags().StringVar(&namespace, "namespace", "argocd", "the namespace of this cluster's Applications")
	return cmd
}

// reportTargets are the clusters of a sector with their regions' health
// buckets (argocd.health_bucket).
func reportTargets(f *config.Fleet, sector string) ([]argohealth.ReportTarget, error) {
	var out []argohealth.ReportTarget
	for _, c := range f.Clusters {
		if c.SectorName() != sector || c.Deleting() {
			continue
		}
		v := c.Effective.Lookup("argocd", "health_bucket")
		if v == nil || v.Kind != config.String {
			return nil, fmt.Errorf("%s has no argocd.health_bucket", c.ID())
		}
		out = append(out, argohealth.ReportTarget{Region: c.Region.Name, Cluster: c.Name, Bucket: v.Str})
	}
	return out, nil
}

// reportGate is the health gate of the per-cluster topology: the reports
// in the sector's regions' health buckets, each held to the account
// Organizations tags as its cluster's, read with the caller's AWS
// credentials (a principal of the management account that may read them).
func reportGate(ctx context.Context, f *config.Fleet, repoClient argohealth.Client, maxAge time.Duration) (*argohealth.ReportGate, error) {
	cloud, err := awsx.New(ctx, awsx.Options{RequestID: "rollout-health"})
	if err != nil {
		return nil, err
	}
	cfg := cloud.Config(pipeline.Credentials{}, "")
	return &argohealth.ReportGate{Client: repoClient, S3: s3.NewFromConfig(cfg), Accounts: organizations.NewFromConfig(cfg), MaxAge: maxAge, Now: time.Now,
		Targets: func(sector string) ([]argohealth.ReportTarget, error) { return reportTargets(f, sector) },
		Hint:    "The reports are read with your AWS credentials: a principal of the management account that may list and read the sector's health buckets and read the reporting accounts' tags (organizations:ListTagsForResource), or --health-from argocd to ask Argo CD instead."}, nil
}
