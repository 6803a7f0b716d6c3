package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDriftNeverFollowsALink: a working tree's deploy/ may hold a symbolic
// link to any file of the machine; a review shows the link, never what it
// points to (the diff goes into a pull request comment).
func TestDriftNeverFollowsALink(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(t.TempDir(), "credentials")
	os.WriteFile(secret, []byte("aws_secret_access_key = hunter2\n"), 0o600)
	os.MkdirAll(filepath.Join(root, "deploy", "x"), 0o755)
	if err := os.Symlink(secret, filepath.Join(root, "deploy", "x", "link.json")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "deploy", "x", "big.json"), make([]byte, maxDriftFile+1), 0o644)
	os.WriteFile(filepath.Join(root, "deploy", "x", "ok.json"), []byte("{}\n"), 0o644)
	fsys := os.DirFS(root)
	for name, want := range map[string]string{
		"deploy/x/link.json": "symbolic link to " + secret,
		"deploy/x/big.json":  "too large to show",
		"deploy/x/ok.json":   "{}",
	} {
		got, ok := regularFile(fsys, name)
		if !ok || !strings.Contains(string(got), want) || strings.Contains(string(got), "hunter2") {
			t.Errorf("%s: %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := regularFile(fsys, "deploy/x/none.json"); ok {
		t.Error("a missing file was read")
	}
}
