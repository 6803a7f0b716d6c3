package demo

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestAFailedDemoKeepsItsLogs: a demo that fails keeps its working copy,
// names where its logs are, and offers no resume (its emulator is gone).
func TestAFailedDemoKeepsItsLogs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var out bytes.Buffer
	// A root without config/: the demo fails before it starts anything.
	err := Run(context.Background(), Options{Root: t.TempDir(), Region: "eu-west-1"}, &out)
	if err == nil {
		t.Fatal("the demo of an empty root succeeded")
	}
	m := regexp.MustCompile(`kept its working copy (\S+) `).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "nothing above can be resumed; run make demo again") {
		t.Fatalf("the failure says:\n%s", out.String())
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("the working copy it names is gone: %v", err)
	}
}
