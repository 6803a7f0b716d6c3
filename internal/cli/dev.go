package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/bootstrap"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/render/tekton"
)

func (a *app) devCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "dev", Short: "Tools for developing and measuring regionctl"}
	var o fleetgen.Options
	gen := &cobra.Command{
		Use:   "gen-fleet [--sectors N] [--regions N] [--clusters N] DIR",
		Short: "Write a generated, valid fleet of any size into DIR",
		Long: `gen-fleet writes a realistic fleet into DIR/config (every layer used, overrides at
every level, rollout pins, clusters in both deletion phases), chart directories
into DIR/charts, and copies the Tekton Pipelines of --root into
DIR/pipelines/tekton so that DIR renders. --regions is per sector, --clusters per
region (one of them regional): 5 × 40 × 11 is the 2,200-cluster fleet of the
benchmarks.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Sectors < 1 || o.RegionsPerSector < 1 || o.ClustersPerRegion < 2 || o.ClustersPerRegion > 21 {
				return fail(ExitUsage, "need --sectors ≥ 1, --regions ≥ 1 and 2 ≤ --clusters ≤ 21 (one regional and up to 20 management clusters per region)")
			}
			dir := args[0]
			if entries, err := os.ReadDir(filepath.Join(dir, configDir)); err == nil && len(entries) > 0 {
				return fail(ExitInput, "%s already holds a fleet; choose an empty directory", filepath.Join(dir, configDir))
			}
			files := fleetgen.Generate(o)
			for _, c := range fleetgen.Charts {
				files[filepath.ToSlash(filepath.Join("charts", c, "Chart.yaml"))] = []byte("apiVersion: v2\nname: " + c + "\nversion: 0.1.0\n")
			}
			pipelines, _ := fs.Glob(os.DirFS(a.root), tekton.Dir+"/*.yaml")
			for _, p := range pipelines {
				b, err := os.ReadFile(filepath.Join(a.root, p))
				if err != nil {
					return fail(ExitExternal, "%v", err)
				}
				files[p] = b
			}
			for _, p := range files.Paths() {
				full := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					return fail(ExitExternal, "%v", err)
				}
				if err := os.WriteFile(full, files[p], 0o644); err != nil {
					return fail(ExitExternal, "%v", err)
				}
			}
			clusters := o.Sectors * o.RegionsPerSector * o.ClustersPerRegion
			a.printer(a.stdout).OK("wrote %d files to %s: %d sectors, %d regions, %d clusters", len(files), dir, o.Sectors, o.Sectors*o.RegionsPerSector, clusters)
			if len(pipelines) == 0 {
				a.stderr.Write([]byte("note: no " + tekton.Dir + " under --root; copy it into " + dir + " before rendering\n"))
			}
			return nil
		},
	}
	gen.Flags().IntVar(&o.Sectors, "sectors", 5, "sectors (the first is the staging sector)")
	gen.Flags().IntVar(&o.RegionsPerSector, "regions", 40, "regions per sector")
	gen.Flags().IntVar(&o.ClustersPerRegion, "clusters", 11, "clusters per region, one of them regional")
	cmd.AddCommand(gen, a.manCommand(), a.argocdManifestsCommand())
	return cmd
}

// argocdManifestsCommand is `dev argocd-manifests`: Argo CD's install.yaml
// at the version conformance/argocd pins, for the runner image.
func (a *app) argocdManifestsCommand() *cobra.Command {
	var goMod, out string
	cmd := &cobra.Command{
		Use:   "argocd-manifests [--go-mod FILE] -o FILE",
		Short: "Write Argo CD's install manifests at the pinned version (for make image)",
		Long: `argocd-manifests reads the version of github.com/argoproj/argo-cd/v3 that
--go-mod requires (conformance/argocd/go.mod, the one pin), has the go command
fetch that module (from its cache or the module proxy, checked against go.sum's
checksum database), and writes its manifests/install.yaml to -o. make image puts
it in the runner image, where the bootstrap task applies it.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if out == "" {
				return fail(ExitUsage, "-o FILE is required")
			}
			v, err := bootstrap.ArgoCDVersion(goMod)
			if err != nil {
				return fail(ExitInput, "%v", err)
			}
			b, err := bootstrap.DownloadManifests("go", v, "install.yaml")
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			if err := os.WriteFile(out+".tmp", b, 0o644); err != nil {
				return fail(ExitExternal, "%v", err)
			}
			if err := os.Rename(out+".tmp", out); err != nil {
				return fail(ExitExternal, "%v", err)
			}
			fmt.Fprintf(a.stdout, "wrote %s: Argo CD %s's install.yaml (%d bytes)\n", out, v, len(b))
			return nil
		},
	}
	cmd.Flags().StringVar(&goMod, "go-mod", "conformance/argocd/go.mod", "the go.mod whose requirement pins Argo CD")
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write")
	return cmd
}
