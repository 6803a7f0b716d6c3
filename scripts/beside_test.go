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

// TestBesideEndsWithWhatFailed: a failing side's go test failures are
// named again at the end, after output that would bury them (CI shows a
// log's end): the failing tests, the first one's messages, its package;
// a side that passed gets no such account.
func TestBesideEndsWithWhatFailed(t *testing.T) {
	log := filepath.Join(t.TempDir(), "go-test.log")
	text := "--- FAIL: TestBootstrap (1.20s)\n    boot_test.go:12: terraform apply: exit 1\n--- FAIL: TestResume (0.50s)\n    --- FAIL: TestResume/sub (0.10s)\n        resume_test.go:3: not resumed\nFAIL\nFAIL\texample.com/e2e\t462.293s\n"
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	goTest := "cat " + log + `; for i in $(seq 200); do echo "SDK WARN noise $i"; done; exit 1`
	code, out, errOut := beside(t, goTest, "--", "true")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, out, errOut)
	}
	end := errOut[strings.Index(errOut, "failed (exit 1)"):]
	for _, want := range []string{
		"packages: example.com/e2e",
		"tests (3): TestBootstrap, TestResume, TestResume/sub",
		"--- FAIL: TestBootstrap (1.20s)\n    boot_test.go:12: terraform apply: exit 1\n",
	} {
		if !strings.Contains(end, want) {
			t.Errorf("the end of the error output does not hold %q:\n%s", want, end)
		}
	}
	if strings.Contains(end, "not resumed") {
		t.Errorf("the account of the first failure ran into the next:\n%s", end)
	}
	// The foreground's failures too, and nothing for a side that passed.
	code, _, errOut = beside(t, "true", "--", "sh", "-c", `echo "panic: test timed out after 40m0s"; echo "goroutine 1"; exit 1`)
	if code != 1 || !strings.Contains(errOut, "a panic:\npanic: test timed out after 40m0s\ngoroutine 1") || strings.Contains(errOut, "output of true") {
		t.Errorf("exit %d, want 1, the foreground's panic and no account of the background:\n%s", code, errOut)
	}
}
