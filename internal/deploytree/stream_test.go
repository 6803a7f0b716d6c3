package deploytree

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/render"
)

// TestStreamWritesAsFilesCome: a file handed to Put is in the staging tree
// when Put returns, so the render may drop it; deploy/ changes only at
// Finish, which then holds what Write makes of the whole render.
func TestStreamWritesAsFilesCome(t *testing.T) {
	dir, before, s := begun(t)
	full := output(v2)
	streamed := &render.Output{}
	for _, a := range full.Artifacts {
		if a.Path == render.IndexPath {
			streamed.Artifacts = append(streamed.Artifacts, a)
			continue
		}
		if err := s.Put([]render.Artifact{a}); err != nil {
			t.Fatal(err)
		}
		streamed.Artifacts = append(streamed.Artifacts, render.Artifact{Path: a.Path}) // bytes dropped
	}
	staged := 0
	for p := range snapshot(t, dir) {
		if len(p) > 3 && p[:3] == "../" && p != "../deploy" {
			staged++
		}
	}
	if staged != 1 {
		t.Errorf("%d staging trees while streaming, want 1", staged)
	}
	if diff := cmp.Diff(before, withoutStaging(snapshot(t, dir))); diff != "" {
		t.Errorf("deploy/ changed before Finish:\n%s", diff)
	}
	ch, err := s.Finish(streamed)
	if err != nil {
		t.Fatal(err)
	}
	// The same changes and tree as writing the whole render.
	other := filepath.Join(t.TempDir(), "deploy")
	if _, err := Write(OS{}, other, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	want, err := Write(OS{}, other, full, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("streamed changes (-whole +streamed):\n%s", diff)
	}
	if diff := cmp.Diff(snapshot(t, other), snapshot(t, dir)); diff != "" {
		t.Errorf("streamed tree (-whole +streamed):\n%s", diff)
	}
	if err := s.Put([]render.Artifact{{Path: "late.yaml", Bytes: []byte("x")}}); err == nil {
		t.Error("Put after Finish was taken")
	}
}

// TestStreamAbortLeavesTreeAsItWas: an abandoned render (errors found after
// some clusters were streamed) leaves deploy/ and no staging tree behind,
// and frees the lock for the next render.
func TestStreamAbortLeavesTreeAsItWas(t *testing.T) {
	dir, before, s := begun(t)
	if err := s.Put([]render.Artifact{{Path: "production/eu-west-1/effective/mc01.yaml", Bytes: []byte("a: 4\n")}}); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("aborted stream changed deploy/ or left staging:\n%s", diff)
	}
	if _, err := Write(OS{}, dir, output(v2), Options{}); err != nil {
		t.Errorf("the next render after an abort: %v", err)
	}
}

// TestCompareReadsWithoutKeeping: Plan (render --check) tells the same as
// before for a tree whose files all differ.
func TestCompareTellsEveryDifference(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	changed := map[string]string{}
	for p := range v1 {
		changed[p] = "b: 1\n"
	}
	ch, idx, err := Plan(OS{}, dir, output(changed))
	if err != nil || idx == nil {
		t.Fatalf("plan: %v, index %v", err, idx)
	}
	var want []string
	for p := range v1 {
		want = append(want, p)
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, ch.Changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
}

// begun is a Stream begun on a tree rendered from v1, and that tree.
func begun(t *testing.T) (string, map[string]string, *Stream) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "deploy")
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	s, err := Begin(OS{}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, before, s
}

func withoutStaging(m map[string]string) map[string]string {
	out := map[string]string{}
	for p, s := range m {
		if len(p) > 3 && p[:3] == "../" && p != "../deploy" {
			continue
		}
		out[p] = s
	}
	return out
}
