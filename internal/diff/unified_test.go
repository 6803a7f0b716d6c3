package diff_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/render"
)

// TestUnifiedAppliesWithGit: the diffs regionctl prints (a review's files,
// a promotion's edit) apply with git apply, at the end of a file, with and
// without its last newline, and in the middle.
func TestUnifiedAppliesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, tt := range []struct{ what, before, after string }{
		{"appended at the end", "order: 0\nenvironment: staging\n", "order: 0\nenvironment: staging\neks:\n  version: \"1.34\"\n"},
		{"changed in the middle", "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n", "a: 1\nb: 2\nc: 30\nd: 4\ne: 5\n"},
		{"no newline at the end", "a: 1\nb: 2", "a: 1\nb: 3"},
		{"newline added at the end", "a: 1", "a: 1\n"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "config", "sectors", "stage.yaml")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(tt.before), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, context := range []int{2, 3} {
			u := diff.Unified("a/config/sectors/stage.yaml", "b/config/sectors/stage.yaml", []byte(tt.before), []byte(tt.after), context)
			cmd := exec.Command("git", "apply", "--check", "-")
			cmd.Dir, cmd.Stdin = dir, strings.NewReader(u)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s (context %d): git apply refuses\n%s\n%s", tt.what, context, u, out)
			}
		}
	}
}

// TestReportDiffsApplyWithGit: a review's file diffs, every one of them,
// are the change from the base's render to the head's as git apply reads
// them: applied by git to the base's files, they give the head's, byte for
// byte (index.json aside: its changes are the other files'). The change
// edits a sector (several clusters' files) and adds a cluster (new files).
func TestReportDiffsApplyWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	r, c := newRepo(t), checker(t)
	r.Write("config/sectors/prod-2.yaml", r.Read("config/sectors/prod-2.yaml")+"eks:\n  node_max: 9\n")
	r.Write("config/clusters/us-east-1/mc02.yaml", "type: management\n")
	r.Commit("bigger node groups in prod-2, and us-east-1/mc02")
	base, head := r.side(c, "HEAD~1"), r.side(c, "HEAD")
	rep := diff.Compare(base, head, keys, false)
	if len(rep.Files) < 6 {
		t.Fatalf("only %d files changed: the case exercises too little", len(rep.Files))
	}
	dir := t.TempDir()
	for p, b := range base.Output.ByPath() {
		full := filepath.Join(dir, "deploy", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var patch strings.Builder
	for _, f := range rep.Files {
		patch.WriteString(f.Unified)
		// Each diff is its own file's, as git reads it (the diffs are
		// made on every core, each put back in its file's place).
		cmd := exec.Command("git", "apply", "--numstat", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(f.Unified)
		out, err := cmd.CombinedOutput()
		if fields := strings.Fields(string(out)); err != nil || len(fields) != 3 || fields[2] != "deploy/"+f.Path {
			t.Errorf("the diff given for deploy/%s is, to git, %q (%v)", f.Path, out, err)
		}
	}
	cmd := exec.Command("git", "apply", "-")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(patch.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply refuses the review's diffs: %v\n%s", err, out)
	}
	for p, want := range head.Output.ByPath() {
		if p == render.IndexPath {
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, "deploy", filepath.FromSlash(p)))
		if err != nil || string(got) != string(want) {
			t.Errorf("deploy/%s after git apply is not the head's (%v)", p, err)
		}
	}
}
