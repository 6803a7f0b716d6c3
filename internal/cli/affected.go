package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/view"
)

func (a *app) affectedCommand() *cobra.Command {
	var base, head, gitlabTemplate string
	var allowDrift, planOnly, exitCode bool
	var out *output
	cmd := &cobra.Command{
		Use:   "affected --base REF [--head REF] [-o text|json|pipelineruns|matrix|gitlab-ci]",
		Short: "List the clusters a change affects and the pipeline runs it needs",
		Long: `affected renders --base and --head (default: the working tree) and compares
each cluster's rendered files by content, so a global or sector change reaches
every cluster it changes and nothing else. A regional cluster needs the central
pipeline, a management cluster the regional one; a change to Helm values alone
needs none (Argo CD syncs it).

-o pipelineruns prints the PipelineRuns to create, at the head commit, ready
for 'kubectl create -f -'; it refuses a working tree with uncommitted changes,
which no run could deploy.

-o matrix prints the clusters whose pipeline must run as a CI job matrix
for GitHub Actions' strategy.matrix (fromJSON): {"include": [{"id", "runs"}]},
one job per cluster (runs holds it, as -o json prints it), or, past the 256
jobs a matrix may make, 256 jobs of consecutive clusters each.
-o gitlab-ci prints a GitLab child pipeline with one job per such cluster:
each extends the hidden job .regionctl-affected, defined in the file
--gitlab-template names (included from the repository), and gets the cluster
only as variables (REGIONCTL_REGION, REGIONCTL_CLUSTER, REGIONCTL_PIPELINE,
REGIONCTL_SECTOR, REGIONCTL_ENVIRONMENT, REGIONCTL_CHANGE). With --plan each
job also gets REGIONCTL_PLAN: "true", and a last job in the .post stage,
extending .regionctl-plans from the same file, folds the jobs' plan-only runs
into one merge request note. docs/ci/ has both recipes.

affected fails (exit 1) when the head's deploy/ holds files that are not what
its config renders to (drift): a pipeline must never run from such a tree.
--allow-drift only warns. It also fails on a skipped rollout wave, as
validate and render do.

--exit-code: exit 2 when the change affects a cluster, 0 when it affects
none, 1 on any error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, headOut, headCommit, err := a.review(base, head, true)
			if err != nil {
				return err
			}
			// A drifted deploy/ is not what the config says: no pipeline
			// runs from it.
			if err := a.driftError(r, allowDrift); err != nil {
				return err
			}
			// Nor from a change that skips a rollout wave.
			if err := wavesError(r); err != nil {
				return err
			}
			if err := a.printAffected(r, headOut, headCommit, out.format, gitlabTemplate, planOnly); err != nil {
				return err
			}
			return changesExit(exitCode && len(r.Affected) > 0)
		},
	}
	cmd.Flags().StringVar(&base, "base", "", "git ref before the change (default: merge base of HEAD and the deploy branch, gitops.revision: origin/<branch>, else <branch>)")
	cmd.Flags().StringVar(&head, "head", "", "git ref after the change (default: the working tree)")
	out = outputFlag(cmd, "emit", "text", "json", "pipelineruns", "matrix", "gitlab-ci")
	cmd.Flags().StringVar(&gitlabTemplate, "gitlab-template", ".gitlab/regionctl-affected.yml", "with -o gitlab-ci: the repository file that defines the hidden job .regionctl-affected")
	cmd.Flags().BoolVar(&allowDrift, "allow-drift", false, "list the clusters even when deploy/ has drift (warn only)")
	cmd.Flags().BoolVar(&planOnly, "plan", false, "with -o pipelineruns: runs that change nothing and plan each root, keeping the plans for the review and the apply that follows it; with -o gitlab-ci: jobs that plan (REGIONCTL_PLAN) and a last job, extending .regionctl-plans, that posts their plans as one note")
	cmd.Flags().BoolVar(&a.fullReview, "full", false, "render every cluster on both sides, not only those whose inputs differ")
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "exit 2 when the change affects a cluster, 0 when it affects none, 1 on any error (as terraform plan -detailed-exitcode)")
	return cmd
}

// printAffected prints the clusters a change affects in format.
func (a *app) printAffected(r *diff.Report, headOut *render.Output, headCommit *object.Commit, format, gitlabTemplate string, planOnly bool) error {
	switch format {
	case "json":
		return writeJSON(a.stdout, r.Affected)
	case "matrix":
		return writeJSON(a.stdout, jobMatrix(r.Affected, maxJobs))
	case "gitlab-ci":
		return writeGitLabChild(a.stdout, r.Affected, gitlabTemplate, planOnly)
	case "pipelineruns":
		// A run deploys a commit: uncommitted changes would run as
		// the commit before them.
		if len(r.Uncommitted) > 0 {
			return fail(ExitInput, "-o pipelineruns pins each run to a commit, and the working tree holds uncommitted changes (%s): commit them, or pass --head REF",
				clusterOrFiles(r.Uncommitted))
		}
		revision := headCommit.Hash.String()
		files := headOut.ByPath()
		for i, c := range diff.Runs(r.Affected) {
			run, err := pipelineRunAt(files[tekton.Path(c.Environment, c.Region, c.Cluster)], revision, planOnly)
			if err != nil {
				return fail(ExitInput, "PipelineRun of %s: %v", c.ID, err)
			}
			if i > 0 {
				fmt.Fprintln(a.stdout, "---")
			}
			a.stdout.Write(run)
		}
		return nil
	}
	p := a.printer(a.stdout)
	for _, c := range r.Affected {
		fmt.Fprintf(p.W, "%-28s %-10s %-9s %-8s %s\n", c.ID, c.Change, c.Pipeline, c.Sector, strings.Join(c.Reasons, ", "))
	}
	return nil
}

// pipelineRunAt sets a rendered PipelineRun's git-revision to the commit the
// run must deploy; a plan-only run gets the plan param, a name of its own
// and the plan mode label, so that dispatch never takes it for the apply.
func pipelineRunAt(rendered []byte, revision string, planOnly bool) ([]byte, error) {
	if rendered == nil {
		return nil, fmt.Errorf("not rendered")
	}
	var run tekton.PipelineRun
	if err := yaml.UnmarshalStrict(rendered, &run); err != nil {
		return nil, err
	}
	for i := range run.Spec.Params {
		if run.Spec.Params[i].Name == "git-revision" {
			run.Spec.Params[i].Value = revision
		}
	}
	if planOnly {
		run.Spec.Params = append(run.Spec.Params, tekton.RunParam{Name: "plan", Value: "true"})
		if run.Metadata.GenerateName != "" {
			run.Metadata.GenerateName += "plan-"
		}
		if run.Metadata.Labels == nil {
			run.Metadata.Labels = map[string]string{}
		}
		run.Metadata.Labels[tekton.ModeLabel] = "plan"
	}
	return yaml.Marshal(run)
}

func writeJSON(w io.Writer, v any) error { return view.JSON(w, v) }
