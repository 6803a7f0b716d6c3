package diff_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/diff"
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
