package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/manifests"
	"github.com/regionctl/regionctl/internal/render"
)

// chartCache is the cache of other projects' charts: $REGIONCTL_CHART_CACHE,
// else regionctl/charts in the user cache directory ("" when there is none).
func chartCache() string {
	if d := os.Getenv("REGIONCTL_CHART_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "regionctl", "charts")
	}
	return ""
}

// chartsCommand fills the chart cache the review renders other projects'
// charts from.
func (a *app) chartsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "charts", Short: "Keep the cache of other projects' charts that render --diff renders"}
	var base, component string
	var timeout time.Duration
	pull := &cobra.Command{
		Use:   "pull",
		Short: "Fetch every Helm repository chart the fleet's Applications pin into the chart cache",
		Long: `pull fetches, for every component whose chart comes from a Helm repository
(chart.repo_url and chart.name, https), the chart at each version the fleet's
Applications pin (chart_revision): the repository's index.yaml, then the
archive it names, which must have the digest the index gives and hold that
chart. What is cached already is not fetched again. With --base it pulls the
versions the base's fleet pins too, so that render --diff can show a chart's
upgrade object by object.

The cache is $REGIONCTL_CHART_CACHE, else regionctl/charts in the user cache
directory; CI keeps it between runs as it keeps Terraform's plugin cache.
Charts of git repositories and OCI registries are not fetched. Exit 3 when a
chart cannot be fetched or is not what its index says.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cache := manifests.Cache{Dir: chartCache()}
			if cache.Dir == "" {
				return fail(ExitUsage, "no user cache directory: set REGIONCTL_CHART_CACHE")
			}
			wanted, err := a.pinnedCharts(base, component)
			if err != nil {
				return err
			}
			client := chartClient(timeout)
			var failed []string
			for _, c := range wanted {
				if c.cached(cache) {
					fmt.Fprintf(a.stdout, "cached %s\n", c)
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				commit, err := c.pull(ctx, cache, client)
				cancel()
				if err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", c, err))
					continue
				}
				fmt.Fprintf(a.stdout, "pulled %s%s\n", c, commit)
			}
			if len(wanted) == 0 && component != "" {
				return fail(ExitInput, "no component %q pins a chart of another project", component)
			}
			if len(failed) > 0 {
				return fail(ExitExternal, "%d of %d charts not pulled:\n  %s", len(failed), len(wanted), strings.Join(failed, "\n  "))
			}
			fmt.Fprintf(a.stdout, "%d charts in %s\n", len(wanted), cache.Dir)
			return nil
		},
	}
	pull.Flags().StringVar(&base, "base", "", "also pull what this git ref's fleet pins (the review's base)")
	pull.Flags().StringVar(&component, "component", "", "only this component's chart")
	pull.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "the longest one chart's fetch may take")
	cmd.AddCommand(pull)
	return cmd
}

// chartClient is the HTTP client charts pull fetches Helm repositories'
// charts with, and chartGitCA, when not nil, the one certificate authority
// its git fetches trust (a test's trust their own server).
var (
	chartClient = func(timeout time.Duration) *http.Client { return &http.Client{Timeout: timeout} }
	chartGitCA  []byte
)

// pinnedChart is another project's chart at a revision: a Helm
// repository's (name set) or a directory of a git repository (path set).
type pinnedChart struct{ repo, name, path, version string }

func (c pinnedChart) String() string {
	if c.name != "" {
		return fmt.Sprintf("%s %s of %s", c.name, c.version, c.repo)
	}
	return c.git().String()
}

func (c pinnedChart) git() manifests.GitSource {
	return manifests.GitSource{URL: c.repo, Path: c.path, Revision: c.version}
}

func (c pinnedChart) cached(cache manifests.Cache) bool {
	if c.name != "" {
		return cache.Has(c.repo, c.name, c.version)
	}
	return cache.HasGit(c.git())
}

// pull fetches c into cache, and says which commit a git tag named.
func (c pinnedChart) pull(ctx context.Context, cache manifests.Cache, client *http.Client) (string, error) {
	if c.name != "" {
		return "", cache.Pull(ctx, client, c.repo, c.name, c.version)
	}
	commit, err := cache.PullGit(ctx, c.git(), chartGitCA)
	return " (commit " + commit + ")", err
}

// pinnedCharts are the charts of other projects (https) the working tree's
// fleet pins, and base's when it is not "", of component (all when ""),
// sorted: Helm repositories' charts, and git repositories' chart
// directories (not kustomizations, not this repository's).
func (a *app) pinnedCharts(base, component string) ([]pinnedChart, error) {
	f, err := a.validFleet()
	if err != nil {
		return nil, err
	}
	charts, err := render.ReadCharts(os.DirFS(a.root))
	if err != nil {
		return nil, fail(ExitExternal, "%v", err)
	}
	fleets := []*config.Fleet{f}
	chartLists := [][]string{charts}
	if base != "" {
		bf, bcharts, err := a.fleetAt(base)
		if err != nil {
			return nil, err
		}
		fleets, chartLists = append(fleets, bf), append(chartLists, bcharts)
	}
	seen := map[pinnedChart]bool{}
	var out []pinnedChart
	for i, f := range fleets {
		apps, diags := render.Applications(f, chartLists[i])
		if diags.HasErrors() {
			return nil, a.reportDiagnostics(diags)
		}
		self := render.GitOpsOf(f).RepoURL
		for _, p := range apps {
			c := pinnedChart{p.RepoURL, p.Chart, "", p.Revision}
			if p.Chart == "" {
				c.path = p.Path
			}
			other := p.Chart != "" || !p.Kustomize && p.RepoURL != self
			if !other || !strings.HasPrefix(p.RepoURL, "https://") || seen[c] || component != "" && p.Component != component {
				continue
			}
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// fleetAt loads the fleet of git ref rev, and its charts/.
func (a *app) fleetAt(rev string) (*config.Fleet, []string, error) {
	repo, err := gitbase.Open(a.root)
	if err != nil {
		return nil, nil, gitFail(err)
	}
	defer repo.Close()
	c, err := repo.Commit(rev)
	if err != nil {
		return nil, nil, gitFail(err)
	}
	fsys, err := repo.FS(c)
	if err != nil {
		return nil, nil, gitFail(err)
	}
	checker, err := a.checker()
	if err != nil {
		return nil, nil, err
	}
	f, diags := fleet.Load(fsys, "config", checker)
	if diags.HasErrors() {
		a.printer(a.stderr).Diagnostics(diags)
		return nil, nil, fail(ExitInput, "the fleet at %s does not load", rev)
	}
	charts, err := render.ReadCharts(fsys)
	if err != nil {
		return nil, nil, fail(ExitExternal, "%v", err)
	}
	return f, charts, nil
}
