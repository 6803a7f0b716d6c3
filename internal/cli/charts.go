package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/atomicfile"
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
// charts from, and keeps the lock file that pins them.
func (a *app) chartsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "charts", Short: "Keep the cache of other projects' charts that render --diff renders, and their pins"}
	var o pullOptions
	pull := &cobra.Command{
		Use:   "pull",
		Short: "Fetch every chart of another project the fleet's Applications pin into the chart cache, and pin it in charts.lock",
		Long: `pull fetches, for every component whose chart is another project's, the chart
at each revision the fleet's Applications pin (chart_revision):

  - from a Helm repository (chart.repo_url and chart.name, https): the
    repository's index.yaml, then the archive it names, which must have the
    digest the index gives and hold that chart;
  - from an OCI registry (chart.repo_url oci://…, chart.name): the manifest
    the tag chart_revision names (over https, anonymously), which must be a
    Helm chart's, and its one chart layer, checked against its digest;
  - from a git repository (chart.git_url and chart.path, https): the commit
    the tag chart_revision names (git's smart HTTP protocol, that tag alone,
    depth 1), of which the chart's directory is kept, regular files only
    (a chart whose dependencies its charts/ directory lacks is refused: Argo
    CD would fetch them, and the review fetches nothing);
    for a kustomization (chart.type: kustomize), the tree of the path's
    first directory, which holds the bases it names, once no kustomization
    there names anything remote or a Helm chart.

charts.lock, at the repository's root, pins each of them as
.terraform.lock.hcl pins providers: a Helm chart by its archive's sha256, an
OCI chart by its manifest's, a git chart by the commit its tag named. A chart
it pins must be what it pins, whether cached or fetched: a repository that
republished a version, or a tag that moved, is refused. pull pins what is new and writes the lock with the
working tree's charts alone; commit it. --locked changes nothing in it and
refuses a chart it does not pin (what CI runs); --update takes again what a
repository serves now and pins that (after you have checked why it changed).
render --diff renders a chart only as the side's own charts.lock pins it.

What is cached already is not fetched again. With --base it pulls the
revisions the base's fleet pins too, held to the base's charts.lock, so that
render --diff can show a chart's upgrade object by object.

The cache is $REGIONCTL_CHART_CACHE, else regionctl/charts in the user cache
directory; CI keeps it between runs as it keeps Terraform's plugin cache.
Exit 1 when a chart is not what the lock pins, or --locked finds the lock
lacking; exit 3 when a chart cannot be fetched or is not what its repository
says.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.pullCharts(o) },
	}
	pull.Flags().StringVar(&o.base, "base", "", "also pull what this git ref's fleet pins (the review's base), held to its charts.lock")
	pull.Flags().StringVar(&o.component, "component", "", "only this component's chart")
	pull.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute, "the longest one chart's fetch may take")
	pull.Flags().BoolVar(&o.locked, "locked", false, "change nothing in charts.lock: refuse a chart it does not pin (CI)")
	pull.Flags().BoolVar(&o.update, "update", false, "pin what the repositories serve now, where it differs from charts.lock")
	pull.MarkFlagsMutuallyExclusive("locked", "update")
	cmd.AddCommand(pull)
	return cmd
}

type pullOptions struct {
	base, component string
	timeout         time.Duration
	locked, update  bool
}

// pullCharts is charts pull.
func (a *app) pullCharts(o pullOptions) error {
	cache := manifests.Cache{Dir: chartCache()}
	if cache.Dir == "" {
		return fail(ExitUsage, "no user cache directory: set REGIONCTL_CHART_CACHE")
	}
	wanted, err := a.pinnedCharts(o.base, o.component)
	if err != nil {
		return err
	}
	if len(wanted) == 0 && o.component != "" {
		return fail(ExitInput, "no component %q pins a chart of another project", o.component)
	}
	lock, err := manifests.ReadLock(os.DirFS(a.root))
	if err != nil {
		return fail(ExitInput, "%v", err)
	}
	client := chartClient(o.timeout)
	var failed, unpinned, moved []string
	next := &manifests.Lock{}
	for _, c := range wanted {
		pin := c.lock.Pin(c.locked())
		if c.head && pin == "" && o.locked {
			unpinned = append(unpinned, c.String())
			continue
		}
		if c.head && o.update {
			pin = ""
		}
		got, how, err := c.fetch(o.timeout, cache, client, pin)
		var mismatch *manifests.PinMismatch
		if errors.As(err, &mismatch) {
			moved = append(moved, err.Error())
			continue
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", c, err))
			continue
		}
		fmt.Fprintf(a.stdout, "%s %s (%s)\n", how, c, c.pinned(got).PinText())
		if c.head {
			next.Set(c.pinned(got))
		}
	}
	if len(unpinned) > 0 {
		return fail(ExitInput, "%s does not pin %d of the fleet's charts (run regionctl charts pull and commit it):\n  %s", manifests.LockFile, len(unpinned), strings.Join(unpinned, "\n  "))
	}
	if len(moved) > 0 {
		return fail(ExitInput, "%d of %d charts are not what %s pins:\n  %s", len(moved), len(wanted), manifests.LockFile, strings.Join(append(moved, failed...), "\n  "))
	}
	if len(failed) > 0 {
		return fail(ExitExternal, "%d of %d charts not pulled:\n  %s", len(failed), len(wanted), strings.Join(failed, "\n  "))
	}
	if o.component != "" {
		// One component's pull leaves the other charts' pins as they were.
		mine := map[string]bool{}
		for _, c := range wanted {
			k := strings.TrimSuffix(c.repo, "/") + "\x00" + c.name + "\x00" + c.path
			mine[k] = mine[k] || c.head
		}
		for _, e := range lock.Charts {
			if !mine[e.Repo+"\x00"+e.Chart+"\x00"+e.Path] {
				next.Set(e)
			}
		}
	}
	if !bytes.Equal(next.Marshal(), lock.Marshal()) {
		if o.locked {
			return fail(ExitInput, "%s pins charts the fleet no longer names: run regionctl charts pull and commit it", manifests.LockFile)
		}
		if err := atomicfile.Write(filepath.Join(a.root, manifests.LockFile), next.Marshal(), ".lock-*"); err != nil {
			return fail(ExitExternal, "%v", err)
		}
		fmt.Fprintf(a.stdout, "wrote %s: commit it\n", manifests.LockFile)
	}
	fmt.Fprintf(a.stdout, "%d charts in %s\n", len(wanted), cache.Dir)
	return nil
}

// chartClient is the HTTP client charts pull fetches Helm repositories'
// charts with, and chartGitCA, when not nil, the one certificate authority
// its git fetches trust (a test's trust their own server).
var (
	chartClient = func(timeout time.Duration) *http.Client { return &http.Client{Timeout: timeout} }
	chartGitCA  []byte
)

// pinnedChart is another project's chart at a revision that one side of
// a review names: a Helm repository's (name set), a directory of a git
// repository (path set) or an OCI registry's (repo oci://…, path "."),
// with that side's lock.
type pinnedChart struct {
	repo, name, path, version string
	kustomize                 bool // path is a kustomization
	head                      bool // the working tree's, not the base's
	lock                      *manifests.Lock
}

func (c pinnedChart) String() string { return c.locked().String() }

// locked is c as the lock names it, pinned to nothing.
func (c pinnedChart) locked() manifests.Locked {
	return manifests.Locked{Repo: c.repo, Chart: c.name, Path: c.path, Revision: c.version}
}

// pinned is c pinned to pin.
func (c pinnedChart) pinned(pin string) manifests.Locked {
	e := c.locked()
	if c.path == "" || c.oci() {
		e.SHA256 = pin
	} else {
		e.Commit = pin
	}
	return e
}

// oci says c is an OCI registry's chart.
func (c pinnedChart) oci() bool { return strings.HasPrefix(c.repo, "oci://") }

func (c pinnedChart) git() manifests.GitSource {
	return manifests.GitSource{URL: c.repo, Path: c.path, Revision: c.version, Kustomize: c.kustomize}
}

func (c pinnedChart) ociSource() manifests.OCISource {
	return manifests.OCISource{URL: c.repo, Revision: c.version}
}

// fetch makes the cache hold c as pin pins it, or, when pin is "", as its
// repository serves it now, and returns what it holds it at and whether it
// was "cached" or "pulled".
func (c pinnedChart) fetch(timeout time.Duration, cache manifests.Cache, client *http.Client, pin string) (string, string, error) {
	var held string
	switch {
	case c.oci():
		held = cache.OCIPin(c.ociSource())
	case c.path != "":
		held = cache.GitPin(c.git())
	default:
		held = cache.HelmPin(c.repo, c.name, c.version)
	}
	if pin != "" && held == pin {
		return held, "cached", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got string
	var err error
	switch {
	case c.oci():
		got, err = cache.PullOCI(ctx, c.ociSource(), client.Transport, pin)
	case c.path != "":
		got, err = cache.PullGit(ctx, c.git(), chartGitCA, pin)
	default:
		got, err = cache.Pull(ctx, client, c.repo, c.name, c.version, pin)
	}
	return got, "pulled", err
}

// pinnedCharts are the charts of other projects the working tree's fleet
// pins, and base's when it is not "", of component (all when ""), sorted:
// Helm repositories' charts (https), OCI registries' (oci://), and git
// repositories' chart directories and kustomizations (https; not this
// repository's).
func (a *app) pinnedCharts(base, component string) ([]pinnedChart, error) {
	f, err := a.validFleet()
	if err != nil {
		return nil, err
	}
	head := os.DirFS(a.root)
	charts, err := render.ReadCharts(head)
	if err != nil {
		return nil, fail(ExitExternal, "%v", err)
	}
	lock, err := manifests.ReadLock(head)
	if err != nil {
		return nil, fail(ExitInput, "%v", err)
	}
	sides := []chartSide{{f, charts, lock}}
	if base != "" {
		b, err := a.fleetAt(base)
		if err != nil {
			return nil, err
		}
		sides = append(sides, b)
	}
	type key struct {
		repo, name, path, version string
		head                      bool
	}
	seen := map[key]bool{}
	var out []pinnedChart
	for i, side := range sides {
		apps, diags := render.Applications(side.fleet, side.charts)
		if diags.HasErrors() {
			return nil, a.reportDiagnostics(diags)
		}
		self := render.GitOpsOf(side.fleet).RepoURL
		for _, p := range apps {
			c := pinnedChart{repo: p.RepoURL, name: p.Chart, version: p.Revision, kustomize: p.Kustomize, head: i == 0, lock: side.lock}
			if p.Chart == "" {
				c.path = p.Path
			}
			k := key{c.repo, c.name, c.path, c.version, c.head}
			if !manifests.Cached(p.RepoURL, p.Chart, self) || seen[k] || component != "" && p.Component != component {
				continue
			}
			seen[k] = true
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// chartSide is what one side of a review names charts with.
type chartSide struct {
	fleet  *config.Fleet
	charts []string
	lock   *manifests.Lock
}

// fleetAt loads the fleet of git ref rev, its charts/ and its charts.lock.
func (a *app) fleetAt(rev string) (chartSide, error) {
	repo, err := gitbase.Open(a.root)
	if err != nil {
		return chartSide{}, gitFail(err)
	}
	defer repo.Close()
	c, err := repo.Commit(rev)
	if err != nil {
		return chartSide{}, gitFail(err)
	}
	fsys, err := repo.FS(c)
	if err != nil {
		return chartSide{}, gitFail(err)
	}
	checker, err := a.checker()
	if err != nil {
		return chartSide{}, err
	}
	f, diags := fleet.Load(fsys, "config", checker)
	if diags.HasErrors() {
		a.printer(a.stderr).Diagnostics(diags)
		return chartSide{}, fail(ExitInput, "the fleet at %s does not load", rev)
	}
	charts, err := render.ReadCharts(fsys)
	if err != nil {
		return chartSide{}, fail(ExitExternal, "%v", err)
	}
	lock, err := manifests.ReadLock(fsys)
	if err != nil {
		return chartSide{}, fail(ExitInput, "%s: %v", rev, err)
	}
	return chartSide{f, charts, lock}, nil
}
