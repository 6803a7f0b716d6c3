package scripts

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// beside runs scripts/beside with args and returns its exit code, output
// and error output.
func beside(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command("./beside", args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// TestBesideReportsBothSides holds scripts/beside (make test's runner of
// internal/e2e beside the rest) to what its header says: the background
// command's output after the foreground's, and a failure of either side
// failing the whole, naming the side.
func TestBesideReportsBothSides(t *testing.T) {
	code, out, _ := beside(t, "sleep 0.2; echo background", "--", "echo", "foreground")
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	fg, bg := strings.Index(out, "foreground"), strings.Index(out, "background\n")
	if fg < 0 || bg < fg || !strings.Contains(out[fg:bg], "--- sleep 0.2; echo background (started first") {
		t.Errorf("want the foreground's output, then a header naming the background command, then its output:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"exit 3", "--", "true"}, "beside: exit 3 failed (exit 3)"},
		{[]string{"true", "--", "false"}, "beside: false failed (exit 1)"},
	} {
		code, out, errOut := beside(t, c.args...)
		if code != 1 || !strings.Contains(errOut, c.says) {
			t.Errorf("%q: exit %d, want 1 and %q:\n%s%s", c.args, code, c.says, out, errOut)
		}
	}
	if code, _, errOut := beside(t, "true"); code != 2 || !strings.Contains(errOut, "usage") {
		t.Errorf("without --: exit %d, want 2 and the usage:\n%s", code, errOut)
	}
}

// TestBesideEndsTheBackgroundOnTermination: a termination of the script
// reaches the background command's group, which would otherwise run on
// (make test's end-to-end suite, with its Terraform and emulators).
func TestBesideEndsTheBackgroundOnTermination(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran-on")
	// The script's trap runs once its foreground command ends (bash
	// waits for it), a second in; the background would touch the marker
	// at 2.5 s.
	cmd := exec.Command("./beside", "sleep 2.5; touch "+marker, "--", "sleep", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the script exited 0 after SIGTERM")
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the script did not end within 10 s of SIGTERM")
	}
	time.Sleep(2500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the background command ran to its end after the script was terminated")
	}
}
