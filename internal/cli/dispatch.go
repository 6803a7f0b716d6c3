package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/dispatch"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/kube"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/review"
)

// usageOf is a usage error naming the flag of a dispatch.FieldError.
func usageOf(err error) error {
	var fe *dispatch.FieldError
	if errors.As(err, &fe) {
		return fail(ExitUsage, "--%s %s", fe.Field, fe.Msg)
	}
	return fail(ExitUsage, "%v", err)
}

// dispatchFlags are the flags of pipeline dispatch.
type dispatchFlags struct {
	before, after, branch, scope, region, namespace, kubeAPI, kubeToken string
	reconcile                                                           bool
	maxAttempts                                                         int
}

func (a *app) dispatchCommand() *cobra.Command {
	var f dispatchFlags
	cmd := &cobra.Command{
		Use:   "dispatch --after COMMIT [--before COMMIT] --branch B --scope central|regional [--region R]",
		Short: "Start the PipelineRuns a push needs in this cluster's Tekton, one at a time per cluster",
		Long: `dispatch runs in a cluster's Tekton (the central cluster: --scope central; a
regional cluster: --scope regional --region R) on a push to the deploy branch,
in a checkout of the repository with its history. It starts the PipelineRun of
every cluster of its scope whose rendered files the push changed, pinned to the
pushed commit, which must be on the deploy branch's first-parent history
(--branch: pushed or merged to it, not a commit of another branch or of a
merged side branch): a first push (--before all zeros), a force push (--before not an
ancestor of --after) or an unknown --before starts every cluster of the scope;
a deleted branch (--after all zeros) starts nothing.

One run at a time per cluster: a run for a newer commit waits behind the
running one, and a waiting run of an older commit is cancelled (superseded).
--reconcile (a CronJob runs it) starts the newest waiting run of each cluster
once nothing runs, and runs again a cluster whose newest run failed at
--after, at most --max-attempts times.

The Kubernetes API is the pod's own (its ServiceAccount), else --kube-api with
--kube-token-file.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.runDispatch(&f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.before, "before", "", "the commit before the push (all zeros: the branch is new)")
	fl.StringVar(&f.after, "after", "", "the commit pushed (all zeros: the branch was deleted); with --reconcile, the deploy branch's head (default: the checkout's HEAD)")
	fl.StringVar(&f.branch, "branch", "", "the deploy branch: only commits on its first-parent history run")
	fl.StringVar(&f.scope, "scope", "", "central (the central cluster's runs) or regional (one region's, with --region)")
	fl.StringVar(&f.region, "region", "", "the region of a regional cluster")
	fl.StringVar(&f.namespace, "namespace", "regionctl-pipelines", "the namespace of the PipelineRuns")
	fl.BoolVar(&f.reconcile, "reconcile", false, "start waiting runs and retry failed ones instead of dispatching a push")
	fl.IntVar(&f.maxAttempts, "max-attempts", 3, "with --reconcile: runs of one commit for a cluster before giving up")
	fl.StringVar(&f.kubeAPI, "kube-api", "", "the Kubernetes API server (default: the pod's)")
	fl.StringVar(&f.kubeToken, "kube-token-file", "", "a bearer token for --kube-api")
	return cmd
}

func (a *app) runDispatch(f *dispatchFlags) error {
	if f.reconcile && f.after == "" {
		repo, err := gitbase.Open(a.root)
		if err != nil {
			return fail(ExitExternal, "%v", err)
		}
		head, err := repo.Commit("HEAD")
		repo.Close()
		if err != nil {
			return fail(ExitExternal, "%v", err)
		}
		f.after = head.Hash.String()
	}
	push := dispatch.Push{Scope: f.scope, Region: f.region, Before: f.before, After: f.after, Branch: f.branch, Reconcile: f.reconcile}
	if err := push.Check(); err != nil {
		return usageOf(err)
	}
	if dispatch.ZeroCommit(f.after) {
		fmt.Fprintln(a.stdout, "the branch was deleted: nothing to dispatch")
		return nil
	}
	if err := a.onDeployBranch(f.branch, f.after); err != nil {
		return err
	}
	api, err := a.kubeClient(f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var actions []dispatch.Action
	var refused []diff.Skip
	if f.reconcile {
		heads, err := a.runsOfScope(f, "")
		if err != nil {
			return err
		}
		byCluster := map[string][]byte{}
		for _, r := range heads.runs {
			byCluster[r.Cluster] = r.Manifest
		}
		actions, err = dispatch.Reconcile(ctx, api, f.namespace, push.Selector(), f.after, byCluster, f.maxAttempts, time.Now())
		if err != nil {
			return fail(ExitExternal, "%v", err)
		}
	} else {
		base, why, err := a.dispatchBase(f)
		if err != nil {
			return err
		}
		if why != "" {
			fmt.Fprintf(a.stdout, "%s: every cluster of the scope runs\n", why)
		}
		runs, err := a.runsOfScope(f, base)
		if err != nil {
			return err
		}
		if actions, err = dispatch.Dispatch(ctx, api, f.namespace, runs.runs, time.Now()); err != nil {
			return fail(ExitExternal, "%v", err)
		}
		refused = runs.refused
	}
	for _, act := range actions {
		fmt.Fprintf(a.stdout, "%-28s %-10s %s %s\n", act.Cluster, act.Did, act.Run, act.Detail)
	}
	for _, s := range refused {
		fmt.Fprintf(a.stdout, "%-28s %-10s %s\n", s.Cluster, "refused", s.Diag.Summary)
	}
	if len(actions) == 0 && len(refused) == 0 {
		fmt.Fprintln(a.stdout, "nothing to dispatch")
	}
	if len(refused) > 0 {
		a.printer(a.stderr).Diagnostics(a.relative(diagsOf(refused)))
		return fail(ExitInput, "the push skips a step of the deletion of a cluster or a rollout wave: nothing of the %d refused cluster(s) started, the push's other clusters did. "+
			"A skipped deletion step: the PipelineRuns stay in deploy/ as destroy runs; to destroy, push delete_pipeline: false with delete: true, let the run complete, then set delete_pipeline: true again. "+
			"A skipped wave: roll the value out to the earlier sectors first, or give the sector a rollout_exceptions entry", len(refused))
	}
	return nil
}

func diagsOf(skips []diff.Skip) diag.Diagnostics {
	var ds diag.Diagnostics
	for _, s := range skips {
		ds = append(ds, s.Diag)
	}
	return ds
}

func (a *app) kubeClient(f *dispatchFlags) (*kube.Client, error) {
	if f.kubeAPI == "" {
		c, err := kube.InCluster()
		if err != nil {
			return nil, fail(ExitUsage, "%v", err)
		}
		return c, nil
	}
	token, err := os.ReadFile(f.kubeToken)
	if err != nil {
		return nil, fail(ExitUsage, "--kube-token-file: %v", err)
	}
	return &kube.Client{Base: strings.TrimSuffix(f.kubeAPI, "/"), Token: strings.TrimSpace(string(token))}, nil
}

// onDeployBranch refuses a commit that is not on branch's first-parent
// history in the checkout: with the webhook secret and push rights to some
// other branch, unmerged config and roots would otherwise run as the
// pipeline's identity.
func (a *app) onDeployBranch(branch, commit string) error {
	return a.onDeployBranchOf(a.root, branch, commit)
}

func (a *app) onDeployBranchOf(dir, branch, commit string) error {
	repo, err := gitbase.Open(dir)
	if err != nil {
		return fail(ExitExternal, "%v", err)
	}
	defer repo.Close()
	ok, err := repo.OnFirstParentHistory(branch, plumbing.NewHash(commit))
	var user *gitbase.UserError
	switch {
	case errors.As(err, &user):
		return fail(ExitInput, "%v", err)
	case err != nil:
		return fail(ExitExternal, "%v", err)
	case !ok:
		return fail(ExitInput, "%s is not on the first-parent history of the deploy branch %s: only commits pushed or merged to it run", commit, branch)
	}
	return nil
}

// dispatchBase is the commit a push is compared with, or "" (every cluster
// runs) with the reason (dispatch.BaseOf).
func (a *app) dispatchBase(f *dispatchFlags) (string, string, error) {
	repo, err := gitbase.Open(a.root)
	if err != nil {
		return "", "", fail(ExitExternal, "%v", err)
	}
	defer repo.Close()
	base, why, err := dispatch.BaseOf(repo, f.before, f.after)
	if err != nil {
		return "", "", fail(ExitExternal, "%v", err)
	}
	return base, why, nil
}

// scopeRuns are the runs a push starts in a scope, and the clusters whose
// deletion it takes in fewer steps than their lifecycle: those start
// nothing.
type scopeRuns struct {
	runs    []dispatch.Run
	refused []diff.Skip
}

// runsOfScope are the PipelineRuns of the scope's clusters pinned to
// --after: of every cluster when base is "", else of those the change
// since base affects, but for the clusters whose deletion the change
// takes in too few steps.
func (a *app) runsOfScope(f *dispatchFlags, base string) (scopeRuns, error) {
	var clusters []diff.AffectedCluster
	var files map[string][]byte
	var out scopeRuns
	if base != "" {
		res, err := a.reviewOf(review.Options{Base: base, Head: f.after, Partial: true, Drift: true, ListOnly: true})
		if err != nil {
			return out, err
		}
		// A push whose deploy/ is not what its config renders starts
		// nothing: each run would refuse it (pipeline.Runner.Tree).
		if err := a.driftError(res.Report, false); err != nil {
			return out, err
		}
		skipped := map[string]bool{}
		// A push that skips a rollout wave (pushed past review, which
		// refuses it) starts nothing in the sector it skipped to: the
		// wave rule decides here as in validate, render and affected.
		res.Refused = append(res.Refused, diff.WaveSkips(res.Report)...)
		for _, s := range res.Refused {
			if (dispatch.Push{Scope: f.scope, Region: f.region}).InScope(s.Pipeline, s.Region) {
				out.refused = append(out.refused, s)
			}
			skipped[s.Cluster] = true
		}
		for _, c := range diff.Runs(res.Report.Affected) {
			if !skipped[c.ID] {
				clusters = append(clusters, c)
			}
		}
		files = res.HeadOut.ByPath()
	} else {
		repo, err := gitbase.Open(a.root)
		if err != nil {
			return out, fail(ExitExternal, "%v", err)
		}
		defer repo.Close()
		head, err := repo.Commit(f.after)
		if err != nil {
			return out, fail(ExitExternal, "%v", err)
		}
		fsys, err := repo.FS(head)
		if err != nil {
			return out, fail(ExitExternal, "%v", err)
		}
		_, rendered, diags, err := a.renderFS(fsys)
		if err != nil {
			return out, err
		}
		if err := a.reportDiagnostics(diags); err != nil || rendered == nil {
			return out, fail(ExitInput, "%s does not render", f.after)
		}
		files = rendered.ByPath()
		for _, c := range rendered.Index.Clusters {
			pipeline := "regional"
			if c.Type == "regional" {
				pipeline = "central"
			}
			clusters = append(clusters, diff.AffectedCluster{ID: c.ID, Region: c.Region, Cluster: c.Name, Sector: c.Sector, Environment: c.Environment, Pipeline: pipeline})
		}
	}
	fleet, err := a.validFleet()
	if err != nil {
		return out, err
	}
	waves := sectorWaves(clusters, fleet.Sectors, time.Now())
	for _, c := range clusters {
		if c.Pipeline != f.scope || (f.region != "" && c.Region != f.region) {
			continue
		}
		manifest, err := pipelineRunAt(files[tekton.Path(c.Environment, c.Region, c.Cluster)], f.after, false)
		if err != nil {
			return out, fail(ExitInput, "the PipelineRun of %s: %v", c.ID, err)
		}
		w := waves[c.Sector]
		out.runs = append(out.runs, dispatch.Run{Cluster: c.ID, Commit: f.after, Manifest: manifest, NotBefore: w.at, Wave: w.why})
	}
	return out, nil
}

// wave is when a push's runs of one sector may start, and why then.
type wave struct {
	at  time.Time
	why string
}

// sectorWaves rolls a push out sector by sector, in rollout order: the
// runs of a sector start once every earlier sector the push also changes
// has had its soak since the push (now); a sector the push changes first
// starts at once. Each region's dispatch computes the same waves from the
// same commit, without reaching another region.
func sectorWaves(clusters []diff.AffectedCluster, sectors []*config.Sector, now time.Time) map[string]wave {
	touched := map[string]bool{}
	for _, c := range clusters {
		touched[c.Sector] = true
	}
	out := map[string]wave{}
	var delay time.Duration
	var before []string
	for _, s := range sectors { // in rollout order
		if !touched[s.Name] {
			continue
		}
		w := wave{at: now.Add(delay)}
		if len(before) > 0 {
			w.why = "after " + strings.Join(before, ", ")
		}
		out[s.Name] = w
		delay += s.Soak
		before = append(before, fmt.Sprintf("%s's %s soak", s.Name, strings.TrimSuffix(strings.TrimSuffix(s.Soak.String(), "0s"), "0m")))
	}
	return out
}

// fetchCommand checks the fleet repository out for a Tekton Task, with
// go-git: the image needs no git, and no value reaches a shell.
func (a *app) fetchCommand() *cobra.Command {
	var rawURL, revision, branch, result, credentials string
	cmd := &cobra.Command{
		Use:   "fetch --url URL --branch B [--revision REV] DIR",
		Short: "Clone the fleet repository with its history and check out the deploy branch or one of its commits",
		Long: `fetch clones the fleet repository and checks out the deploy branch's tip
(--branch), or --revision: a commit on that branch's first-parent history (one
pushed or merged to it). A commit only another branch, or a merged side
branch, holds is refused: nothing unmerged runs as the pipeline's identity.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			u, revision, err := dispatch.CheckClone(rawURL, branch, revision)
			if err != nil {
				return usageOf(err)
			}
			auth, err := fetchAuth(credentials, u.Scheme)
			if err != nil {
				return fail(ExitUsage, "--credentials-dir: %v", err)
			}
			repo, err := git.PlainClone(args[0], false, &git.CloneOptions{URL: rawURL, NoCheckout: true, Auth: auth})
			if err != nil {
				return fail(ExitExternal, "cloning %s: %v", rawURL, err)
			}
			ref, err := repo.Reference(plumbing.NewRemoteReferenceName("origin", branch), true)
			if err != nil {
				return fail(ExitInput, "no branch %s in %s: %v", branch, rawURL, err)
			}
			hash := ref.Hash()
			if dispatch.IsCommit(revision) {
				hash = plumbing.NewHash(revision)
				if err := a.onDeployBranchOf(args[0], branch, revision); err != nil {
					return err
				}
			}
			wt, err := repo.Worktree()
			if err != nil {
				return fail(ExitExternal, "%v", err)
			}
			if err := wt.Checkout(&git.CheckoutOptions{Hash: hash, Force: true}); err != nil {
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					return fail(ExitInput, "the commit %s is not in %s", revision, rawURL)
				}
				return fail(ExitExternal, "checking out %s: %v", revision, err)
			}
			if result != "" {
				if err := os.WriteFile(result, []byte(hash.String()), 0o644); err != nil {
					return fail(ExitExternal, "%v", err)
				}
			}
			fmt.Fprintf(a.stdout, "checked out %s at %s\n", rawURL, hash)
			return nil
		},
	}
	cmd.Flags().StringVar(&rawURL, "url", "", "the clone URL (from the rendered PipelineRun, never from a webhook body)")
	cmd.Flags().StringVar(&branch, "branch", "", "the deploy branch")
	cmd.Flags().StringVar(&revision, "revision", "", "a full commit id on the deploy branch's first-parent history, or the branch (default: the branch's tip)")
	cmd.Flags().StringVar(&result, "result", "", "write the commit checked out to this file (a Tekton result)")
	cmd.Flags().StringVar(&credentials, "credentials-dir", "", "a mounted secret: token (and username) for https, or ssh-privatekey and known_hosts for ssh; an empty or missing directory means none")
	return cmd
}

// fetchAuth reads the repository's credentials from a mounted secret: an
// access token for an https URL (user x-access-token unless the secret has
// a username), or a private key for an ssh URL, which is used only with the
// host keys of known_hosts: never trusting whatever host answers.
func fetchAuth(dir, scheme string) (transport.AuthMethod, error) {
	if dir == "" {
		return nil, nil
	}
	read := func(name string) (string, bool, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		return string(b), err == nil, err
	}
	switch scheme {
	case "https":
		token, ok, err := read("token")
		if err != nil || !ok {
			return nil, err
		}
		user, _, err := read("username")
		if err != nil {
			return nil, err
		}
		if user = strings.TrimSpace(user); user == "" {
			user = "x-access-token"
		}
		return &githttp.BasicAuth{Username: user, Password: strings.TrimSpace(token)}, nil
	case "ssh":
		key, ok, err := read("ssh-privatekey")
		if err != nil || !ok {
			return nil, err
		}
		if _, ok, err := read("known_hosts"); err != nil || !ok {
			return nil, fmt.Errorf("an ssh key without known_hosts in %s: regionctl does not trust any host key that answers", dir)
		}
		auth, err := gitssh.NewPublicKeys("git", []byte(key), "")
		if err != nil {
			return nil, fmt.Errorf("ssh-privatekey: %v", err)
		}
		if auth.HostKeyCallback, err = gitssh.NewKnownHostsCallback(filepath.Join(dir, "known_hosts")); err != nil {
			return nil, fmt.Errorf("known_hosts: %v", err)
		}
		return auth, nil
	}
	return nil, nil
}
