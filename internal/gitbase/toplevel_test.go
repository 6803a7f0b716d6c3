package gitbase_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/regionctl/regionctl/internal/gitbase"
)

func TestFleetRootFromASubdirectory(t *testing.T) {
	top := t.TempDir()
	for _, d := range []string{".git", "config/regions", "deploy/regions/x", "other/.git", "other/sub"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		dir, want string
		ok        bool
	}{
		{top, top, true},
		{filepath.Join(top, "config", "regions"), filepath.Join(top, "config", "regions", "..", ".."), true},
		{filepath.Join(top, "deploy", "regions", "x"), filepath.Join(top, "deploy", "regions", "x", "..", "..", ".."), true},
		// A repository nested inside the fleet's is its own: no config/ there.
		{filepath.Join(top, "other", "sub"), "", false},
	}
	for _, c := range cases {
		got, ok := gitbase.FleetRoot(c.dir, "config")
		if ok != c.ok || filepath.Clean(got) != filepath.Clean(c.want) && c.ok {
			t.Errorf("FleetRoot(%s) = %q, %v; want %q, %v", c.dir, got, ok, c.want, c.ok)
		}
	}
	// Outside any work tree: not found.
	if _, ok := gitbase.FleetRoot(t.TempDir(), "config"); ok {
		t.Error("a directory in no repository found a root")
	}
}

func TestFleetRootIsRelativeToWhereTheUserStands(t *testing.T) {
	top := t.TempDir()
	for _, d := range []string{".git", "config", "deploy/x"} {
		os.MkdirAll(filepath.Join(top, d), 0o755)
	}
	t.Chdir(filepath.Join(top, "deploy", "x"))
	got, ok := gitbase.FleetRoot(".", "config")
	if !ok || got != filepath.Join("..", "..") {
		t.Fatalf("FleetRoot(.) = %q, %v; want ../.., true", got, ok)
	}
}
