package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/prcomment"
	"github.com/regionctl/regionctl/internal/prcomment/prcommenttest"
)

// ci comment as the recipes in docs/ci run it: everything from the CI
// system's environment, one comment per pull request, updated in place.
func TestCICommentFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := "### regionctl render --diff\n\n```diff\n" + strings.Repeat("+ a line of a rendered file\n", 5000) + "```\n"
	for _, host := range []string{"github", "gitlab"} {
		t.Run(host, func(t *testing.T) {
			f := &prcommenttest.Host{Token: "tok", User: "github-actions[bot]", EditOthers: true}
			if host == "github" {
				srv := f.GitHub(t)
				defer srv.Close()
				t.Setenv("GITHUB_ACTIONS", "true")
				t.Setenv("GITLAB_CI", "")
				t.Setenv("GITHUB_API_URL", srv.URL)
				t.Setenv("GITHUB_REPOSITORY", "o/r")
				t.Setenv("GITHUB_TOKEN", "tok")
				t.Setenv("GITHUB_EVENT_PATH", write("event.json", `{"action":"synchronize","pull_request":{"number":7}}`))
			} else {
				f.User, f.EditOthers = "project_7_bot", false
				srv := f.GitLab(t)
				defer srv.Close()
				t.Setenv("GITHUB_ACTIONS", "")
				t.Setenv("GITLAB_CI", "true")
				t.Setenv("CI_API_V4_URL", srv.URL+"/api/v4")
				t.Setenv("CI_PROJECT_ID", "group/proj")
				t.Setenv("CI_MERGE_REQUEST_IID", "7")
				t.Setenv("GITLAB_TOKEN", "tok")
			}
			f.Add("mallory", prcomment.Marker("review")+"\nnot regionctl's")
			for i, body := range []string{"first push\n", "second push\n", huge} {
				var out, errs bytes.Buffer
				if code := Run([]string{"ci", "comment", "--body-file", write("body.md", body)}, &out, &errs); code != 0 {
					t.Fatalf("push %d: exit %d: %s", i+1, code, errs.String())
				}
				want := "updated comment"
				if i == 0 {
					want = "created comment"
				}
				if !strings.Contains(out.String(), want) {
					t.Errorf("push %d: %s", i+1, out.String())
				}
			}
			ours := f.Ours()
			if len(ours) != 1 {
				t.Fatalf("%d comments of regionctl's", len(ours))
			}
			if got := ours[0].Body; len(got) > prcomment.MaxBody || !strings.Contains(got, "was cut to fit") || !strings.HasSuffix(strings.TrimSpace(strings.Split(got, "\n\n_This")[0]), "```") {
				t.Errorf("the long review was not fitted and closed: %d bytes, ends %q", len(got), got[max(len(got)-200, 0):])
			}
			if f.Comments[0].Body != prcomment.Marker("review")+"\nnot regionctl's" {
				t.Error("another author's comment was edited")
			}
		})
	}
}

func TestCICommentRefusesWhatItCannotTrust(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITLAB_CI", "")
	t.Setenv("GITHUB_TOKEN", "tok")
	body := filepath.Join(t.TempDir(), "b.md")
	os.WriteFile(body, []byte("x"), 0o644)
	for _, args := range [][]string{
		{"--repo", "o/r", "--number", "1"}, // no host outside CI
		{"--host", "github", "--repo", "o/r", "--number", "1", "--api-url", "http://api.example.com"},
		{"--host", "github", "--repo", "o/r", "--number", "1", "--api-url", "https://user:pw@api.example.com"},
		{"--host", "github", "--repo", "o/r;x", "--number", "1"},
		{"--host", "github", "--repo", "o/r", "--number", "1", "--key", "Review-->"},
		{"--host", "gitlab", "--project", "../x", "--number", "1", "--api-url", "https://gitlab.example.com/api/v4"},
	} {
		var out, errs bytes.Buffer
		if code := Run(append([]string{"ci", "comment", "--body-file", body}, args...), &out, &errs); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitUsage, errs.String())
		}
	}
}

// TestCIPlansFoldsRuns: ci plans reads each run's JSON (as pipeline --plan
// -o json writes it) into one comment, and refuses, naming the file, what
// is not such a run.
func TestCIPlansFoldsRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", `{"pipeline":"regional","region":"eu-west-1","request_id":"r1","steps":[{"name":"terraform"}],"plans":[{"cluster":"eu-west-1/mc01","terraform_root":"management-cluster","plan_id":"p1","add":2,"change":0,"destroy":1,"resources":[{"address":"aws_eks_cluster.this","action":"delete"}],"plan_sha256":"ab"}],"error":""}`)
	b := write("b.json", `{"pipeline":"central","region":"eu-west-1","request_id":"r2","steps":[],"plans":[],"error":"assume-role: AccessDenied"}`)
	var out, errs strings.Builder
	if code := Run([]string{"ci", "plans", a, b}, &out, &errs); code != 0 {
		t.Fatalf("exit %d\n%s", code, errs.String())
	}
	for _, want := range []string{"**1 plan in 2 runs: 2 to add, 0 to change, 1 to destroy**", "**delete** `aws_eks_cluster.this`", "`assume-role: AccessDenied`"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	for name, body := range map[string]string{
		"notjson.json": "plan: 3 to add",
		"other.json":   `{"base":"main","head":"HEAD"}`,
	} {
		p := write(name, body)
		errs.Reset()
		if code := Run([]string{"ci", "plans", a, p}, io.Discard, &errs); code != ExitInput || !strings.Contains(errs.String(), name) {
			t.Errorf("%s: exit %d\n%s", name, code, errs.String())
		}
	}
	if code := Run([]string{"ci", "plans", dir}, io.Discard, &errs); code != ExitInput {
		t.Errorf("a directory: exit %d", code)
	}
}
