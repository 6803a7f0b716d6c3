package cli

import (
	"bytes"
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
