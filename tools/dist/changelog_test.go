package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/mdjudge"
)

// hostile is a commit subject that would be markup if pasted as it is.
const hostile = "# <script>alert(1)</script> [x](javascript:alert(1)) ![i](http://x/i.png) `c` *e* @team :tada: https://evil.example 1. $x$ &lt;"

// TestChangelogFromTags: each semantic-version tag is a section, newest
// first, holding the first-parent commits since the tag before it; the
// commits after the newest tag head the snapshot's section; a tag that is
// no semantic version is no section.
func TestChangelogFromTags(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_COMMITTER_DATE=2026-11-01T09:00:00Z", "GIT_AUTHOR_DATE=2026-11-01T09:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	commit := func(subject string) {
		run("commit", "-q", "--allow-empty", "-m", subject)
	}
	commit("first")
	commit("second")
	run("tag", "v0.1.0")
	commit("third")
	run("tag", "not-a-version")
	commit(hostile)
	run("tag", "v0.2.0")
	commit("fourth")
	chdir(t, dir)

	b, err := changelog("0.3.0-snapshot.abc")
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	want := []string{"## 0\\.3\\.0\\-snapshot\\.abc (2026-11-01)", "- fourth (", "## v0\\.2\\.0", "- third (", "## v0\\.1\\.0", "- second (", "- first ("}
	at := 0
	for _, w := range want {
		i := strings.Index(log[at:], w)
		if i < 0 {
			t.Fatalf("the changelog lacks %q after byte %d:\n%s", w, at, log)
		}
		at += i + len(w)
	}
	if strings.Contains(log, "not-a-version") {
		t.Error("a tag that is no version made a section")
	}
	if n := strings.Count(log, "\n- "); n != 5 {
		t.Errorf("%d entries, want 5:\n%s", n, log)
	}

	// The second judge: markdown-it with GitHub's extensions and raw HTML
	// on shows the hostile subject as text.
	page := mdjudge.Render(t, log, true)
	for _, bad := range []string{"<script", "<a ", "<img", "<code", "<em", "<ol", "<h1><", "<h3"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %s:\n%s", bad, page)
		}
	}
	if n := strings.Count(page, "<h1"); n != 1 {
		t.Errorf("%d top-level headings, want the title's alone:\n%s", n, page)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "@team") {
		t.Errorf("the hostile subject is not shown as text:\n%s", page)
	}
}
