package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A run that saves the result cache removes the repository's cache file of
// the earlier format, which nothing reads any more.
func TestSaveRemovesTheLegacyCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("REGIONCTL_CACHE_DIR", dir)
	repo := filepath.Join(dir, "repo")
	a := &app{root: repo}
	path := a.cachePath()
	legacy := legacyCachePath(path)
	if filepath.Dir(legacy) != dir || filepath.Base(legacy) == filepath.Base(path) || filepath.Ext(legacy) != ".gob" {
		t.Fatalf("legacy cache path %s for %s", legacy, path)
	}
	if err := os.WriteFile(legacy, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := Run([]string{"--root", repo, "dev", "gen-fleet", "--sectors", "1", "--regions", "1", "--clusters", "2", repo}, &bytes.Buffer{}, &bytes.Buffer{}); code != ExitOK {
		t.Fatalf("gen-fleet exited %d", code)
	}
	var stderr bytes.Buffer
	if code := Run([]string{"--root", repo, "validate"}, &bytes.Buffer{}, &stderr); code != ExitOK {
		t.Fatalf("validate exited %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no cache saved at %s: %v", path, err)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("the legacy cache %s is still there (%v)", legacy, err)
	}
}
