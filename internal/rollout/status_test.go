package rollout_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/rollout"
	"github.com/regionctl/regionctl/internal/schema"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// history is a fleet in a real git repository whose commits carry
// controlled times.
type history struct {
	t   *testing.T
	dir string
	wt  *git.Worktree
	g   *git.Repository
}

func newHistory(t *testing.T) *history {
	dir := t.TempDir()
	src := "../../golden/uneven-sectors/config"
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, _ := os.ReadFile(p)
		os.MkdirAll(filepath.Join(dir, "config", filepath.Dir(rel)), 0o755)
		return os.WriteFile(filepath.Join(dir, "config", rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := g.Worktree()
	h := &history{t: t, dir: dir, wt: wt, g: g}
	h.edit("config/sectors/stage-a.yaml", func(s string) string { return s + "soak: 24h\n" })
	h.commit(t0)
	return h
}

func (h *history) edit(name string, fn func(string) string) {
	p := filepath.Join(h.dir, name)
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(fn(string(b))), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *history) commit(at time.Time) {
	h.t.Helper()
	h.wt.AddWithOptions(&git.AddOptions{All: true})
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: at}
	if _, err := h.wt.Commit("change", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *history) status(now time.Time) rollout.KeyStatus {
	h.t.Helper()
	c, _ := schema.New(schema.Options{Version: "test"})
	f, diags := fleet.Load(os.DirFS(h.dir), "config", c)
	if diags.HasErrors() {
		h.t.Fatal(diags)
	}
	repo, err := gitbase.Open(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	head, _ := repo.Commit("HEAD")
	st, err := rollout.Status(f, []string{"eks.version"}, "eks.version", repo.Blamer(head, h.dir), now)
	if err != nil {
		h.t.Fatal(err)
	}
	return st[0]
}

func TestStatusFollowsSoakAndWaves(t *testing.T) {
	h := newHistory(t)
	t1 := t0.Add(time.Hour)
	h.edit("config/sectors/stage-a.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.commit(t1)

	st := h.status(t1.Add(2 * time.Hour))
	if st.Target != "1.34" || st.Next != "prod-1" || len(st.Blocked) != 1 || !strings.Contains(st.Blocked[0], "sector stage-a soaks 22h0m0s more") {
		t.Fatalf("after 2h: %+v", st)
	}
	if since := st.Sectors[0].Values[0].Since; since == nil || !since.Time.Equal(t1) {
		t.Errorf("stage-a has 1.34 since %+v, want the commit at %s", since, t1)
	}
	// Seconds before the soak ends it still says how long, never "0s".
	if st := h.status(t1.Add(24*time.Hour - 20*time.Second)); len(st.Blocked) != 1 || !strings.Contains(st.Blocked[0], "sector stage-a soaks 20s more") {
		t.Errorf("20 s before the soak ends: %+v", st.Blocked)
	}
	if st := h.status(t1.Add(25 * time.Hour)); st.Next != "prod-1" || len(st.Blocked) != 0 {
		t.Errorf("after the soak: %+v", st)
	}

	// prod-1 gets it, but one of prod-2's regions is pinned back: prod-2
	// is next and ready; once prod-2 has it partly, prod-3 waits for it.
	t2 := t1.Add(30 * time.Hour)
	h.edit("config/sectors/prod-1.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.commit(t2)
	if st := h.status(t2.Add(time.Minute)); st.Next != "prod-2" || len(st.Blocked) != 0 {
		t.Errorf("prod-1 done, no soak: %+v", st)
	}
	h.edit("config/sectors/prod-2.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.edit("config/clusters/eu-west-1/mc02.yaml", func(s string) string { return s + "eks:\n  version: \"1.33\"\n" })
	h.commit(t2.Add(time.Hour))
	st = h.status(t2.Add(2 * time.Hour))
	// prod-2 still has a cluster pinned on 1.33: it is the next step
	// itself, blocked by that pin exactly as promote refuses it.
	if st.Next != "prod-2" || len(st.Blocked) != 1 || !strings.Contains(st.Blocked[0], `eu-west-1/mc02 pins "1.33" at config/clusters/eu-west-1/mc02.yaml:7:12`) {
		t.Errorf("prod-2 partly done: %+v", st)
	}
	if _, err := h.promote("1.34", t2.Add(2*time.Hour), healthy{}, false); err == nil || !strings.Contains(err.Error(), st.Blocked[0]) {
		t.Errorf("status blocks with %q, promote says %v", st.Blocked, err)
	}
	h.edit("config/clusters/eu-west-1/mc02.yaml", func(s string) string { return strings.Replace(s, "eks:\n  version: \"1.33\"\n", "", 1) })
	h.edit("config/sectors/prod-3.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.commit(t2.Add(3 * time.Hour))
	if st := h.status(t2.Add(4 * time.Hour)); !st.Done {
		t.Errorf("every sector runs 1.34: %+v", st)
	}
}

// TestStatusNextAndNoHistory: a sector that lags is itself the next step;
// without git history the soak cannot be judged, and the status says so.
func TestStatusNextAndNoHistory(t *testing.T) {
	h := newHistory(t)
	h.edit("config/sectors/stage-a.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.edit("config/sectors/prod-1.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.edit("config/regions/us-east-1.yaml", func(s string) string { return s + "eks:\n  version: \"1.33\"\n" })
	h.commit(t0.Add(time.Hour))
	st := h.status(t0.Add(48 * time.Hour))
	if st.Next != "prod-1" {
		t.Fatalf("next %q: %+v", st.Next, st)
	}
	h.edit("config/regions/us-east-1.yaml", func(s string) string { return strings.Replace(s, "eks:\n  version: \"1.33\"\n", "", 1) })
	h.edit("config/sectors/prod-2.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.edit("config/regions/eu-west-1.yaml", func(s string) string { return s + "eks:\n  version: \"1.33\"\n" })
	h.commit(t0.Add(2 * time.Hour))
	st = h.status(t0.Add(48 * time.Hour))
	if st.Next != "prod-2" {
		t.Fatalf("next %q: %+v", st.Next, st)
	}
	// Without history, the soak cannot be judged and says so.
	c, _ := schema.New(schema.Options{Version: "test"})
	f, _ := fleet.Load(os.DirFS(h.dir), "config", c)
	noHist, _ := rollout.Status(f, []string{"eks.version"}, "eks.version", nil, t0)
	if b := noHist[0].Blocked; len(b) != 2 || !strings.Contains(b[1], "not in git history") {
		t.Errorf("without history: %+v", noHist[0])
	}
}
