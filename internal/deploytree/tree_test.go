package deploytree

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/fswalk"
	"github.com/regionctl/regionctl/internal/render"
)

func output(files map[string]string) *render.Output {
	out := &render.Output{}
	idx := &render.Index{}
	for p, s := range files {
		out.Artifacts = append(out.Artifacts, render.Artifact{Path: p, Bytes: []byte(s)})
		idx.Files = append(idx.Files, p)
	}
	sort.Strings(idx.Files)
	b, _ := render.MarshalIndex(idx)
	out.Artifacts = append(out.Artifacts, render.Artifact{Path: render.IndexPath, Bytes: b})
	return out
}

// snapshot reads every file under dir, and lists dir's parent so that a
// leftover staging directory shows.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, err := OS{}.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if e.Name() != WorkDir {
			out["../"+e.Name()] = ""
			continue
		}
		// The work directory holds the lock and its .gitignore; anything
		// else there is a staging tree left behind.
		work, _ := os.ReadDir(filepath.Join(filepath.Dir(dir), WorkDir))
		for _, w := range work {
			if w.Name() != ".gitignore" && w.Name() != "deploy.lock" {
				out["../"+WorkDir+"/"+w.Name()] = ""
			}
		}
	}
	return out
}

// faultyDisk fails the failAt-th call of op with err.
type faultyDisk struct {
	OS
	mu     sync.Mutex
	op     string
	failAt int
	calls  map[string]int
	err    error
}

func (d *faultyDisk) hit(op string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.calls == nil {
		d.calls = map[string]int{}
	}
	d.calls[op]++
	if op == d.op && d.calls[op] == d.failAt {
		return d.err
	}
	return nil
}

func (d *faultyDisk) OpenDir(name string) (Dir, error) {
	dir, err := d.OS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &faultyDir{Dir: dir, disk: d}, nil
}

// faultyDir is a directory of a faultyDisk: its calls fail as the disk
// says, and the directories it opens are faulty too.
type faultyDir struct {
	Dir
	disk *faultyDisk
}

func (d *faultyDir) WriteFile(name string, data []byte) (fswalk.Stat, error) {
	if err := d.disk.hit("write"); err != nil {
		return fswalk.Stat{}, err
	}
	return d.Dir.WriteFile(name, data)
}

func (d *faultyDir) Link(oldname, name string) error {
	if err := d.disk.hit("link"); err != nil {
		return err
	}
	return d.Dir.Link(oldname, name)
}

func (d *faultyDir) Mkdir(name string) (Dir, error) {
	if err := d.disk.hit("mkdir"); err != nil {
		return nil, err
	}
	dir, err := d.Dir.Mkdir(name)
	if err != nil {
		return nil, err
	}
	return &faultyDir{Dir: dir, disk: d.disk}, nil
}

func (d *faultyDir) Open(name string) (Dir, error) {
	dir, err := d.Dir.Open(name)
	if err != nil {
		return nil, err
	}
	return &faultyDir{Dir: dir, disk: d.disk}, nil
}

func (d *faultyDisk) Exchange(a, b string) error {
	if err := d.hit("exchange"); err != nil {
		return err
	}
	return d.OS.Exchange(a, b)
}

var v1 = map[string]string{
	"production/us-east-1/effective/mc01.yaml":        "a: 1\n",
	"production/us-east-1/effective/mc02.yaml":        "a: 2\n",
	"production/us-east-1/terraform/mc01.tfvars.json": "{}\n",
	"staging/us-west-2/effective/mc01.yaml":           "a: 3\n",
}

var v2 = map[string]string{
	"production/us-east-1/effective/mc01.yaml":        "a: 1\n",  // unchanged
	"production/us-east-1/effective/mc02.yaml":        "a: 22\n", // changed
	"production/us-east-1/terraform/mc01.tfvars.json": "{}\n",    // unchanged
	"production/eu-west-1/effective/mc01.yaml":        "a: 4\n",  // added
	// staging/us-west-2 removed: pruned
}

func TestWriteReplacesAndPrunes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	d := &faultyDisk{}
	ch, err := Write(d, dir, output(v2), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Changes{
		Added:     []string{"production/eu-west-1/effective/mc01.yaml"},
		Changed:   []string{"index.json", "production/us-east-1/effective/mc02.yaml"},
		Removed:   []string{"staging/us-west-2/effective/mc01.yaml"},
		Unchanged: []string{"production/us-east-1/effective/mc01.yaml", "production/us-east-1/terraform/mc01.tfvars.json"},
	}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	// Unchanged files are linked, not rewritten.
	if d.calls["write"] != 3 || d.calls["link"] != 2 {
		t.Errorf("wrote %d files and linked %d, want 3 and 2", d.calls["write"], d.calls["link"])
	}
	got := snapshot(t, dir)
	for p, s := range v2 {
		if got[p] != s {
			t.Errorf("%s = %q, want %q", p, got[p], s)
		}
	}
	if _, ok := got["staging/us-west-2/effective/mc01.yaml"]; ok {
		t.Error("removed cluster's file not pruned")
	}
	if len(got) != len(v2)+2 { // + index.json + ../deploy
		t.Errorf("tree holds %d entries: %v", len(got), got)
	}
}

func TestWriteNothingWhenClean(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	d := &faultyDisk{}
	ch, err := Write(d, dir, output(v1), Options{})
	if err != nil || !ch.Clean() {
		t.Fatalf("second write: %v, %+v", err, ch)
	}
	if len(d.calls) != 0 {
		t.Errorf("a clean tree was touched: %v", d.calls)
	}
}

// TestFailedWriteLeavesTreeAsItWas fails every write, link, mkdir and the
// final swap in turn, as a full disk or a dying file system would, and
// checks deploy/ is byte for byte what it was, with no staging left behind.
func TestFailedWriteLeavesTreeAsItWas(t *testing.T) {
	for _, op := range []string{"write", "link", "mkdir", "exchange"} {
		reached := 0
		for n := 1; n <= 6; n++ {
			dir := filepath.Join(t.TempDir(), "deploy")
			if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			d := &faultyDisk{op: op, failAt: n, err: syscall.ENOSPC}
			_, err := Write(d, dir, output(v2), Options{})
			if d.calls[op] < n {
				continue // the render needed fewer calls than n
			}
			reached++
			if op == "link" {
				// A failed link falls back to writing the file.
				if err != nil {
					t.Errorf("link %d failing broke the render: %v", n, err)
				}
				continue
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("%s %d: err = %v, want ENOSPC", op, n, err)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("%s %d failing changed deploy/ (-before +after):\n%s", op, n, diff)
			}
		}
		// A fault the render never reached proves nothing: every kind of
		// call, the swap above all, must have failed at least once.
		if reached == 0 {
			t.Errorf("no %s call was made: its fault was never tried", op)
		}
	}
}

func TestForeignFilesAreRefusedThenPruned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(dir, "production", "notes.txt")
	if err := os.WriteFile(stray, []byte("hand-written\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	_, err := Write(OS{}, dir, output(v2), Options{})
	var foreign *ForeignFilesError
	if !errors.As(err, &foreign) || len(foreign.Files) != 1 || foreign.Files[0] != "production/notes.txt" {
		t.Fatalf("err = %v, want a ForeignFilesError naming production/notes.txt", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("refused write changed deploy/:\n%s", diff)
	}
	ch, err := Write(OS{}, dir, output(v2), Options{PruneForeign: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) || len(ch.Foreign) != 1 {
		t.Errorf("foreign file not pruned: %v %+v", err, ch)
	}
}

func TestPlanForCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	ch, _, err := Plan(OS{}, dir, output(v2))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Clean() || len(ch.Changed) != 2 || len(ch.Added) != 1 || len(ch.Removed) != 1 || len(ch.Foreign) != 1 {
		t.Errorf("plan = %+v", ch)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("Plan wrote:\n%s", diff)
	}
	ch, _, err = Plan(OS{}, filepath.Join(t.TempDir(), "none"), output(v1))
	if err != nil || len(ch.Added) != len(v1)+1 {
		t.Errorf("plan of a missing tree = %+v, %v", ch, err)
	}
}
