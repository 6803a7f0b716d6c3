package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/awsx"
	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/pipeline"
	"github.com/regionctl/regionctl/internal/platformapi"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/tfrun"
	"github.com/regionctl/regionctl/internal/view"
)

// pipelineFlags are the flags of pipeline central and regional.
type pipelineFlags struct {
	region, cluster, api, output, step, requestID string
	dryRun, plan                                  bool
	workDir, logFile, terraformDir, template      string
	accountWait, liveWait, leaseTTL, leaseWait    time.Duration
	approvalWait, deployRoleWait                  time.Duration
	parallel                                      int
	// What the caller (a Tekton PipelineRun) expects the plan to use;
	// a difference means the PipelineRun is stale.
	expectRoleARN, expectExternalID, expectTFVars, expectDestroy string
}

// check refuses flags that do not go together, before anything is read.
func (f *pipelineFlags) check() error {
	if !f.plan || f.output != "markdown" { // a plan's summary may be markdown
		if err := checkOutput(f.output); err != nil {
			return err
		}
	}
	switch {
	case f.plan && f.dryRun:
		return fail(ExitUsage, "--plan and --dry-run: --dry-run prints the steps without running them, --plan runs them without changing anything; choose one")
	case f.region == "":
		return fail(ExitUsage, "--region is required")
	case f.expectDestroy != "" && f.expectDestroy != "true" && f.expectDestroy != "false":
		return fail(ExitUsage, "--destroy must be true or false, not %q", f.expectDestroy)
	}
	return nil
}

// pipelineLong is pipeline's help.
const pipelineLong = `pipeline central provisions a region, as the central pipeline's role in the
organisation's management account: its account (AWS Organizations), the
regional cluster (terraform/regional-cluster, through the account's
OrganizationAccountAccessRole), and the regional pipeline's bootstrap
(terraform/central-bootstrap: its role, the region's minting role, the
StackSet that deploys ManagementClusterDeployRole into the region's
management cluster OU, and the organisation's guardrails on the region's
OUs). pipeline regional provisions the management clusters of its own
region, as the region's pipeline role: their accounts through the region's
minting role (created tagged, moved from the root into the region's OU,
where AWS CloudFormation deploys the deploy role), terraform/management-cluster
through ManagementClusterDeployRole assumed with the region's ExternalId, and
their registration with the platform API. No regional principal ever assumes
an administrator role. Neither runs when deploy/ is not what the config renders.

Every step is idempotent: after a failure, run the same command again; it
resumes and creates nothing twice. --dry-run prints every account, role ARN,
ExternalId, Terraform root, variables file, state backend and API call in order,
calling nothing.

AWS is reached with the usual SDK configuration (AWS_PROFILE, AWS_REGION,
AWS_ENDPOINT_URL, ...). When AWS_ENDPOINT_URL is a loopback address (an
emulator such as moto), Terraform workspaces get the emulator overrides of
internal/tfrun/emulator.go.`

func (a *app) pipelineCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "The central and regional provisioning pipelines",
		Long:  pipelineLong,
	}
	var f pipelineFlags
	central := &cobra.Command{
		Use:   "central --region R [--dry-run]",
		Short: "The central pipeline of one region",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.runPipeline(&f, func() (*pipeline.Plan, error) { return pipeline.Central(a.fleet, f.region, f.cluster, f.requestID) })
		},
	}
	regional := &cobra.Command{
		Use:   "regional --region R [--cluster C] [--dry-run]",
		Short: "The regional pipeline: the management clusters of one region",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.runPipeline(&f, func() (*pipeline.Plan, error) {
				return pipeline.Regional(a.fleet, f.region, f.cluster, f.api, f.requestID)
			})
		},
	}
	for _, cs := range []struct {
		cmd   *cobra.Command
		steps []string
	}{{central, pipeline.CentralSteps}, {regional, pipeline.RegionalSteps}} {
		c, steps := cs.cmd, cs.steps
		fl := c.Flags()
		fl.StringVar(&f.region, "region", "", "the region to run for (required)")
		fl.StringVar(&f.cluster, "cluster", "", "only this cluster")
		fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan of steps; call no AWS or Terraform (refused, as a run is, when deploy/ is not what the config renders)")
		fl.BoolVar(&f.plan, "plan", false, "change nothing: find the accounts, plan each Terraform root with the pipeline's identities, keep each plan next to its state for the apply that follows the review, and print what they propose (-o markdown for a pull request)")
		fl.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
		fl.StringVar(&f.step, "step", "", "only this step ("+strings.Join(steps, ", ")+"); what earlier steps learned is kept in --work-dir")
		fl.StringVar(&f.requestID, "request-id", "", "id carried into session names, logs and API calls (default: generated)")
		fl.StringVar(&f.workDir, "work-dir", "", "Terraform workspaces and step state (default: <root>/.regionctl/work)")
		fl.StringVar(&f.logFile, "log-file", "", "Terraform's output, prefixed by cluster (default: <root>/.regionctl/logs/<pipeline>-<region>-<request id>.log)")
		fl.StringVar(&f.terraformDir, "terraform-dir", "", "the Terraform roots and modules (default: <root>/terraform)")
		fl.StringVar(&f.template, "terraform-template", "", "a directory with an initialised .terraform/providers and lock file to seed new workspaces from")
		fl.DurationVar(&f.accountWait, "account-wait", 15*time.Minute, "how long to wait for AWS Organizations to create an account")
		fl.DurationVar(&f.leaseTTL, "lease-ttl", 10*time.Minute, "how long a run's lease of a state lasts without its heartbeat (a dead run's lease expires after it)")
		fl.DurationVar(&f.leaseWait, "lease-wait", 0, "how long to wait for another run's lease of a state to end or expire")
		fl.DurationVar(&f.deployRoleWait, "deploy-role-wait", 10*time.Minute, "how long to wait for AWS CloudFormation to deploy ManagementClusterDeployRole into an account just placed in its region's OU")
		fl.DurationVar(&f.approvalWait, "approval-wait", 0, "how long a run that needs an approval (a destroy; a sector with approval: always) waits for an approver after publishing its plan (0: it stops at once, naming the command that approves)")
		fl.StringVar(&f.expectRoleARN, "role-arn", "", "refuse to run unless the assume-role step uses this role ARN (as a PipelineRun passes it)")
		fl.StringVar(&f.expectExternalID, "external-id", "", "refuse to run unless the assume-role step uses this ExternalId")
		fl.StringVar(&f.expectTFVars, "tfvars", "", "refuse to run unless the terraform step uses this variables file")
		fl.StringVar(&f.expectDestroy, "destroy", "", "refuse to run unless the terraform step destroys (true) or applies (false)")
		_ = c.RegisterFlagCompletionFunc("region", completeRegions)
		_ = c.RegisterFlagCompletionFunc("cluster", completeClusterOfRegion)
		_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "markdown"}, noFiles))
	}
	regional.Flags().StringVar(&f.api, "api-endpoint", "", "platform API base URL (default: the platform_api_endpoint output of the regional cluster's Terraform state)")
	regional.Flags().DurationVar(&f.liveWait, "live-wait", 5*time.Minute, "how long to wait for GET /api/v0/live to answer")
	regional.Flags().IntVar(&f.parallel, "parallel", 1, "how many management clusters run at once; with more than 1, a failure stops only its cluster")
	cmd.AddCommand(central, regional, a.approveCommand(), a.dispatchCommand(), a.fetchCommand())
	return cmd
}

func (a *app) runPipeline(f *pipelineFlags, plan func() (*pipeline.Plan, error)) error {
	if err := f.check(); err != nil {
		return err
	}
	if f.requestID == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		f.requestID = hex.EncodeToString(b)
	}
	fl, err := a.validFleet()
	if err != nil {
		return err
	}
	// A pipeline runs a commit of the deploy branch, whose review base is
	// itself; run from anywhere else, it is held to the same history
	// rules as the review would have held it.
	history, err := a.historyDiagnostics(fl, a.fleetDiags)
	if err != nil {
		return err
	}
	if err := a.reportDiagnostics(history); err != nil {
		return err
	}
	p, err := plan()
	if err != nil {
		return fail(ExitInput, "%v", err)
	}
	if err := p.OnlyStep(f.step); err != nil {
		return fail(ExitUsage, "%v", err)
	}
	command := map[string]string{"true": "destroy", "false": "apply"}[f.expectDestroy]
	if err := p.Holds(pipeline.Expected{RoleARN: f.expectRoleARN, ExternalID: f.expectExternalID, TFVars: f.expectTFVars, Command: command}); err != nil {
		return fail(ExitInput, "%v", err)
	}
	if f.dryRun {
		// The plan printed is the plan a run would carry out: a run refuses
		// a deploy/ that is not what the config renders, and so does this.
		if err := a.treeIsRendered(); err != nil {
			return fail(ExitInput, "%v", err)
		}
		if f.output == "json" {
			return writeJSON(a.stdout, p)
		}
		a.printer(a.stdout).PipelinePlan(p)
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runner, closeLog, err := a.pipelineRunner(ctx, f, p)
	if err != nil {
		return err
	}
	defer closeLog()
	// The runner refuses to run unless deploy/ is what the config renders.
	runner.Tree = a.treeIsRendered
	runner.PlanOnly = f.plan
	runner.ApprovalWait = f.approvalWait
	runner.DeployRoleWait = f.deployRoleWait
	// Progress goes to stderr when stdout carries JSON or markdown.
	progressTo := a.stdout
	if f.output != "text" {
		progressTo = a.stderr
	}
	printer := a.printer(progressTo)
	if !a.quiet {
		fmt.Fprintf(progressTo, "%s pipeline of %s, request %s; Terraform output: %s\n", p.Pipeline, p.Region, p.RequestID, runner.logPath)
	}
	progress := printer.NewProgress()
	runner.Events = progress.Event
	start := time.Now()
	results, err := runner.Run(ctx, p)
	progress.Close()
	return a.reportRun(f, p, runner, printer, results, err, time.Since(start))
}

// reportRun prints a pipeline run's results as f asks, and maps its error
// to an exit: a drifted tree is the input's fault, a lease held elsewhere
// or any other failure the world's, which the same command resumes.
func (a *app) reportRun(f *pipelineFlags, p *pipeline.Plan, runner *loggedRunner, printer *view.Printer, results []pipeline.StepResult, err error, took time.Duration) error {
	switch {
	case f.output == "json" && f.plan:
		_ = writeJSON(a.stdout, map[string]any{"pipeline": p.Pipeline, "region": p.Region, "request_id": p.RequestID, "steps": results, "plans": runner.Plans(), "error": errString(err)})
	case f.output == "json":
		_ = writeJSON(a.stdout, map[string]any{"pipeline": p.Pipeline, "region": p.Region, "request_id": p.RequestID, "steps": results, "error": errString(err)})
	case f.output == "markdown":
		fmt.Fprint(a.stdout, view.PlansMarkdown(p.Pipeline, p.Region, runner.Plans()))
	case f.plan && err == nil:
		printer.PlanSummaries(runner.Plans())
	}
	if err != nil {
		var held *pipeline.LockHeldError
		var drift *pipeline.DriftError
		switch {
		case errors.As(err, &drift):
			return fail(ExitInput, "%v", err)
		case errors.As(err, &held):
			return fail(ExitExternal, "%v", err)
		}
		return fail(ExitExternal, "%v\nThe steps before it are done; run the same command again to resume (request %s; Terraform output in %s).", err, p.RequestID, runner.logPath)
	}
	if f.plan {
		printer.OK("%s pipeline of %s planned in %s (%d steps, request %s); nothing changed", p.Pipeline, p.Region, took.Round(time.Second), len(results), p.RequestID)
		return nil
	}
	printer.OK("%s pipeline of %s done in %s (%d steps, request %s)", p.Pipeline, p.Region, took.Round(time.Second), len(results), p.RequestID)
	return nil
}

// treeIsRendered is the runner's Tree check: it renders the config and
// fails, listing the files, when deploy/ is not exactly what it renders.
func (a *app) treeIsRendered() error {
	out, err := a.renderFleet()
	if err != nil {
		return err
	}
	dir := filepath.Join(a.root, deployDir)
	ch, _, err := deploytree.Plan(deploytree.OS{}, dir, out)
	if err != nil {
		return err
	}
	if ch.Clean() {
		return nil
	}
	extra := append(append([]string{}, ch.Removed...), ch.Foreign...)
	a.printer(a.stderr).StaleTree(a.display(dir), ch.Changed, ch.Added, extra)
	return fmt.Errorf("%s is not what the config renders (edited by hand, or not rendered); the pipeline applies only what `regionctl render` makes of this commit", a.display(dir))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// loggedRunner is a pipeline.Runner with the log file it writes.
type loggedRunner struct {
	*pipeline.Runner
	logPath string
}

// pipelineRunner wires the runner to AWS (aws-sdk-go-v2), Terraform
// (terraform-exec) and the platform API.
func (a *app) pipelineRunner(ctx context.Context, f *pipelineFlags, p *pipeline.Plan) (*loggedRunner, func(), error) {
	root, err := filepath.Abs(a.root)
	if err != nil {
		return nil, nil, fail(ExitUsage, "%v", err)
	}
	or := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	work, err := deploytree.Inside(root, deploytree.WorkDir)
	if err != nil {
		return nil, nil, fail(ExitInput, "%v", err)
	}
	workDir := or(f.workDir, filepath.Join(work, "work"))
	logPath := or(f.logFile, filepath.Join(work, "logs", fmt.Sprintf("%s-%s-%s.log", p.Pipeline, p.Region, p.RequestID)))
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, nil, fail(ExitExternal, "creating the log directory: %v", err)
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fail(ExitExternal, "opening the log file: %v", err)
	}
	fmt.Fprintf(logFile, "# regionctl %s pipeline of %s, request %s, started %s\n", p.Pipeline, p.Region, p.RequestID, time.Now().UTC().Format(time.RFC3339))
	cloud, err := awsx.New(ctx, awsx.Options{Region: p.Region, RequestID: p.RequestID, AccountWait: f.accountWait, Log: logFile})
	if err != nil {
		logFile.Close()
		return nil, nil, fail(ExitExternal, "%v", err)
	}
	host, _ := os.Hostname()
	tf := &tfrun.Runner{Source: or(f.terraformDir, filepath.Join(root, "terraform")), WorkDir: workDir, Template: f.template, Emulator: tfrun.EmulatorEndpoint(os.Getenv("AWS_ENDPOINT_URL"))}
	registry := &platformapi.Client{Credentials: cloud.Config(pipeline.Credentials{}, "").Credentials, LiveWait: f.liveWait}
	r := &pipeline.Runner{Cloud: cloud, Terraform: tf, Registry: registry, Dir: root, Log: logFile,
		Host: host, PID: os.Getpid(), Process: processSpace(), Alive: processAlive, StateDir: workDir, Parallel: f.parallel,
		LeaseTTL: f.leaseTTL, LeaseWait: f.leaseWait}
	r.Commit, r.History = deployedCommit(root)
	return &loggedRunner{Runner: r, logPath: logPath}, func() { logFile.Close() }, nil
}

// deployedCommit is the commit a run deploys: the checkout's HEAD, when
// the run's inputs hold no uncommitted change ("" otherwise, and outside a
// git repository), with the repository's history to order commits by.
func deployedCommit(root string) (string, pipeline.History) {
	repo, err := gitbase.Open(root)
	if err != nil {
		return "", nil
	}
	head, err := repo.Commit("HEAD")
	if err != nil {
		return "", nil
	}
	if dirty, err := repo.Dirty(head, root, append(append([]string{}, render.Inputs...), deployDir)...); err != nil || len(dirty) > 0 {
		return "", nil
	}
	return head.Hash.String(), gitHistory{repo}
}

// gitHistory answers pipeline.History from a git repository.
type gitHistory struct{ repo *gitbase.Repo }

func (h gitHistory) IsAncestor(a, b string) (bool, bool, error) {
	ca, err := h.repo.Commit(a)
	if err != nil {
		return false, false, nil
	}
	cb, err := h.repo.Commit(b)
	if err != nil {
		return false, false, nil
	}
	ok, err := ca.IsAncestor(cb)
	return ok, true, err
}
