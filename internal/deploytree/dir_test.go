package deploytree

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/fswalk"
	"github.com/regionctl/regionctl/internal/render"
)

// lstats is the size and modification time of every regular file under
// dir as filepath.WalkDir and os.Lstat give them: the judge of Stats.
func lstats(t *testing.T, dir string) map[string]fswalk.Stat {
	t.Helper()
	out := map[string]fswalk.Stat{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fswalk.Stat{Size: info.Size(), MTime: info.ModTime().UnixNano()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// streamed writes out to dir through a Stream on disk and returns its
// changes and stats.
func streamed(t *testing.T, disk Disk, dir string, out *render.Output) (*Changes, map[string]fswalk.Stat) {
	t.Helper()
	s, err := Begin(disk, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	ch, err := s.Finish(out)
	if err != nil {
		t.Fatal(err)
	}
	return ch, s.Stats()
}

// TestStatsAreTheTrees: the stats a Stream gives after Finish are those
// the kernel gives every file of the tree it left (os.Lstat over a walk),
// whether it wrote the file, linked it unchanged, copied it where a link
// failed, or found the whole tree clean; and render --check's Compare
// gives them for a clean tree too.
func TestStatsAreTheTrees(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	check := func(what string, got map[string]fswalk.Stat) {
		t.Helper()
		if diff := cmp.Diff(lstats(t, dir), got); diff != "" {
			t.Errorf("%s: stats (-lstat +stream):\n%s", what, diff)
		}
	}
	_, st := streamed(t, OS{}, dir, output(v1))
	check("first write", st)
	_, st = streamed(t, OS{}, dir, output(v2))
	check("written and linked", st)
	// A link that fails is a copy: a file of its own, with its own time.
	_, st = streamed(t, &faultyDisk{op: "link", failAt: 1, err: syscall.EXDEV}, dir, output(withChange(v2)))
	check("a link copied", st)
	ch, st := streamed(t, OS{}, dir, output(withChange(v2)))
	if !ch.Clean() {
		t.Fatalf("not clean: %+v", ch)
	}
	check("clean", st)
	c, err := Compare(OS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if ch, err := c.Finish(output(withChange(v2))); err != nil || !ch.Clean() {
		t.Fatalf("compare: %v %+v", err, ch)
	}
	check("compared clean", c.Stats())
}

// TestSumsAreTheLastFiles: a Stream's Sums are, for each file Finish was
// handed (and no earlier Put), the SHA-256 of that file as it is on disk
// after Finish (crypto/sha256 over os.ReadFile: the judge), whether
// Finish wrote it or found it as it was; render --check's Compare gives
// them for a clean tree. Files Put before Finish are in them when the
// render handed their sums (Artifact.Sum), and not otherwise.
func TestSumsAreTheLastFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	check := func(what string, s *Stream, want []string) {
		t.Helper()
		got := s.Sums()
		var paths []string
		for p, sum := range got {
			paths = append(paths, p)
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if h := sha256.Sum256(b); h != sum {
				t.Errorf("%s: the sum of %s is %x, the file's %x", what, p, sum, h)
			}
		}
		sort.Strings(paths)
		sort.Strings(want)
		if diff := cmp.Diff(want, paths); diff != "" {
			t.Errorf("%s: summed files (-want +got):\n%s", what, diff)
		}
	}
	finish := func(what string, s *Stream, out *render.Output, put int, summed bool) {
		t.Helper()
		defer s.Abort()
		first := append([]render.Artifact(nil), out.Artifacts[:put]...)
		var want []string
		for i := range first {
			if summed {
				first[i].Sum, first[i].Summed = sha256.Sum256(first[i].Bytes), true
				want = append(want, first[i].Path)
			}
		}
		if err := s.Put(first); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, a := range out.Artifacts[put:] {
			want = append(want, a.Path)
		}
		check(what, s, want)
	}
	begin := func() *Stream {
		s, err := Begin(OS{}, dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	finish("first write", begin(), output(v1), 0, false)
	out := output(withChange(v1))
	finish("two files put first", begin(), out, 2, false)
	finish("two files put first with their sums", begin(), output(v1), 2, true)
	finish("changed, put with their sums", begin(), out, len(out.Artifacts)-1, true)
	finish("clean", begin(), out, 0, false)
	c, err := Compare(OS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	finish("compared clean", c, out, 1, false)
	c, err = Compare(OS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	finish("compared clean, put with their sums", c, out, 2, true)
}

// withChange is files with one of them changed.
func withChange(files map[string]string) map[string]string {
	out := map[string]string{"production/us-east-1/effective/mc02.yaml": "a: 23\n"}
	for p, s := range files {
		if _, ok := out[p]; !ok {
			out[p] = s
		}
	}
	return out
}

// countingDisk counts the directories open at once through it. With a
// gate, its first write waits for the gate to close, once it has said so
// on entered.
type countingDisk struct {
	OS
	mu            sync.Mutex
	open, peak    int
	gate, entered chan struct{}
	once          sync.Once
}

func (d *countingDisk) opened(dir Dir, err error) (Dir, error) {
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.open++
	d.peak = max(d.peak, d.open)
	d.mu.Unlock()
	return &countedDir{Dir: dir, disk: d}, nil
}

func (d *countingDisk) OpenDir(name string) (Dir, error) { return d.opened(d.OS.OpenDir(name)) }

type countedDir struct {
	Dir
	disk *countingDisk
}

func (d *countedDir) Mkdir(name string) (Dir, error) { return d.disk.opened(d.Dir.Mkdir(name)) }
func (d *countedDir) Open(name string) (Dir, error)  { return d.disk.opened(d.Dir.Open(name)) }
func (d *countedDir) WriteFile(name string, data []byte) (fswalk.Stat, error) {
	if d.disk.gate != nil {
		d.disk.once.Do(func() {
			close(d.disk.entered)
			<-d.disk.gate
		})
	}
	return d.Dir.WriteFile(name, data)
}

func (d *countedDir) Close() error {
	d.disk.mu.Lock()
	d.disk.open--
	d.disk.mu.Unlock()
	return d.Dir.Close()
}

// manyDirs is a render of n clusters, each in directories of its own under
// a few regions, as a fleet's tree is.
func manyDirs(n int, content string) map[string]string {
	files := map[string]string{}
	for i := range n {
		region := fmt.Sprintf("sector-%d/region-%d", i%3, i%7)
		files[fmt.Sprintf("%s/argocd/mc%03d/root.yaml", region, i)] = content
		files[fmt.Sprintf("%s/argocd/mc%03d/apps/project.yaml", region, i)] = content
		files[fmt.Sprintf("%s/effective/mc%03d.yaml", region, i)] = content
	}
	return files
}

// TestWriterKeepsFewDirectoriesOpen: a tree of many more directories
// than maxOpen, streamed from many goroutines as a render does, is
// written whole with at most maxOpen directories open beside those in
// use, and none left open after Finish or Abort (on Linux, the process's
// descriptors as /proc/self/fd lists them, the kernel's count).
func TestWriterKeepsFewDirectoriesOpen(t *testing.T) {
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return -1
		}
		return len(entries)
	}
	for _, finish := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "deploy")
		before := fds()
		d := &countingDisk{}
		s, err := Begin(d, dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := output(manyDirs(400, "a: 1\n"))
		var wg sync.WaitGroup
		workers := 8
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(out.Artifacts); i += workers {
					if err := s.Put(out.Artifacts[i : i+1]); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		// Each goroutine holds its file's directory and, while it makes
		// one, those above it (four deep).
		if limit := maxOpen + workers*5; d.peak > limit {
			t.Errorf("%d directories open at once, want at most %d", d.peak, limit)
		}
		if finish {
			if _, err := s.Finish(out); err != nil {
				t.Fatal(err)
			}
			if got := lstats(t, dir); len(got) != len(out.Artifacts) {
				t.Errorf("%d files written, want %d", len(got), len(out.Artifacts))
			}
		}
		s.Abort()
		if d.open != 0 {
			t.Errorf("finish %v: %d directories left open", finish, d.open)
		}
		if runtime.GOOS == "linux" && fds() != before {
			t.Errorf("finish %v: %d descriptors open before, %d after", finish, before, fds())
		}
	}
	// An Abort while a file is being written (another part of the render
	// failed): the writer's directory is closed once it is done with it.
	d := &countingDisk{gate: make(chan struct{}), entered: make(chan struct{})}
	s, err := Begin(d, filepath.Join(t.TempDir(), "deploy"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := output(manyDirs(3, "a: 1\n"))
	done := make(chan error)
	go func() { done <- s.Put(out.Artifacts[:1]) }()
	<-d.entered
	s.Abort()
	close(d.gate)
	<-done
	if d.open != 0 {
		t.Errorf("aborted while writing: %d directories left open", d.open)
	}
}

// TestRenderedPathsStayInside: a rendered path that is not a plain
// relative path (climbing out, absolute, empty components) is refused
// before anything is read or written, and deploy/ and what lies beside it
// are as they were.
func TestRenderedPathsStayInside(t *testing.T) {
	for _, p := range []string{"../escaped.yaml", "production/../../escaped.yaml", "/tmp/escaped.yaml",
		"production//x.yaml", "production/./x.yaml", "production/x.yaml/", "", ".", "..", `production\..\..\x.yaml`} {
		top := t.TempDir()
		dir := filepath.Join(top, "deploy")
		if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		files := map[string]string{p: "escaped\n"}
		for q, s := range v1 {
			files[q] = s
		}
		_, err := Write(OS{}, dir, output(files), Options{})
		if err == nil || !strings.Contains(err.Error(), "not a path inside deploy/") {
			t.Errorf("%q: err = %v, want it refused", p, err)
		}
		if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
			t.Errorf("%q changed deploy/:\n%s", p, diff)
		}
		if _, err := os.Stat(filepath.Join(top, "escaped.yaml")); err == nil {
			t.Errorf("%q was written outside deploy/", p)
		}
	}
}

// TestReadFileIsTheFiles holds OS.ReadFile (on Linux the system's calls
// alone) to os.ReadFile and os.Lstat: the same bytes and stat for files
// of many sizes, and a refusal for a link, a directory and a missing file
// that errors.Is knows.
func TestReadFileIsTheFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 4096, 70000, 1 << 20} {
		p := filepath.Join(dir, fmt.Sprint(n))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, st, err := OS{}.ReadFile(p)
		want, _ := os.ReadFile(p)
		info, _ := os.Lstat(p)
		if err != nil || !bytes.Equal(got, want) || st != (fswalk.Stat{Size: info.Size(), MTime: info.ModTime().UnixNano()}) {
			t.Errorf("%d bytes: read %d bytes, %+v, %v", n, len(got), st, err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "1"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"link", "missing", "."} {
		if _, _, err := (OS{}).ReadFile(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s read", p)
		}
	}
	if _, _, err := (OS{}).ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want fs.ErrNotExist", err)
	}
}
