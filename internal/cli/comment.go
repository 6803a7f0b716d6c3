package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/regionctl/regionctl/internal/prcomment"
	"github.com/regionctl/regionctl/internal/view"
)

// commentFlags are ci comment's flags; each defaults to what the CI system
// puts in the job's environment.
type commentFlags struct {
	host, key, author, bodyFile string
	api, repo, project          string
	number                      int
}

func (a *app) ciCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "ci", Short: "Work with the CI system a review runs in (docs/ci/)"}
	var f commentFlags
	comment := &cobra.Command{
		Use:   "comment [--key K] [--body-file F|-]",
		Short: "Post a review as one pull or merge request comment, updated in place on every push",
		Long: `comment posts the markdown in --body-file (- for standard input; typically
regionctl render --diff -o markdown) as a comment of the pull request (GitHub)
or merge request (GitLab) the job runs for. The comment starts with an
invisible marker naming --key; the next run finds it and edits it instead of
adding a comment, so a pull request holds one review however often it is
pushed. A body too long for one comment (65,536 characters) is cut at a line
and says so.

GitHub (--host github, the default under GitHub Actions): the token is
$GITHUB_TOKEN (pull-requests: write), the API $GITHUB_API_URL, the repository
$GITHUB_REPOSITORY, the pull request the number in $GITHUB_EVENT_PATH. Only
--author's comment is edited (default github-actions[bot] under GitHub
Actions): a token that may write to the repository could edit anyone's.

GitLab (--host gitlab, the default under GitLab CI): the token is
$GITLAB_TOKEN (a project access token with the api scope; CI_JOB_TOKEN may
not write notes), the API $CI_API_V4_URL, the project $CI_PROJECT_ID, the
merge request $CI_MERGE_REQUEST_IID.

The API must be https (http only on a loopback address, for tests).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runComment(cmd.Context(), f)
		},
	}
	fl := comment.Flags()
	fl.StringVar(&f.host, "host", "", "github or gitlab (default: the CI system the job runs in)")
	fl.StringVar(&f.key, "key", "review", "which regionctl comment: one per key (a DNS label)")
	fl.StringVar(&f.author, "author", "", "edit only this author's comment (default under GitHub Actions: github-actions[bot])")
	fl.StringVar(&f.bodyFile, "body-file", "-", "the comment's markdown (- for standard input)")
	fl.StringVar(&f.api, "api-url", "", "the API's base URL (default $GITHUB_API_URL or $CI_API_V4_URL)")
	fl.StringVar(&f.repo, "repo", "", "GitHub: owner/name (default $GITHUB_REPOSITORY)")
	fl.StringVar(&f.project, "project", "", "GitLab: project id or path (default $CI_PROJECT_ID)")
	fl.IntVar(&f.number, "number", 0, "the pull or merge request's number (default: from the CI environment)")
	_ = comment.RegisterFlagCompletionFunc("host", cobra.FixedCompletions([]string{"github", "gitlab"}, noFiles))
	cmd.AddCommand(comment, a.ciPlansCommand())
	return cmd
}

// ciPlansCommand is `regionctl ci plans`: one comment of many plan-only
// runs.
func (a *app) ciPlansCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "plans FILE...",
		Short: "Fold the JSON of many plan-only pipeline runs into one pull request comment",
		Long: `plans reads what each "regionctl pipeline ... --plan -o json" wrote (one
file per run: a CI recipe plans each affected cluster in a job of its own) and
prints one markdown comment of them all, for "regionctl ci comment --key plans":
the totals, every resource destroyed or replaced and every run that did not
plan first, then the table of every plan with the sha256 an approval binds,
folded. It fits one comment (65,536 characters); what is cut is the table's
end, and the comment says so.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			runs := make([]view.PlanRun, 0, len(files))
			for _, f := range files {
				run, err := readPlanRun(f)
				if err != nil {
					return fail(ExitInput, "%s: %v", f, err)
				}
				runs = append(runs, run)
			}
			fmt.Fprint(a.stdout, view.PlanRunsMarkdown(runs))
			return nil
		},
	}
}

// maxPlanRun bounds one run's JSON: a plan-only run of one cluster is
// kilobytes; anything near this is not one.
const maxPlanRun = 16 << 20

// readPlanRun reads one run's JSON, a regular file of at most maxPlanRun
// bytes holding one object that names its pipeline and region.
func readPlanRun(file string) (view.PlanRun, error) {
	var run view.PlanRun
	fh, err := os.Open(file)
	if err != nil {
		return run, err
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		return run, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxPlanRun+1))
	if err != nil {
		return run, err
	}
	if len(b) > maxPlanRun {
		return run, fmt.Errorf("over %d MiB: not the JSON of one plan-only run", maxPlanRun>>20)
	}
	if err := json.Unmarshal(b, &run); err != nil {
		return run, fmt.Errorf("not the JSON of regionctl pipeline --plan -o json: %v", err)
	}
	if run.Pipeline == "" || run.Region == "" {
		return run, errors.New("names no pipeline and region: not the JSON of regionctl pipeline --plan -o json")
	}
	return run, nil
}

var (
	githubRepo    = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	gitlabProject = regexp.MustCompile(`^([0-9]+|[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+)$`)
)

func (a *app) runComment(ctx context.Context, f commentFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.host == "" {
		switch {
		case os.Getenv("GITHUB_ACTIONS") == "true":
			f.host = "github"
		case os.Getenv("GITLAB_CI") == "true":
			f.host = "gitlab"
		default:
			return fail(ExitUsage, "--host: github or gitlab (not in GitHub Actions or GitLab CI)")
		}
	}
	if err := prcomment.CheckKey(f.key); err != nil {
		return fail(ExitUsage, "--key: %v", err)
	}
	body, err := readBody(f.bodyFile)
	if err != nil {
		return err
	}
	thread, err := threadOf(&f)
	if err != nil {
		return err
	}
	if f.number <= 0 {
		return fail(ExitUsage, "--number: no pull or merge request (is the job running for one?)")
	}
	limit := prcomment.MaxBody - len(prcomment.Marker(f.key)) - 1
	res, err := prcomment.Upsert(ctx, thread, prcomment.Options{Key: f.key, Author: f.author}, view.Fit(body, limit))
	if err != nil {
		return fail(ExitExternal, "%v", err)
	}
	verb := "updated"
	if res.Created {
		verb = "created"
	}
	a.printer(a.stdout).OK("%s comment %d on %s #%d", verb, res.Comment.ID, f.host, f.number)
	return nil
}

// threadOf is the pull or merge request thread f names on its host,
// from the flags or the CI job's environment; f.number and f.author are
// filled in from the environment where the flags left them out.
func threadOf(f *commentFlags) (prcomment.Thread, error) {
	var thread prcomment.Thread
	switch f.host {
	case "github":
		if f.author == "" && os.Getenv("GITHUB_ACTIONS") == "true" {
			f.author = "github-actions[bot]"
		}
		api, err := apiURL(f.api, "GITHUB_API_URL", "https://api.github.com")
		if err != nil {
			return nil, err
		}
		repo := orEnv(f.repo, "GITHUB_REPOSITORY")
		if !githubRepo.MatchString(repo) {
			return nil, fail(ExitUsage, "--repo %q: want owner/name", repo)
		}
		if f.number == 0 {
			f.number, err = githubEventNumber(os.Getenv("GITHUB_EVENT_PATH"))
			if err != nil {
				return nil, err
			}
		}
		token := os.Getenv("GITHUB_TOKEN")
		if token == "" {
			return nil, fail(ExitUsage, "GITHUB_TOKEN is not set: give the job pull-requests: write and pass secrets.GITHUB_TOKEN")
		}
		if thread, err = prcomment.NewGitHub(api, token, repo, f.number); err != nil {
			return nil, fail(ExitUsage, "%v", err)
		}
	case "gitlab":
		api, err := apiURL(f.api, "CI_API_V4_URL", "")
		if err != nil {
			return nil, err
		}
		project := orEnv(f.project, "CI_PROJECT_ID")
		if !gitlabProject.MatchString(project) {
			return nil, fail(ExitUsage, "--project %q: want a project id or group/name", project)
		}
		if f.number == 0 {
			f.number, _ = strconv.Atoi(os.Getenv("CI_MERGE_REQUEST_IID"))
		}
		token := os.Getenv("GITLAB_TOKEN")
		if token == "" {
			return nil, fail(ExitUsage, "GITLAB_TOKEN is not set: a project access token with the api scope (CI_JOB_TOKEN may not write notes)")
		}
		thread = prcomment.NewGitLab(api, token, project, f.number)
	default:
		return nil, fail(ExitUsage, "--host %q: github or gitlab", f.host)
	}
	return thread, nil
}

// readBody reads the comment, refusing what no comment could hold.
func readBody(file string) (string, error) {
	var r io.Reader = os.Stdin
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return "", fail(ExitUsage, "--body-file: %v", err)
		}
		defer fh.Close()
		r = fh
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return "", fail(ExitExternal, "reading the comment: %v", err)
	}
	if len(b) == 0 {
		return "", fail(ExitUsage, "the comment is empty")
	}
	return string(b), nil
}

func orEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}

// apiURL is the API's base URL: https, or http on a loopback address.
func apiURL(flag, env, fallback string) (*url.URL, error) {
	raw := orEnv(flag, env)
	if raw == "" {
		raw = fallback
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fail(ExitUsage, "--api-url %q: want https://host[/path]", raw)
	}
	if u.Scheme == "http" {
		if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fail(ExitUsage, "--api-url %q: http only on a loopback address; the token must not cross a network in the clear", raw)
		}
	} else if u.Scheme != "https" {
		return nil, fail(ExitUsage, "--api-url %q: want https", raw)
	}
	return u, nil
}

// githubEventNumber reads the pull request's number from the event that
// started the workflow (pull_request or pull_request_target).
func githubEventNumber(path string) (int, error) {
	if path == "" {
		return 0, fail(ExitUsage, "--number: GITHUB_EVENT_PATH is not set")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fail(ExitUsage, "--number: %v", err)
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return 0, fail(ExitUsage, "--number: the event in %s: %v", path, err)
	}
	if ev.PullRequest == nil {
		return 0, fail(ExitUsage, "--number: the workflow did not start for a pull request (%s has no pull_request)", path)
	}
	return ev.PullRequest.Number, nil
}
