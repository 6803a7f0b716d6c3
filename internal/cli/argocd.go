package cli

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

func (a *app) argocdCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "argocd",
		Short: "Inspect what the fleet's Argo CDs will run, complete central cluster Secrets, report a cluster's health",
	}
	var env, cluster, component string
	var o *output
	apps := &cobra.Command{
		Use:   "apps [--env E] [--cluster REGION/CLUSTER] [--component C]",
		Short: "List every Application the fleet's Argo CDs will hold, with its chart and pinned revision",
		Long: `apps lists, for each cluster, the Applications of its components: the chart
source, the revision it is pinned at (chart_revision) and its namespace. In the
central topology (gitops.argocd_topology: central) they are what the
ApplicationSets generate, evaluated offline against the rendered cluster
Secrets, with the RollingSync step each syncs in.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			f, err := a.validFleet()
			if err != nil {
				return err
			}
			charts, err := render.ReadCharts(os.DirFS(a.root))
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			planned, diags := render.Applications(f, charts)
			if diags.HasErrors() {
				return a.reportDiagnostics(diags)
			}
			var out []argocd.Planned
			for _, p := range planned {
				if (env == "" || p.Labels["environment"] == env) && (cluster == "" || p.Cluster == cluster) && (component == "" || p.Component == component) {
					out = append(out, p)
				}
			}
			sort.SliceStable(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
			if len(out) == 0 {
				return fail(ExitInput, "no Application matches --env %q --cluster %q --component %q", env, cluster, component)
			}
			if o.format == "json" {
				return writeJSON(a.stdout, out)
			}
			a.printer(a.stdout).Applications(render.GitOpsOf(f).Topology, out)
			return nil
		},
	}
	apps.Flags().StringVar(&env, "env", "", "only this environment")
	apps.Flags().StringVar(&cluster, "cluster", "", "only this cluster (region/cluster)")
	apps.Flags().StringVar(&component, "component", "", "only this component")
	o = outputFlag(apps, "", "text", "json")
	_ = apps.RegisterFlagCompletionFunc("cluster", completeClusterIDs)
	_ = apps.RegisterFlagCompletionFunc("env", completeEnvironments)
	cmd.AddCommand(apps, a.clusterSecretCommand(), a.bootstrapCommand(), a.reportCommand())
	return cmd
}

var (
	accountRE = regexp.MustCompile(`^[0-9]{12}$`)
	eksHostRE = regexp.MustCompile(`^[A-Za-z0-9.-]+\.eks\.amazonaws\.com(\.cn)?$`)
)

// clusterSecretCommand completes a rendered cluster Secret of the central
// topology with what exists only once the cluster does.
func (a *app) clusterSecretCommand() *cobra.Command {
	var server, caFile, account string
	cmd := &cobra.Command{
		Use:   "cluster-secret REGION/CLUSTER --server URL --ca-file FILE --account ID",
		Short: "Print a central Argo CD's cluster Secret with the cluster's endpoint, CA and account filled in",
		Long: `cluster-secret reads the cluster's rendered Secret
(deploy/<env>/argocd/clusters/<region>-<cluster>.yaml, central topology) and
prints it with the EKS endpoint (--server, the eks output of the cluster's
Terraform), its CA certificate (--ca-file, PEM) and its account (--account, for
the role Argo CD assumes) filled in; pipe it to kubectl apply. The Secret holds
no secret material: Argo CD authenticates with EKS IAM authentication.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			region, name, ok := strings.Cut(args[0], "/")
			if !ok {
				return fail(ExitUsage, "%q is not REGION/CLUSTER", args[0])
			}
			u, err := url.Parse(server)
			if err != nil || u.Scheme != "https" || !eksHostRE.MatchString(u.Host) || (u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" {
				return fail(ExitUsage, "--server %q is not an EKS endpoint (https://<id>.<suffix>.<region>.eks.amazonaws.com)", server)
			}
			if !accountRE.MatchString(account) {
				return fail(ExitUsage, "--account %q is not a 12-digit account id", account)
			}
			ca, err := os.ReadFile(caFile)
			if err != nil {
				return fail(ExitUsage, "--ca-file: %v", err)
			}
			if block, _ := pem.Decode(ca); block == nil || block.Type != "CERTIFICATE" {
				return fail(ExitUsage, "--ca-file %s holds no PEM certificate", caFile)
			}
			f, err := a.validFleet()
			if err != nil {
				return err
			}
			if g := render.GitOpsOf(f); g.Topology != argocd.Central {
				return fail(ExitUsage, "cluster Secrets exist only in the central topology; this fleet's is %s", g.Topology)
			}
			var env string
			for _, c := range f.Clusters {
				if c.Region.Name == region && c.Name == name {
					env = c.Environment()
				}
			}
			if env == "" {
				return fail(ExitUsage, "no cluster %s in the fleet", args[0])
			}
			file := filepath.Join(a.root, "deploy", env, "argocd", "clusters", region+"-"+name+".yaml")
			b, err := os.ReadFile(file)
			if err != nil {
				return fail(ExitInput, "%v (render first)", err)
			}
			var secret map[string]any
			if err := yaml.Unmarshal(b, &secret); err != nil {
				return fail(ExitInput, "%s: %v", file, err)
			}
			data, _ := secret["stringData"].(map[string]any)
			cfg, _ := data["config"].(string)
			if data == nil || data["server"] != argocd.ServerPlaceholder || !strings.Contains(cfg, argocd.CAPlaceholder) || !strings.Contains(cfg, argocd.AccountPlaceholder) {
				return fail(ExitInput, "%s is not a rendered cluster Secret with its placeholders (render, and do not edit deploy/)", file)
			}
			data["server"] = strings.TrimSuffix(server, "/")
			// Filled into JSON text: the values are checked above to hold
			// nothing but digits and base64.
			cfg = strings.Replace(cfg, argocd.CAPlaceholder, base64.StdEncoding.EncodeToString(ca), 1)
			data["config"] = strings.Replace(cfg, argocd.AccountPlaceholder, account, 1)
			out, err := yaml.Marshal(secret)
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			fmt.Fprint(a.stdout, string(out))
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the cluster's EKS endpoint")
	cmd.Flags().StringVar(&caFile, "ca-file", "", "the cluster's CA certificate (PEM)")
	cmd.Flags().StringVar(&account, "account", "", "the cluster's AWS account id")
	return cmd
}
