package diff_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// benchRepo commits the generated 2,200-cluster fleet, then a one-line
// change to one sector file.
func benchRepo(b *testing.B) string {
	dir := b.TempDir()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	files := fleetgen.Generate(fleetgen.Options{Sectors: 5, RegionsPerSector: 40, ClustersPerRegion: 11})
	for p, data := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, data, 0o644)
	}
	t := &testing.T{}
	copyTree(t, "../../pipelines/tekton", filepath.Join(dir, "pipelines", "tekton"))
	copyTree(t, "../../charts", filepath.Join(dir, "charts"))
	wt, _ := g.Worktree()
	sig := &object.Signature{Name: "b", Email: "b@example.com", When: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	commit := func(msg string) {
		if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := wt.Commit(msg, &git.CommitOptions{Author: sig}); err != nil {
			b.Fatal(err)
		}
	}
	commit("fleet")
	p := filepath.Join(dir, "config/sectors/sector-2.yaml")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "soak: 72h", "soak: 96h\neks:\n  node_max: 16", 1)), 0o644)
	commit("one sector change")
	return dir
}

// review is what `render --diff --base HEAD~1` and `affected` do: both
// commits read from git objects, rendered, compared.
func review(b *testing.B, dir string, c *schema.Checker, store render.Cache) *diff.Report {
	gb, err := gitbase.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	side := func(rev string) diff.Side {
		commit, err := gb.Commit(rev)
		if err != nil {
			b.Fatal(err)
		}
		fsys, _ := gb.FS(commit)
		f, out, diags, err := render.FromFS(fsys, c, render.Options{Version: "bench", Cache: store})
		if err != nil || diags.HasErrors() {
			b.Fatal(err, diags)
		}
		return diff.Side{Label: rev, Fleet: f, Output: out}
	}
	return diff.Compare(side("HEAD~1"), side("HEAD"), keys)
}

// BenchmarkReview: cold is a first run (nothing cached: the base renders
// in full, the head reuses every unchanged layer and cluster); warm is a
// run after the base was rendered before, as on a developer's machine.
func BenchmarkReview(b *testing.B) {
	dir := benchRepo(b)
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			mem := cache.NewMemory()
			c, _ := schema.New(schema.Options{Version: "bench", Cache: mem})
			r := review(b, dir, c, mem)
			if len(r.Affected) != 240 { // sector-2 clusters that do not override node_max below it
				b.Fatalf("%d affected", len(r.Affected))
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		mem := cache.NewMemory()
		c, _ := schema.New(schema.Options{Version: "bench", Cache: mem})
		review(b, dir, c, mem)
		b.ResetTimer()
		for b.Loop() {
			c, _ := schema.New(schema.Options{Version: "bench", Cache: mem})
			if r := review(b, dir, c, mem); len(r.Affected) != 240 {
				b.Fatalf("%d affected", len(r.Affected))
			}
		}
	})
}
