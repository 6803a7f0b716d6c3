package diff

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/schema"
)

// TestSkippedWavesOfAFleetItself holds SkippedWaves' shortcut to the walk
// it skips: a fleet compared with itself gives no value anew, even one
// whose later sector runs a version no earlier sector does (which against
// an older base is a skipped wave).
func TestSkippedWavesOfAFleetItself(t *testing.T) {
	base, head, keys := prod2Takes134(t)
	if got := skippedWaves(base, head, keys); len(got) != 1 {
		t.Fatalf("against the fleet before, %d skipped waves, want 1", len(got))
	}
	if got := skippedWaves(head, head, keys); len(got) != 0 {
		t.Errorf("the fleet against itself: %+v", got)
	}
}

// prod2Takes134 loads golden/uneven-sectors (base) and the same fleet
// with EKS 1.34 given to sector prod-2 alone (head), which runs it before
// the earlier sectors do: a skipped wave. keys are the rollout keys.
func prod2Takes134(t *testing.T) (base, head *config.Fleet, keys []string) {
	t.Helper()
	fsys := fstest.MapFS{}
	root := "../../golden/uneven-sectors"
	if err := fsCopy(fsys, root); err != nil {
		t.Fatal(err)
	}
	prod2 := fsys["config/sectors/prod-2.yaml"]
	prod2.Data = append(append([]byte(nil), prod2.Data...), "eks:\n  version: \"1.34\"\n"...)
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	base, diags := fleet.Load(os.DirFS(root), "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	head, diags = fleet.Load(fsys, "config", c)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	keys, err = schema.RolloutKeys()
	if err != nil {
		t.Fatal(err)
	}
	return base, head, keys
}

// TestSkippedWavesOfSharedConfigs holds skippedWaves' shortcut for a
// cluster whose effective config both sides share (most of a review's)
// to the walk of the same base with configs of its own: the same skipped
// waves, the earlier sectors' values (which only shared clusters run)
// counted as theirs.
func TestSkippedWavesOfSharedConfigs(t *testing.T) {
	alone, head, keys := prod2Takes134(t)
	// The base as a review's load gives it: each cluster whose config is
	// the head's takes the head's very value (config.BuildBeside), the
	// rest keep their own.
	heads := map[string]*config.Value{}
	for _, cl := range head.Clusters {
		heads[cl.ID()] = cl.Effective
	}
	beside := *alone
	beside.Clusters = nil
	shared := 0
	for _, cl := range alone.Clusters {
		cl := *cl
		if h := heads[cl.ID()]; h != nil && config.Hash(h) == config.Hash(cl.Effective) {
			cl.Effective = h
			shared++
		}
		beside.Clusters = append(beside.Clusters, &cl)
	}
	if shared == 0 || shared == len(beside.Clusters) {
		t.Fatalf("the base beside the head shares %d of %d effective configs; the case needs some and not all", shared, len(beside.Clusters))
	}
	want := skippedWaves(alone, head, keys)
	if len(want) != 1 {
		t.Fatalf("against the base loaded alone, %d skipped waves, want 1", len(want))
	}
	if d := cmp.Diff(want, skippedWaves(&beside, head, keys)); d != "" {
		t.Errorf("skipped waves (-base alone +base beside the head):\n%s", d)
	}
}

// fsCopy reads the files under dir into m, by path relative to dir.
func fsCopy(m fstest.MapFS, dir string) error {
	src := os.DirFS(dir)
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		m[p] = &fstest.MapFile{Data: b, Mode: 0o644}
		return nil
	})
}

// TestRolloutValuesOfPlainKeys holds rolloutValues' reading of a key with
// no "*" (the key is its own path) to its walk, which every key with one
// takes, for every cluster of both fleets of prod2Takes134, and to a
// config with a rollout key's parent set to a string and a list, and the
// key itself to a number.
func TestRolloutValuesOfPlainKeys(t *testing.T) {
	base, head, keys := prod2Takes134(t)
	paths := splitRolloutKeys(keys)
	walked := append(rolloutPaths(nil), paths...)
	plain := 0
	for i := range walked {
		if !walked[i].star {
			plain++
		}
		walked[i].star = true
	}
	if plain == 0 {
		t.Fatal("no rollout key without a *")
	}
	var configs []*config.Value
	for _, f := range []*config.Fleet{base, head} {
		for _, c := range f.Clusters {
			configs = append(configs, c.Effective)
		}
	}
	pos := config.Origin{}
	configs = append(configs,
		config.NewMap(pos, []config.Field{{Key: "eks", Value: config.NewString("1.34", pos)}}),
		config.NewMap(pos, []config.Field{{Key: "eks", Value: &config.Value{Kind: config.List, Items: []*config.Value{config.NewString("1.34", pos)}}}}),
		config.NewMap(pos, []config.Field{{Key: "eks", Value: config.NewMap(pos, []config.Field{{Key: "version", Value: &config.Value{Kind: config.Int, Int: 134}}})}}))
	for i, v := range configs {
		got, want := rolloutValues(v, paths), rolloutValues(v, walked)
		if len(got) != len(want) {
			t.Errorf("config %d: %d values read, %d walked", i, len(got), len(want))
		}
		for p, w := range want {
			if got[p] != w {
				t.Errorf("config %d: %s read as %v, walked to %v", i, p, got[p], w)
			}
		}
	}
}
