package renderstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tree is a repository with one input and one written file.
func tree(t *testing.T) (root, input, output string) {
	t.Helper()
	root = t.TempDir()
	for _, d := range []string{"config", "deploy"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	input, output = filepath.Join(root, "config", "a.yaml"), filepath.Join(root, "deploy", "a.json")
	os.WriteFile(input, []byte("a: 1\n"), 0o644)
	os.WriteFile(output, []byte(`{"a":1}`+"\n"), 0o644)
	return root, input, output
}

func take(t *testing.T, root string) Snapshot {
	t.Helper()
	s, err := Take(root, []string{"config", "deploy", "missing"}, []string{".git/HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUnchangedOnlyWhenEverythingIs(t *testing.T) {
	root, input, output := tree(t)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(input, old, old)
	os.Chtimes(output, old, old)
	path := filepath.Join(root, ".regionctl", "state.json")
	began := time.Now()
	if err := Record(path, root, "r1", 1, began, time.Now(), take(t, root), "deploy", nil); err != nil {
		t.Fatal(err)
	}
	st := Load(path)
	if !st.Unchanged("r1", root, take(t, root)) {
		t.Fatal("an untouched tree is not unchanged")
	}
	if len(st.Hashes) != 0 {
		t.Errorf("files written an hour ago were hashed: %v", st.Hashes)
	}
	if st.Unchanged("r2", root, take(t, root)) {
		t.Error("another renderer trusted the state")
	}
	// Same size, another time: changed.
	os.WriteFile(input, []byte("a: 2\n"), 0o644)
	os.Chtimes(input, old.Add(time.Second), old.Add(time.Second))
	if st.Unchanged("r1", root, take(t, root)) {
		t.Error("a rewritten file is unchanged")
	}
	os.WriteFile(input, []byte("a: 1\n"), 0o644)
	os.Chtimes(input, old, old)
	// A file added: changed.
	os.WriteFile(filepath.Join(root, "config", "b.yaml"), []byte("b: 1\n"), 0o644)
	if st.Unchanged("r1", root, take(t, root)) {
		t.Error("an added file is unchanged")
	}
	os.Remove(filepath.Join(root, "config", "b.yaml"))
	if !st.Unchanged("r1", root, take(t, root)) {
		t.Error("the tree as recorded again is not unchanged")
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

// TestWrittenJustNowIsHeldToItsContent: the render right after one that
// wrote files finds them modified within a clock tick of the record; their
// times prove nothing, so the record holds their contents' hashes, and a
// same-size, same-time edit is still found.
func TestWrittenJustNowIsHeldToItsContent(t *testing.T) {
	root, input, output := tree(t)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(input, old, old)
	now := time.Now()
	os.Chtimes(output, now, now) // written by the render, just now
	path := filepath.Join(root, ".regionctl", "state.json")
	if err := Record(path, root, "r1", 1, now.Add(-time.Second), time.Now(), take(t, root), "deploy", nil); err != nil {
		t.Fatal(err)
	}
	st := Load(path)
	if _, ok := st.Hashes["deploy/a.json"]; !ok || len(st.Hashes) != 1 {
		t.Fatalf("hashes %v, want deploy/a.json's", st.Hashes)
	}
	if !st.Unchanged("r1", root, take(t, root)) {
		t.Fatal("the render right after a writing one is not unchanged")
	}
	// Edited after the record, in the same tick: same size, same time.
	fi, _ := os.Stat(output)
	os.WriteFile(output, []byte(`{"a":2}`+"\n"), 0o644)
	os.Chtimes(output, fi.ModTime(), fi.ModTime())
	if st.Unchanged("r1", root, take(t, root)) {
		t.Error("a racy edit of a written file was trusted by its size and time")
	}
}

// TestKnownHashesAreWhatWasWritten: the hashes of files the render wrote
// (known) are recorded as given, not read back, so that a same-size,
// same-time edit made between the write and the record is not vouched
// for: the next render finds it.
func TestKnownHashesAreWhatWasWritten(t *testing.T) {
	root, input, output := tree(t)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(input, old, old)
	now := time.Now()
	os.Chtimes(output, now, now)
	written, _ := os.ReadFile(output)
	sum := sha256.Sum256(written)
	known := map[string][sha256.Size]byte{"a.json": sum} // by path in deploy/
	snap := take(t, root)
	os.WriteFile(output, []byte(`{"a":2}`+"\n"), 0o644) // after the write, before the record
	os.Chtimes(output, now, now)
	path := filepath.Join(root, ".regionctl", "state.json")
	if err := Record(path, root, "r1", 1, now.Add(-time.Second), time.Now(), snap, "deploy", known); err != nil {
		t.Fatal(err)
	}
	st := Load(path)
	if got := st.Hashes["deploy/a.json"]; got != hex.EncodeToString(sum[:]) {
		t.Errorf("recorded hash %s, want the written file's %x", got, sum)
	}
	if st.Unchanged("r1", root, take(t, root)) {
		t.Error("an edit made between the write and the record was trusted")
	}
}

// TestInputModifiedDuringTheRenderRecordsNothing: an input modified after
// the render began may have been read before the change; its hash now
// would vouch for content the render never saw, so nothing is recorded.
func TestInputModifiedDuringTheRenderRecordsNothing(t *testing.T) {
	root, input, output := tree(t)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(output, old, old)
	began := time.Now().Add(-3 * time.Second)
	edited := time.Now().Add(-time.Second)
	os.Chtimes(input, edited, edited)
	path := filepath.Join(root, ".regionctl", "state.json")
	if err := Record(path, root, "r1", 1, began, time.Now(), take(t, root), "deploy", nil); err == nil {
		t.Error("a render whose input changed while it ran was recorded")
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a record was written")
	}
}

// TestOldRecordsAreNotTrusted: a record without the racy boundary (as
// earlier regionctl wrote them) proves nothing.
func TestOldRecordsAreNotTrusted(t *testing.T) {
	root, _, _ := tree(t)
	st := &State{Renderer: "r1", Files: take(t, root)}
	if st.Unchanged("r1", root, take(t, root)) {
		t.Error("a record without racy_from_ns was trusted")
	}
}

// TestSnapshotJSONIsEncodingJSONs holds Snapshot's own JSON (in the map's
// order) to what encoding/json makes of it: valid JSON that reads back as
// the same map, over paths of every kind a file name can have (quotes,
// backslashes, HTML's <>&, control characters, non-ASCII, U+2028), and as
// long as encoding/json's text of the same map.
func TestSnapshotJSONIsEncodingJSONs(t *testing.T) {
	s := Snapshot{}
	names := []string{"deploy/index.json", `a"b`, `a\b`, "a<b>&c", "a&b", "c>d", "tab\there", "new\nline", "é/ü", "ls\u2028ps", "", "z", "deploy/production/eu-west-1/mc01/terraform.tfvars.json"}
	for i, n := range names {
		s[n] = Stat{Size: int64(i * 1000), MTime: int64(i) * 1_795_000_000_123_456_789 % 9_000_000_000_000_000_000}
	}
	for i := range 3000 {
		s[fmt.Sprintf("deploy/r%d/c%d.json", i%37, i)] = Stat{Size: int64(i), MTime: -int64(i)}
	}
	ours, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := json.Marshal(map[string]Stat(s))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(ours) || len(ours) != len(theirs) {
		t.Fatalf("Snapshot's JSON is not encoding/json's in another order (%d bytes against %d):\nours   %.300s\ntheirs %.300s", len(ours), len(theirs), ours, theirs)
	}
	var back Snapshot
	if err := json.Unmarshal(ours, &back); err != nil || !maps.Equal(back, s) {
		t.Errorf("read back: %v, %d of %d", err, len(back), len(s))
	}
	if empty, err := (Snapshot{}).MarshalJSON(); err != nil || string(empty) != "{}" {
		t.Errorf("an empty snapshot: %q (%v)", empty, err)
	}
}

// TestStateSavesAsEncodingJSON holds Save, which splices the files' own
// JSON into the rest, to json.Marshal of the whole state: valid JSON as
// long as it, read back whole.
func TestStateSavesAsEncodingJSON(t *testing.T) {
	s := &State{Renderer: `sha256:x "files":{} y`, RacyFrom: 17, Files: Snapshot{"deploy/a.json": {Size: 1, MTime: 2}, "config/&.yaml": {Size: 3, MTime: 4}},
		Hashes: map[string]string{"deploy/a.json": "ab"}, Rendered: 9}
	path := filepath.Join(t.TempDir(), "state.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(got) || len(got) != len(want) {
		t.Errorf("saved\n%s\nencoding/json writes\n%s", got, want)
	}
	if back := Load(path); back == nil || back.Renderer != s.Renderer || !maps.Equal(back.Files, s.Files) || !maps.Equal(back.Hashes, s.Hashes) || back.Rendered != 9 || back.RacyFrom != 17 {
		t.Errorf("read back %+v", back)
	}
}
