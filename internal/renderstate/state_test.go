package renderstate

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestUnchangedOnlyWhenEverythingIsAndNothingIsRacy(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "config"), 0o755)
	file := filepath.Join(root, "config", "a.yaml")
	os.WriteFile(file, []byte("a: 1\n"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(file, old, old)
	snap, err := Take(root, []string{"config", "missing"}, []string{".git/HEAD"})
	if err != nil || len(snap) != 1 {
		t.Fatalf("snapshot %v, %v", snap, err)
	}
	st := &State{Renderer: "r1", Taken: time.Now().UnixNano(), Files: snap}
	path := filepath.Join(root, ".regionctl", "state.json")
	if err := st.Save(path); err != nil {
		t.Fatal(err)
	}
	st = Load(path)
	again, _ := Take(root, []string{"config"}, nil)
	if !st.Unchanged("r1", again) {
		t.Fatal("an untouched tree is not unchanged")
	}
	if st.Unchanged("r2", again) {
		t.Error("another renderer trusted the state")
	}
	// Same size, another time: changed.
	os.WriteFile(file, []byte("a: 2\n"), 0o644)
	os.Chtimes(file, old.Add(time.Second), old.Add(time.Second))
	if now, _ := Take(root, []string{"config"}, nil); st.Unchanged("r1", now) {
		t.Error("a rewritten file is unchanged")
	}
	// A file added: changed.
	os.WriteFile(filepath.Join(root, "config", "b.yaml"), []byte("b: 1\n"), 0o644)
	if now, _ := Take(root, []string{"config"}, nil); st.Unchanged("r1", now) {
		t.Error("an added file is unchanged")
	}
	os.Remove(filepath.Join(root, "config", "b.yaml"))
	// Racy: recorded as it is now, but modified within the clock's reach
	// of the snapshot: it proves nothing.
	recent := time.Now()
	os.Chtimes(file, recent, recent)
	now, _ := Take(root, []string{"config"}, nil)
	racy := &State{Renderer: "r1", Taken: recent.Add(time.Second).UnixNano(), Files: now}
	if racy.Unchanged("r1", now) {
		t.Error("a file modified just before the snapshot was trusted by its time")
	}
	// A link is not looked at: the render must see it (and refuse it).
	os.Symlink("/etc/passwd", filepath.Join(root, "config", "l.yaml"))
	if _, err := Take(root, []string{"config"}, nil); err == nil {
		t.Error("a link was stat'ed like a file")
	}
	if Load(filepath.Join(root, "nope.json")) != nil {
		t.Error("a missing state loaded")
	}
}
