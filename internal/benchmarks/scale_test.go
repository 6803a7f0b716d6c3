package benchmarks_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/regionctl/regionctl/internal/cache"
	"github.com/regionctl/regionctl/internal/cli"
	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
)

// sizes are the fleets measured: 5 sectors, so the one-line sector change
// of the review reaches a fifth of the fleet.
var sizes = []struct {
	clusters int
	opts     fleetgen.Options
}{
	{100, fleetgen.Options{Sectors: 5, RegionsPerSector: 2, ClustersPerRegion: 10}},
	{1000, fleetgen.Options{Sectors: 5, RegionsPerSector: 20, ClustersPerRegion: 10}},
	{2200, fleetgen.Options{Sectors: 5, RegionsPerSector: 40, ClustersPerRegion: 11}},
	{5000, fleetgen.Options{Sectors: 5, RegionsPerSector: 100, ClustersPerRegion: 10}},
}

// result is one cell row of the table.
type result struct {
	op       string
	clusters int
	perOp    time.Duration
	allocs   uint64
	peakMiB  float64 // peak RSS of the same operation run by the regionctl binary
}

var (
	mu      sync.Mutex
	results = map[string]result{}
)

func record(r result) {
	mu.Lock()
	defer mu.Unlock()
	results[fmt.Sprintf("%s/%d", r.op, r.clusters)] = r
}

func TestMain(m *testing.M) {
	if os.Getenv(peakHelper) != "" {
		os.Exit(runForPeak())
	}
	cli.TuneGC() // as cmd/regionctl does
	code := m.Run()
	for _, f := range fixtures {
		os.RemoveAll(f.dir) // generated fleets are hundreds of MiB
	}
	for _, d := range leftovers {
		os.RemoveAll(d)
	}
	if len(results) > 0 {
		printTable()
	}
	os.Exit(code)
}

var ops = []string{"validate cold", "validate unchanged", "validate+render cold", "validate+render cold, current", "render unchanged", "render changed sector, warm", "render --diff cold", "render --diff cold, --full", "render --diff warm", "affected cold", "affected warm"}

func printTable() {
	fmt.Printf("\n%-30s %8s %12s %14s %10s %16s\n", "operation", "clusters", "time/op", "allocs/op", "peak RSS", "time ratio")
	for _, op := range ops {
		var prev *result
		for _, s := range sizes {
			r, ok := results[fmt.Sprintf("%s/%d", op, s.clusters)]
			if !ok {
				continue
			}
			ratio := ""
			if prev != nil {
				ratio = fmt.Sprintf("×%.2f for ×%.1f", float64(r.perOp)/float64(prev.perOp), float64(r.clusters)/float64(prev.clusters))
			}
			peak := "-"
			if r.peakMiB > 0 {
				peak = fmt.Sprintf("%.0f MiB", r.peakMiB)
			}
			fmt.Printf("%-30s %8d %12s %14d %10s %16s\n", op, r.clusters, r.perOp.Round(time.Millisecond), r.allocs, peak, ratio)
			prev = &r
		}
		if a, b := results[op+"/1000"], results[op+"/5000"]; a.perOp > 0 && b.perOp > 0 {
			fmt.Printf("%-30s %8s growth 1,000→5,000 clusters: ×%.2f (linear is ×5)\n", "", "", float64(b.perOp)/float64(a.perOp))
		}
	}
}

// fixture is a generated fleet committed to a git repository, with a second
// commit changing one line of one sector.
type fixture struct {
	dir        string
	fs         fleetgen.Files
	baseDeploy string // the first commit's deploy/, rendered before the change
}

var fixtures = map[int]*fixture{}

func getFixture(b *testing.B, clusters int, o fleetgen.Options) *fixture {
	mu.Lock()
	defer mu.Unlock()
	if f := fixtures[clusters]; f != nil {
		return f
	}
	dir := leftover(b, fmt.Sprintf("fleet-%d-", clusters))
	files := fleetgen.Generate(o)
	for _, c := range fleetgen.Charts {
		files[filepath.ToSlash(filepath.Join("charts", c, "Chart.yaml"))] = []byte("apiVersion: v2\nname: " + c + "\nversion: 0.1.0\n")
	}
	pipelines, _ := filepath.Glob("../../pipelines/tekton/*.yaml")
	for _, p := range pipelines {
		data, _ := os.ReadFile(p)
		files["pipelines/tekton/"+filepath.Base(p)] = data
	}
	write := func() {
		for p, data := range files {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	write()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	wt, _ := g.Worktree()
	sig := &object.Signature{Name: "bench", Email: "bench@example.com", When: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	commit := func(msg string) {
		if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := wt.Commit(msg, &git.CommitOptions{Author: sig}); err != nil {
			b.Fatal(err)
		}
	}
	// Each commit holds its rendered deploy/, as the repositories regionctl
	// serves do (CI's render --check keeps it current).
	render := func() {
		var out strings.Builder
		if code := cli.Run([]string{"--root", dir, "render", "--no-cache"}, io.Discard, &out); code != 0 {
			b.Fatalf("rendering the fixture: exit %d\n%s", code, out.String())
		}
	}
	render()
	commit("fleet")
	sector := "config/sectors/sector-2.yaml"
	files[sector] = []byte(strings.Replace(string(files[sector]), "soak: 72h", "soak: 72h\neks:\n  node_max: 16", 1))
	write()
	// Rendered afresh rather than over the first tree, which would delete
	// the files it replaces (see settle); the first tree is moved aside
	// and removed at the end.
	baseDeploy := filepath.Join(leftover(b, "first-deploy-"), "deploy")
	if err := os.Rename(filepath.Join(dir, "deploy"), baseDeploy); err != nil {
		b.Fatal(err)
	}
	render()
	commit("one sector change")
	// Measured in a clone, whose objects are packed as CI's checkout's are
	// (the repository built here holds them loose).
	clone := leftover(b, fmt.Sprintf("fleet-%d-clone-", clusters))
	if _, err := git.PlainClone(clone, false, &git.CloneOptions{URL: dir}); err != nil {
		b.Fatal(err)
	}
	f := &fixture{dir: clone, fs: files, baseDeploy: baseDeploy}
	fixtures[clusters] = f
	return f
}

func checker(b *testing.B, c schema.Cache) *schema.Checker {
	ch, err := schema.New(schema.Options{Version: "bench", Cache: c})
	if err != nil {
		b.Fatal(err)
	}
	return ch
}

// measure runs op b.N times and records time and allocations per op.
func measure(b *testing.B, name string, clusters int, op func()) {
	measureEach(b, name, clusters, nil, op)
}

// measureEach is measure with an untimed setup before each run of op,
// whose allocations are not counted either.
func measureEach(b *testing.B, name string, clusters int, setup, op func()) {
	var allocs uint64
	var before, after runtime.MemStats
	b.ResetTimer()
	times := make([]time.Duration, b.N)
	for i := 0; i < b.N; i++ {
		if setup != nil {
			setup()
		}
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		op()
		times[i] = time.Since(start)
		runtime.ReadMemStats(&after)
		allocs += after.Mallocs - before.Mallocs
	}
	b.StopTimer()
	// The median: on a shared 2-core machine one slow run in five would
	// otherwise move a growth ratio by a tenth.
	slices.Sort(times)
	r := result{op: name, clusters: clusters, perOp: times[len(times)/2], allocs: allocs / uint64(b.N)}
	mu.Lock()
	if old, ok := results[fmt.Sprintf("%s/%d", name, clusters)]; ok {
		r.peakMiB = old.peakMiB
	}
	mu.Unlock()
	record(r)
}

// leftovers are directories the benchmarks wrote, removed only when all
// have run (see settle).
var (
	leftovers   []string
	leftoversMu sync.Mutex
)

// leftover makes a temporary directory removed at the end of the run.
func leftover(b *testing.B, pattern string) string {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		b.Fatal(err)
	}
	leftoversMu.Lock()
	leftovers = append(leftovers, dir)
	leftoversMu.Unlock()
	return dir
}

// settle lets the file system forget deletions made before the benchmark
// ran (by an earlier run's clean-up) before a render that creates every
// file is timed. On ext4 without a journal (this machine's root file
// system) the inode allocator skips inodes deleted in the last 30 seconds,
// or 5 minutes while their inode table block is dirty (as creating files
// beside them makes it), looking each one up as it goes: right after a few
// thousand deletions, creating 9,400 files in 1,000 new directories took
// 5 s instead of 0.35 s, all of it in the kernel (perf: recently_deleted
// under __ext4_new_inode). A repository's first render follows a clone,
// not a deletion, so the benchmark itself deletes nothing until the end.
var settle = sync.OnceFunc(func() {
	syscall.Sync()
	time.Sleep(35 * time.Second)
})

// peak runs the regionctl binary ($REGIONCTL_BIN) and records its peak RSS.
//
// The binary is started by a fresh copy of this test binary (runForPeak),
// not by this process: Go starts children with vfork, and Linux counts the
// parent's resident memory at that moment in the child's ru_maxrss, which
// here would be the benchmark's own hundreds of MiB.
func peak(b *testing.B, name string, clusters int, dir string, args ...string) {
	bin := os.Getenv("REGIONCTL_BIN")
	if bin == "" {
		return
	}
	cmd := exec.Command(os.Args[0], append([]string{bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), peakHelper+"=1", "REGIONCTL_CACHE_DIR="+filepath.Join(dir, ".cache"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	var kib int64
	if _, err := fmt.Sscan(string(out), &kib); err != nil {
		b.Fatalf("peak of %s %v: %q: %v", bin, args, out, err)
	}
	mu.Lock()
	r := results[fmt.Sprintf("%s/%d", name, clusters)]
	r.op, r.clusters, r.peakMiB = name, clusters, float64(kib)/1024
	results[fmt.Sprintf("%s/%d", name, clusters)] = r
	mu.Unlock()
}

// peakHelper marks the copy of the test binary that starts the measured
// binary (os.Args[1:]) and prints its peak RSS in KiB.
const peakHelper = "REGIONCTL_BENCH_PEAK_HELPER"

func runForPeak() int {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	return 0
}

func BenchmarkScale(b *testing.B) {
	for _, s := range sizes {
		s := s
		b.Run(fmt.Sprint(s.clusters), func(b *testing.B) {
			fx := getFixture(b, s.clusters, s.opts)
			fsys := os.DirFS(fx.dir)

			b.Run("validate-cold", func(b *testing.B) {
				peak(b, "validate cold", s.clusters, fx.dir, "validate", "--no-cache")
				measure(b, "validate cold", s.clusters, func() {
					if _, d := fleet.Load(fsys, "config", checker(b, nil)); d.HasErrors() {
						b.Fatal(d)
					}
				})
			})
			b.Run("validate-unchanged", func(b *testing.B) {
				mem := cache.NewMemory()
				fleet.Load(fsys, "config", checker(b, mem))
				measure(b, "validate unchanged", s.clusters, func() {
					fleet.Load(fsys, "config", checker(b, mem))
				})
			})
			b.Run("validate+render-cold", func(b *testing.B) {
				// A first render: config, charts and Pipelines in a new
				// directory, nothing cached, every file of deploy/ created.
				root := leftover(b, "render-root-")
				for p, data := range fx.fs {
					full := filepath.Join(root, p)
					os.MkdirAll(filepath.Dir(full), 0o755)
					if err := os.WriteFile(full, data, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				settle()
				peak(b, "validate+render cold", s.clusters, root, "render", "--no-cache")
				measure(b, "validate+render cold", s.clusters, func() {
					_, out, d, err := render.FromFS(fsys, checker(b, nil), render.Options{Renderer: "bench"})
					if err != nil || d.HasErrors() {
						b.Fatal(err, d)
					}
					dir := leftover(b, "deploy-")
					if _, err := deploytree.Write(deploytree.OS{}, filepath.Join(dir, "deploy"), out, deploytree.Options{}); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run("render-cold-current", func(b *testing.B) {
				// A fresh clone: deploy/ is committed and current, nothing is
				// cached (CI's render --check --no-cache, a first render).
				dir := filepath.Join(leftover(b, "deploy-"), "deploy")
				_, out, _, _ := render.FromFS(fsys, checker(b, nil), render.Options{Renderer: "bench"})
				deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{})
				measure(b, "validate+render cold, current", s.clusters, func() {
					_, out, d, err := render.FromFS(fsys, checker(b, nil), render.Options{Renderer: "bench"})
					if err != nil || d.HasErrors() {
						b.Fatal(err, d)
					}
					if ch, err := deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{}); err != nil || !ch.Clean() {
						b.Fatal(err)
					}
				})
			})
			b.Run("render-unchanged", func(b *testing.B) {
				mem := cache.NewMemory()
				dir := filepath.Join(leftover(b, "deploy-"), "deploy")
				_, out, _, _ := render.FromFS(fsys, checker(b, mem), render.Options{Renderer: "bench", Cache: mem})
				deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{})
				measure(b, "render unchanged", s.clusters, func() {
					_, out, d, err := render.FromFS(fsys, checker(b, mem), render.Options{Renderer: "bench", Cache: mem})
					if err != nil || d.HasErrors() {
						b.Fatal(err, d)
					}
					if ch, err := deploytree.Write(deploytree.OS{}, dir, out, deploytree.Options{}); err != nil || !ch.Clean() {
						b.Fatal(err)
					}
				})
			})
			b.Run("render-changed", func(b *testing.B) {
				// The one-line sector change rendered with the cache warm
				// from the base, then compared with the base's deploy/:
				// only the clusters the change reaches are encoded, and
				// only their files would be written (the writing is left
				// out: replacing files deletes the old ones, see settle).
				gb, err := gitbase.Open(fx.dir)
				if err != nil {
					b.Fatal(err)
				}
				defer gb.Close()
				baseCommit, err := gb.Commit("HEAD~1")
				if err != nil {
					b.Fatal(err)
				}
				baseFS, _ := gb.FS(baseCommit)
				var mem *cache.Memory
				measureEach(b, "render changed sector, warm", s.clusters, func() {
					mem = cache.NewMemory()
					if _, _, d, err := render.FromFS(baseFS, checker(b, mem), render.Options{Renderer: "bench", Cache: mem}); err != nil || d.HasErrors() {
						b.Fatal(err, d)
					}
				}, func() {
					_, out, d, err := render.FromFS(fsys, checker(b, mem), render.Options{Renderer: "bench", Cache: mem})
					if err != nil || d.HasErrors() {
						b.Fatal(err, d)
					}
					ch, _, err := deploytree.Plan(deploytree.OS{}, fx.baseDeploy, out)
					if err != nil || len(ch.Changed) == 0 || len(ch.Changed) > len(out.Artifacts)/2 {
						b.Fatalf("plan: %v, %d of %d files changed", err, len(ch.Changed), len(out.Artifacts))
					}
				})
			})
			// The review rows run the command itself, in-process: both sides
			// loaded and rendered (only what differs, when the base's deploy/
			// is current), the head's deploy/ read for drift, the report
			// encoded.
			run := func(args ...string) {
				var errs strings.Builder
				if code := cli.Run(append([]string{"--root", fx.dir}, args...), io.Discard, &errs); code != 0 {
					b.Fatalf("regionctl %v: exit %d\n%s", args, code, errs.String())
				}
			}
			diffArgs := []string{"render", "--diff", "--base", "HEAD~1", "-o", "json"}
			b.Setenv("REGIONCTL_CACHE_DIR", filepath.Join(fx.dir, ".cache"))
			b.Run("diff-cold", func(b *testing.B) {
				peak(b, "render --diff cold", s.clusters, fx.dir, append(diffArgs, "--no-cache")...)
				measure(b, "render --diff cold", s.clusters, func() { run(append(diffArgs, "--no-cache")...) })
			})
			b.Run("diff-cold-full", func(b *testing.B) {
				// Every cluster checked and rendered on both sides: the
				// review before it learnt to skip the unchanged ones.
				peak(b, "render --diff cold, --full", s.clusters, fx.dir, append(diffArgs, "--no-cache", "--full")...)
				measure(b, "render --diff cold, --full", s.clusters, func() { run(append(diffArgs, "--no-cache", "--full")...) })
			})
			b.Run("diff-warm", func(b *testing.B) {
				// The file cache warmed by one run, then measured.
				peak(b, "render --diff warm", s.clusters, fx.dir, diffArgs...)
				peak(b, "render --diff warm", s.clusters, fx.dir, diffArgs...)
				run(diffArgs...) // this binary's own cache entries (the salt differs)
				measure(b, "render --diff warm", s.clusters, func() { run(diffArgs...) })
			})
			affectedArgs := []string{"affected", "--base", "HEAD~1", "--head", "HEAD", "-o", "json"}
			b.Run("affected-cold", func(b *testing.B) {
				peak(b, "affected cold", s.clusters, fx.dir, append(affectedArgs, "--no-cache")...)
				measure(b, "affected cold", s.clusters, func() { run(append(affectedArgs, "--no-cache")...) })
			})
			b.Run("affected-warm", func(b *testing.B) {
				peak(b, "affected warm", s.clusters, fx.dir, affectedArgs...)
				measure(b, "affected warm", s.clusters, func() { run(affectedArgs...) })
			})
		})
	}
}
