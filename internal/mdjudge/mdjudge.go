// Package mdjudge is the second judge of markdown regionctl writes:
// markdown-it (tools/markdown/render.mjs, Node 20), as CommonMark or with
// GitHub's extensions and raw HTML on. Tests only: the shipped binary
// never links it.
package mdjudge

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Render is the HTML markdown-it makes of md: CommonMark, or GitHub's
// flavour with gfm. Without Node or the renderer's modules the test is
// skipped with the command that installs them, or fails when
// REGIONCTL_REQUIRE_JUDGES=1 (CI).
func Render(t testing.TB, md string, gfm bool) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("mdjudge: cannot find the repository")
	}
	dir := filepath.Join(filepath.Dir(self), "..", "..", "tools", "markdown")
	_, nodeErr := exec.LookPath("node")
	_, depErr := os.Stat(filepath.Join(dir, "node_modules", "markdown-it"))
	if nodeErr != nil || depErr != nil {
		const why = "no CommonMark renderer: run make markdown (npm ci in tools/markdown; Node 20)"
		if os.Getenv("REGIONCTL_REQUIRE_JUDGES") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	args := []string{filepath.Join(dir, "render.mjs")}
	if gfm {
		args = append(args, "--gfm")
	}
	cmd := exec.Command("node", args...)
	cmd.Stdin = strings.NewReader(md)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rendering markdown: %v", err)
	}
	return string(out)
}
