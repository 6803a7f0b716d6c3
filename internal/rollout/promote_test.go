package rollout_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/rollout"
	"github.com/regionctl/regionctl/internal/schema"
)

// healthy is a health gate with a fixed answer.
type healthy struct{ err error }

func (h healthy) Check(sector, component, commit string) (string, error) {
	if h.err != nil {
		return "", h.err
	}
	return "3 Applications Healthy and Synced", nil
}

func (h *history) fleet() *config.Fleet {
	h.t.Helper()
	c, _ := schema.New(schema.Options{Version: "test"})
	f, diags := fleet.Load(os.DirFS(h.dir), "config", c)
	if diags.HasErrors() {
		h.t.Fatal(diags)
	}
	return f
}

func (h *history) promote(value string, now time.Time, health rollout.Health, skip bool) (*rollout.Promotion, error) {
	h.t.Helper()
	return h.promoteWith(value, now, health, skip, false)
}

func (h *history) promoteWith(value string, now time.Time, health rollout.Health, skip, downgrade bool) (*rollout.Promotion, error) {
	h.t.Helper()
	repo, err := gitbase.Open(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	head, _ := repo.Commit("HEAD")
	return rollout.Promote(h.fleet(), "eks.version", value, rollout.PromoteOptions{
		Now: now, History: repo.Blamer(head, h.dir), Health: health, SkipHealth: skip,
		Order: schema.Semver, AllowDowngrade: downgrade,
		Read: func(file string) ([]byte, error) { return os.ReadFile(filepath.Join(h.dir, file)) },
	})
}

// apply writes a promotion's edits and commits them at time at.
func (h *history) apply(p *rollout.Promotion, at time.Time) {
	h.t.Helper()
	for _, e := range p.Edits {
		if err := os.WriteFile(filepath.Join(h.dir, e.File), e.After, 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	h.commit(at)
}

func refusal(t *testing.T, err error, want string) {
	t.Helper()
	var r *rollout.Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Reason, want) {
		t.Fatalf("refusal %v, want one saying %q", err, want)
	}
}

func TestFullRolloutToGlobalThenRollback(t *testing.T) {
	h := newHistory(t)
	ok := healthy{}
	now := t0.Add(time.Hour)
	order := []string{"stage-a", "prod-1", "prod-2", "prod-3"}
	for i, sector := range order {
		p, err := h.promote("1.34", now, ok, false)
		if err != nil {
			t.Fatalf("promote to %s: %v", sector, err)
		}
		if p.Sector != sector || len(p.Edits) != 1 || p.Edits[0].File != "config/sectors/"+sector+".yaml" {
			t.Fatalf("step %d: %+v", i, p)
		}
		if !strings.Contains(string(p.Edits[0].After), "version: \"1.34\"") || !strings.HasPrefix(p.Message, "rollout: eks.version 1.34 to sector "+sector) {
			t.Errorf("step %d edit:\n%s\nmessage: %s", i, p.Edits[0].After, p.Message)
		}
		if i > 0 && !strings.Contains(p.Message, "health gate: 3 Applications Healthy and Synced") {
			t.Errorf("message lacks the health gate: %s", p.Message)
		}
		h.apply(p, now)
		now = now.Add(25 * time.Hour) // past stage-a's 24h soak; the others have none
	}
	p, err := h.promote("1.34", now, ok, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Sector != "" || len(p.Edits) != 5 || p.Edits[0].File != "config/global/defaults.yaml" {
		t.Fatalf("to global: %+v", p)
	}
	for _, e := range p.Edits[1:] {
		if strings.Contains(string(e.After), "1.34") {
			t.Errorf("%s keeps its pin:\n%s", e.File, e.After)
		}
	}
	h.apply(p, now)
	f := h.fleet()
	for _, c := range f.Clusters {
		if v := c.Effective.Lookup("eks", "version"); v.Str != "1.34" || v.Origin.Layer != config.LayerGlobal {
			t.Errorf("%s runs %s from %s", c.ID(), v.Str, v.Origin)
		}
	}
	if _, err := h.promote("1.34", now, ok, false); err == nil {
		t.Error("promoting a value every layer holds is not refused")
	}
	// A rollback is a rollout of the older value: it starts again at stage,
	// as a downgrade that must be asked for.
	if _, err := h.promote("1.33", now.Add(time.Hour), ok, false); err == nil || !strings.Contains(err.Error(), "--allow-downgrade") {
		t.Fatalf("a rollback without --allow-downgrade: %v", err)
	}
	p, err = h.promoteWith("1.33", now.Add(time.Hour), ok, false, true)
	if err != nil || p.Sector != "stage-a" {
		t.Fatalf("rollback: %+v %v", p, err)
	}
}

func TestPromoteRefusals(t *testing.T) {
	h := newHistory(t)
	t1 := t0.Add(time.Hour)
	p, err := h.promote("1.34", t1, healthy{}, false)
	if err != nil {
		t.Fatal(err)
	}
	h.apply(p, t1)

	_, err = h.promote("1.34", t1.Add(2*time.Hour), healthy{}, false)
	refusal(t, err, "sector stage-a soaks 22h0m0s more")

	_, err = h.promote("1.34", t1.Add(25*time.Hour), healthy{err: errors.New("us-west-2-mc01-hypershift-operator is Degraded")}, false)
	refusal(t, err, "health gate of sector stage-a: us-west-2-mc01-hypershift-operator is Degraded")

	_, err = h.promote("1.34", t1.Add(25*time.Hour), nil, false)
	refusal(t, err, "no health gate")

	p, err = h.promote("1.34", t1.Add(25*time.Hour), nil, true)
	if err != nil || !strings.Contains(p.Message, "health gate skipped (--skip-health)") {
		t.Fatalf("--skip-health: %v\n%+v", err, p)
	}

	// A region of the next sector pins another value.
	h.edit("config/regions/us-east-1.yaml", func(s string) string { return s + "eks:\n  version: \"1.33\"\n" })
	h.commit(t1.Add(26 * time.Hour))
	_, err = h.promote("1.34", t1.Add(27*time.Hour), healthy{}, false)
	refusal(t, err, "us-east-1/mc01 pins \"1.33\" at config/regions/us-east-1.yaml:3:12")
}

// eks.version is ordered: giving a sector a version older than one it runs
// is refused unless allowed, and the commit message says it was.
func TestPromoteRefusesADowngrade(t *testing.T) {
	h := newHistory(t)
	h.edit("config/sectors/stage-a.yaml", func(s string) string { return s + "eks:\n  version: \"1.34\"\n" })
	h.commit(t0.Add(time.Hour))
	_, err := h.promote("1.30", t0.Add(2*time.Hour), healthy{}, true)
	refusal(t, err, `1.30 is older than what sector stage-a runs: us-west-2/mc01 runs 1.34 (config/sectors/stage-a.yaml:6:12)`)
	refusal(t, err, "--allow-downgrade")
	p, err := h.promoteWith("1.30", t0.Add(2*time.Hour), healthy{}, true, true)
	if err != nil || p.Sector != "stage-a" || !strings.Contains(p.Message, "A downgrade, allowed (--allow-downgrade)") {
		t.Fatalf("with --allow-downgrade: %v\n%+v", err, p)
	}
}
