// Command procbench measures regionctl as a user runs it: whole processes
// of the built binary on a generated fleet in a git clone, cold and warm,
// the compared commands interleaved round by round, with two references
// measured in the same run on the same disk (git status --porcelain and cp
// -r of deploy/) so that the figures mean something on any machine. It
// prints medians with min–max and peak RSS, and with -write replaces the
// whole-process section of BENCHMARKS.md. `make bench` runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/regionctl", "the regionctl binary to measure (a release build)")
	plain := flag.String("plain", "", "a plain go build of the same source, whose reviews are measured beside -bin's")
	sectors := flag.Int("sectors", 5, "sectors of the generated fleet")
	regions := flag.Int("regions", 40, "regions per sector")
	clusters := flag.Int("clusters", 11, "clusters per region")
	rounds := flag.Int("rounds", 5, "rounds; each runs every command once, in turn")
	write := flag.String("write", "", "replace the whole-process section of this markdown file (BENCHMARKS.md)")
	against := flag.String("against", "", "an earlier build whose validate and reviews (on a fixture it rendered itself) and cold render on tmpfs are measured in the same rounds")
	tmpfs := flag.String("tmpfs", "/dev/shm", "a directory on tmpfs where a cold render and cp -r are timed too (\"\" or a directory not on tmpfs: not timed)")
	flag.Parse()
	if err := run(*bin, *plain, *against, *tmpfs, *sectors, *regions, *clusters, *rounds, *write); err != nil {
		fmt.Fprintf(os.Stderr, "procbench: %v\n", err)
		os.Exit(1)
	}
}

// op is one measured command.
type op struct {
	name string
	dir  string   // where it runs
	args []string // the command
	env  []string
	// refuse fails the run when its output holds it: a review of a base
	// this renderer trusts must not measure the fallback that re-renders it.
	refuse string
	setup  func() error // before each run, not timed
	at     func(*op)    // before each run: sets the round's directory or arguments
	times  []time.Duration
	peaks  []int64 // KiB
	user   []time.Duration
	sys    []time.Duration
}

func run(bin, plain, against, tmpfs string, sectors, regions, clusters, rounds int, write string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	for _, p := range []*string{&plain, &against} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				return err
			}
		}
	}
	src, _ := os.Getwd()
	work, err := os.MkdirTemp("", "regionctl-procbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fleet := filepath.Join(work, "fleet")
	n := sectors * regions * clusters
	fmt.Fprintf(os.Stderr, "procbench: generating a fleet of %d clusters\n", n)
	if err := fixture(bin, src, fleet, sectors, regions, clusters); err != nil {
		return err
	}
	// The rest run in a clone left as checked out. Each cold render has a
	// clone of its own, made before any timed run, holding the inputs only
	// (nothing deleted, so no render creates files beside just-freed
	// inodes), and each cp -r a fresh target: both sides of the ratio
	// create the same tree on the same disk in the same state.
	warm := filepath.Join(work, "warm")
	if err := sh(work, "git", "clone", "-q", fleet, warm); err != nil {
		return err
	}
	regional := filepath.Join(work, "region")
	if err := regionClone(fleet, regional); err != nil {
		return err
	}
	colds, fresh, freshGit, err := roundClones(work, fleet, rounds)
	if err != nil {
		return err
	}
	round := 0
	cacheDir := filepath.Join(work, "cache")
	freshCache := func() error { return os.RemoveAll(cacheDir) }
	env := []string{"REGIONCTL_CACHE_DIR=" + cacheDir, "NO_COLOR=1"}
	warmEnv := []string{"REGIONCTL_CACHE_DIR=" + filepath.Join(work, "warm-cache"), "NO_COLOR=1"}
	if err := recordOlderThanRacy(warm, warmEnv, bin); err != nil {
		return err
	}
	ops := benchOps(setup{bin: bin, plain: plain, warm: warm, regional: regional, copyTo: filepath.Join(work, "copy"),
		colds: colds, fresh: fresh, freshGit: freshGit, env: env, warmEnv: warmEnv, freshCache: freshCache}, &round)
	if onTmpfs(tmpfs) {
		inMemory, err := tmpfsOps(bin, against, tmpfs, fleet, rounds, &round)
		if err != nil {
			return err
		}
		defer os.RemoveAll(inMemory.work)
		ops = append(ops, inMemory.ops...)
	} else if tmpfs != "" {
		fmt.Fprintf(os.Stderr, "procbench: %s is not on tmpfs: the cold render is timed on disk only\n", tmpfs)
	}
	if against != "" {
		earlier, err := againstOps(against, src, work, sectors, regions, clusters, env, freshCache)
		if err != nil {
			return err
		}
		ops = append(ops, earlier...)
	}
	// Generating and rendering the fixture just now loaded the machine;
	// the rounds start once that has passed (the 1-minute load average,
	// which decays slowly, under 0.6), or after two minutes whatever it is.
	settle(2*time.Minute, 0.6)
	loadBefore := loadavg()
	for r := 0; r < rounds; r++ {
		round = r
		fmt.Fprintf(os.Stderr, "procbench: round %d of %d\n", r+1, rounds)
		for _, o := range ops {
			if err := o.once(); err != nil {
				return err
			}
		}
	}
	report := table(ops, n, rounds, loadBefore, loadavg(), fileCount(filepath.Join(warm, "deploy")))
	fmt.Print(report)
	if write != "" {
		return replaceSection(write, report)
	}
	return nil
}

// setup is what the timed commands run on: the binaries, the clones, the
// environments and the cache reset.
type setup struct {
	bin, plain, warm, regional, copyTo string
	colds, fresh, freshGit             []string
	env, warmEnv                       []string
	freshCache                         func() error
}

// benchOps are the commands timed each round (*round, as the rounds go).
func benchOps(b setup, round *int) []*op {
	bin, plain, warm, regional, copyTo, env, warmEnv, freshCache := b.bin, b.plain, b.warm, b.regional, b.copyTo, b.env, b.warmEnv, b.freshCache
	ops := []*op{
		{name: "git status --porcelain (reference)", dir: warm, args: []string{"git", "status", "--porcelain"}},
		{name: "cp -r deploy (reference)", dir: warm, args: []string{"cp", "-r", "deploy", copyTo}, at: func(o *op) {
			o.args[len(o.args)-1] = fmt.Sprintf("%s-%d", copyTo, *round)
		}},
		{name: "validate, cold", dir: warm, args: []string{bin, "validate"}, env: env, setup: freshCache},
		{name: diskRender, args: []string{bin, "render"}, env: env, setup: freshCache, at: func(o *op) { o.dir = b.colds[*round] }},
		{name: "render right after the render that wrote deploy/", args: []string{bin, "render"}, env: env, at: func(o *op) { o.dir = b.colds[*round] }},
		{name: "render, nothing changed", dir: warm, args: []string{bin, "render"}, env: warmEnv},
		{name: "render, the first in a fresh clone", args: []string{bin, "render"}, env: env, setup: freshCache, at: func(o *op) { o.dir = b.fresh[*round] }},
		// git pays for its first look at a fresh clone too: the
		// reference the first render of one is held to beside the
		// warm git status above (a clone of its own: git status
		// rewrites the index a render then reads).
		{name: freshGitStatus, args: []string{"git", "status", "--porcelain"}, at: func(o *op) { o.dir = b.freshGit[*round] }},
	}
	ops = append(ops, reviews(bin, warm, regional, "", env, freshCache)...)
	if plain != "" {
		// One program however built: a plain go build trusts what the
		// release build trusts, so its reviews take as long.
		ops = append(ops, reviews(plain, warm, "", ", plain go build", env, freshCache)...)
	}
	return ops
}

// reviews are the cold reviews of bin, named with suffix: render --diff
// and affected of the sector change in warm, and of the region change in
// regional unless it is "". A render --diff whose header says the base
// was re-rendered fails the run.
func reviews(bin, warm, regional, suffix string, env []string, freshCache func() error) []*op {
	var ops []*op
	for _, at := range []struct{ dir, change string }{{warm, "one sector"}, {regional, "one region"}} {
		if at.dir == "" {
			continue
		}
		ops = append(ops,
			&op{name: "render --diff --base HEAD~1, " + at.change + ", cold" + suffix, dir: at.dir, args: []string{bin, "render", "--diff", "--base", "HEAD~1"}, env: env, refuse: rerendered, setup: freshCache},
			&op{name: "affected --base HEAD~1, " + at.change + ", cold" + suffix, dir: at.dir, args: []string{bin, "affected", "--base", "HEAD~1"}, env: env, setup: freshCache})
	}
	return ops
}

// onTmpfs says whether dir lies on a tmpfs mount (/proc/mounts: the
// longest mount point holding it).
func onTmpfs(dir string) bool {
	if dir == "" {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return false
	}
	best, fstype := "", ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		at := f[1]
		if (abs == at || strings.HasPrefix(abs, strings.TrimSuffix(at, "/")+"/")) && len(at) > len(best) {
			best, fstype = at, f[2]
		}
	}
	return fstype == "tmpfs"
}

// inMemory are the commands timed on tmpfs and the directory they run in.
type inMemory struct {
	work string
	ops  []*op
}

// tmpfsOps are a cold render and cp -r of the tree it writes, on tmpfs:
// per round a clone holding the inputs only, made before any timed run, and
// a fresh copy target, as on disk, with the result cache on tmpfs too, so
// that the render's wall time is that of its own work and not the disk's.
//
// With against, that build's cold render runs there too, in clones of its
// own: the render's ratio to the copy moves with the machine's hour more
// than either's time, and the two builds' in the same rounds is the
// change's.
func tmpfsOps(bin, against, tmpfs, fleet string, rounds int, round *int) (_ *inMemory, err error) {
	work, err := os.MkdirTemp(tmpfs, "regionctl-procbench-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(work)
		}
	}()
	warm := filepath.Join(work, "warm")
	if err := sh(work, "git", "clone", "-q", fleet, warm); err != nil {
		return nil, err
	}
	cache := filepath.Join(work, "cache")
	env := []string{"REGIONCTL_CACHE_DIR=" + cache, "NO_COLOR=1"}
	copyTo := filepath.Join(work, "copy")
	ops := []*op{{name: tmpfsCopy, dir: warm, args: []string{"cp", "-r", "deploy", copyTo}, at: func(o *op) {
		o.args[len(o.args)-1] = fmt.Sprintf("%s-%d", copyTo, *round)
	}}}
	for _, b := range []struct{ bin, name, prefix string }{{bin, tmpfsRender, "cold"}, {against, tmpfsRenderAgainst, "against-cold"}} {
		if b.bin == "" {
			continue
		}
		colds := make([]string, rounds)
		for r := range rounds {
			if colds[r], err = inputsClone(work, fleet, b.prefix, r); err != nil {
				return nil, err
			}
		}
		ops = append(ops, &op{name: b.name, args: []string{b.bin, "render"}, env: env, setup: func() error { return os.RemoveAll(cache) },
			at: func(o *op) { o.dir = colds[*round] }})
	}
	return &inMemory{work: work, ops: ops}, nil
}

// The commands timed on tmpfs: the render is held to the copy on tmpfs.
const (
	tmpfsCopy   = "cp -r deploy, on tmpfs (reference)"
	tmpfsRender = "render into an empty deploy/, cold, on tmpfs"
	// tmpfsRenderAgainst is the earlier build's (-against).
	tmpfsRenderAgainst = tmpfsRender + ", the earlier build (-against)"
	diskRender         = "render into an empty deploy/, cold"
)

// againstOps are the commands an earlier build (against) is measured by
// in the same rounds as the build under test: validate and the reviews,
// cold, on a fixture of its own that it generated and rendered (a review
// trusts only a base its own renderer wrote). Both builds then meet the
// machine as it is in each round, which moves every median by 5-10 %
// from one run to the next: their difference is the change's alone.
func againstOps(against, src, work string, sectors, regions, clusters int, env []string, freshCache func() error) ([]*op, error) {
	fleet := filepath.Join(work, "against-fleet")
	fmt.Fprintf(os.Stderr, "procbench: generating the fleet again with %s\n", against)
	if err := fixture(against, src, fleet, sectors, regions, clusters); err != nil {
		return nil, err
	}
	warm, regional := filepath.Join(work, "against-warm"), filepath.Join(work, "against-region")
	if err := sh(work, "git", "clone", "-q", fleet, warm); err != nil {
		return nil, err
	}
	if err := regionClone(fleet, regional); err != nil {
		return nil, err
	}
	const by = ", the earlier build (-against)"
	validate := &op{name: "validate, cold" + by, dir: warm, args: []string{against, "validate"}, env: env, setup: freshCache}
	return append([]*op{validate}, reviews(against, warm, regional, by, env, freshCache)...), nil
}

// roundClones makes, per round, a clone of fleet holding its inputs only
// (colds: a cold render's) and two fresh clones checked out whole (fresh:
// the first render a clone gets; freshGit: the first git status).
func roundClones(work, fleet string, rounds int) (colds, fresh, freshGit []string, err error) {
	colds, fresh, freshGit = make([]string, rounds), make([]string, rounds), make([]string, rounds)
	for r := range rounds {
		if colds[r], err = inputsClone(work, fleet, "cold", r); err != nil {
			return nil, nil, nil, err
		}
		fresh[r] = filepath.Join(work, fmt.Sprintf("fresh-%d", r))
		freshGit[r] = filepath.Join(work, fmt.Sprintf("fresh-git-%d", r))
		for _, dir := range []string{fresh[r], freshGit[r]} {
			if err := sh(work, "git", "clone", "-q", fleet, dir); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return colds, fresh, freshGit, nil
}

// inputsClone is round r's clone of fleet in work holding its inputs only,
// for a cold render to write deploy/ into, named prefix-r.
func inputsClone(work, fleet, prefix string, r int) (string, error) {
	dir := filepath.Join(work, fmt.Sprintf("%s-%d", prefix, r))
	if err := sh(work, "git", "clone", "-q", "--no-checkout", fleet, dir); err != nil {
		return "", err
	}
	return dir, sh(dir, "git", "checkout", "HEAD", "--", ".", ":(exclude)deploy")
}

// recordOlderThanRacy renders the clone at warm until its render record
// exists, then ages every file of it past the record's racy window, so
// that the unchanged render only looks.
func recordOlderThanRacy(warm string, env []string, bin string) error {
	for i := 0; i < 2; i++ {
		if err := shEnv(warm, env, bin, "render"); err != nil {
			return err
		}
	}
	if err := sh(warm, "find", ".", "-path", "./.git/objects", "-prune", "-o", "-exec", "touch", "-h", "-d", "2020-01-01T00:00:00", "{}", "+"); err != nil {
		return err
	}
	return shEnv(warm, env, bin, "render")
}

// once runs o once, set up as it asks, and records what it measured.
func (o *op) once() error {
	if o.at != nil {
		o.at(o)
	}
	if o.setup != nil {
		if err := o.setup(); err != nil {
			return err
		}
	}
	m, err := measure(o.dir, o.env, o.args, o.refuse != "")
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if o.refuse != "" && bytes.Contains(m.stdout, []byte(o.refuse)) {
		return fmt.Errorf("%s: the output says %q: the figures would not measure what they name", o.name, o.refuse)
	}
	o.times, o.peaks = append(o.times, m.wall), append(o.peaks, m.kib)
	o.user, o.sys = append(o.user, m.user), append(o.sys, m.sys)
	return nil
}

// fixture generates the fleet and commits it three times, each commit with
// its rendered deploy/: the fleet, then on main a one-line change to one
// sector, and on the branch regionBranch, from the fleet's commit, a
// one-line change to one region.
func fixture(bin, src, dir string, sectors, regions, clusters int) error {
	steps := [][]string{
		{bin, "--root", src, "dev", "gen-fleet", "--sectors", fmt.Sprint(sectors), "--regions", fmt.Sprint(regions), "--clusters", fmt.Sprint(clusters), dir},
		{"git", "-C", dir, "init", "-q", "-b", "main"},
		{bin, "--root", dir, "--no-cache", "render"},
		{"git", "-C", dir, "add", "-A"},
		{"git", "-C", dir, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "fleet"},
	}
	for _, s := range steps {
		if err := sh("", s[0], s[1:]...); err != nil {
			return err
		}
	}
	// The in-process benchmarks' change: eks.node_max in sector-2.
	sector := filepath.Join(dir, "config", "sectors", "sector-2.yaml")
	b, err := os.ReadFile(sector)
	if err != nil || !bytes.Contains(b, []byte("soak: 72h")) {
		return fmt.Errorf("the generated fleet has no sector-2 with soak: 72h to change (use 3 or more sectors): %v", err)
	}
	b = bytes.Replace(b, []byte("soak: 72h"), []byte("soak: 72h\neks:\n  node_max: 16"), 1)
	if err := os.WriteFile(sector, b, 0o644); err != nil {
		return err
	}
	if err := commitRender(bin, dir, "one sector change"); err != nil {
		return err
	}
	// The one-region change, on a branch of its own from the fleet's
	// commit: eks.node_max in the first region of sector-2.
	if err := sh("", "git", "-C", dir, "checkout", "-q", "-b", regionBranch, "HEAD~1"); err != nil {
		return err
	}
	region, err := firstRegionOf(dir, "sector-2")
	if err != nil {
		return err
	}
	b, err = os.ReadFile(region)
	if err != nil {
		return err
	}
	if err := os.WriteFile(region, append(b, "eks:\n  node_max: 12\n"...), 0o644); err != nil {
		return err
	}
	if err := commitRender(bin, dir, "one region change"); err != nil {
		return err
	}
	return sh("", "git", "-C", dir, "checkout", "-q", "main")
}

// rerendered is what a review's header says when it renders its base
// rather than trusting what the base committed.
const rerendered = "base re-rendered"

// regionClone clones the fixture's one-region change into dir, its files'
// times older than its git index's, as the warm clone's are made: a review
// finds its working tree clean by the index's stat data, as in a user's
// clone.
func regionClone(fleet, dir string) error {
	for _, s := range [][]string{
		{"git", "clone", "-q", "-b", regionBranch, fleet, dir},
		{"find", dir, "-path", filepath.Join(dir, ".git"), "-prune", "-o", "-exec", "touch", "-h", "-d", "2020-01-01T00:00:00", "{}", "+"},
		{"git", "-C", dir, "update-index", "-q", "--refresh"},
	} {
		if err := sh("", s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// freshGitStatus names the first git status of a fresh clone.
const freshGitStatus = "git status --porcelain, the first in a fresh clone (reference)"

// regionBranch holds the fixture's one-region change.
const regionBranch = "one-region"

// commitRender renders dir's fleet and commits it with deploy/.
func commitRender(bin, dir, message string) error {
	for _, s := range [][]string{
		{bin, "--root", dir, "--no-cache", "render"},
		{"git", "-C", dir, "add", "-A"},
		{"git", "-C", dir, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", message},
	} {
		if err := sh("", s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// firstRegionOf is the region file, first by name, whose region is in
// sector and which sets no eks key (the change adds one).
func firstRegionOf(dir, sector string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "config", "regions", "*.yaml"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		inSector := bytes.Contains(b, []byte("\nsector: "+sector+"\n")) || bytes.HasPrefix(b, []byte("sector: "+sector+"\n"))
		setsEKS := bytes.Contains(b, []byte("\neks:")) || bytes.HasPrefix(b, []byte("eks:"))
		if inSector && !setsEKS {
			return f, nil
		}
	}
	return "", fmt.Errorf("the generated fleet has no region in %s without eks settings", sector)
}

// measured is one measured process.
type measured struct {
	wall, user, sys time.Duration
	kib             int64  // peak RSS
	stdout          []byte // when asked for
}

// measure runs a command and returns its wall time, CPU times and peak
// RSS. The child is started by this small process, so its ru_maxrss is
// its own.
func measure(dir string, env, args []string, keepStdout bool) (measured, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	if keepStdout {
		cmd.Stdout = &stdout
	}
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return measured{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	ps := cmd.ProcessState
	return measured{wall: d, user: ps.UserTime(), sys: ps.SystemTime(), kib: ps.SysUsage().(*syscall.Rusage).Maxrss, stdout: stdout.Bytes()}, nil
}

func sh(dir, name string, args ...string) error { return shEnv(dir, nil, name, args...) }

func shEnv(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func table(ops []*op, clusters, rounds int, loadBefore, loadAfter string, files int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Whole processes of the built binary on %d clusters (%d files in deploy/), %d interleaved rounds;\n", clusters, files, rounds)
	fmt.Fprintf(&b, "%s, %d CPUs, %s; load average %s before, %s after.\n\n", cpuModel(), runtime.NumCPU(), runtime.GOOS+"/"+runtime.GOARCH, loadBefore, loadAfter)
	b.WriteString("| operation | median | min–max | user CPU | system CPU | peak RSS | × git status | × cp -r |\n|---|---|---|---|---|---|---|---|\n")
	gitStatus, cp := median(ops[0].times), median(ops[1].times)
	byName := map[string]*op{}
	for _, o := range ops {
		byName[o.name] = o
	}
	for _, o := range ops {
		cp := cp
		if c := byName[tmpfsCopy]; c != nil && strings.Contains(o.name, "on tmpfs") {
			cp = median(c.times) // held to the copy on the same file system
		}
		min, max := o.times[0], o.times[0]
		var peak int64
		for i, d := range o.times {
			min, max = minDur(min, d), maxDur(max, d)
			if o.peaks[i] > peak {
				peak = o.peaks[i]
			}
		}
		m := median(o.times)
		fmt.Fprintf(&b, "| %s | %s | %s–%s | %s | %s | %d MiB | %.1f | %.2f |\n", o.name, round(m), round(min), round(max),
			round(median(o.user)), round(median(o.sys)), peak/1024, float64(m)/float64(gitStatus), float64(m)/float64(cp))
	}
	var firstRender, firstStatus time.Duration
	for _, o := range ops {
		switch o.name {
		case "render, the first in a fresh clone":
			firstRender = median(o.times)
		case freshGitStatus:
			firstStatus = median(o.times)
		}
	}
	if firstRender > 0 && firstStatus > 0 {
		fmt.Fprintf(&b, "\nThe first render of a fresh clone against the first git status of a fresh clone: %.1f × (%s against %s).\n",
			float64(firstRender)/float64(firstStatus), round(firstRender), round(firstStatus))
	}
	if o := byName[diskRender]; o != nil {
		fmt.Fprintf(&b, "\nA cold render's user CPU per cluster: %.2f ms (system CPU, mostly creating files: %.2f ms).\n",
			float64(median(o.user))/float64(time.Millisecond)/float64(clusters), float64(median(o.sys))/float64(time.Millisecond)/float64(clusters))
	}
	if o, c := byName[tmpfsRender], byName[tmpfsCopy]; o != nil && c != nil {
		fmt.Fprintf(&b, "\nOn tmpfs (rows marked so, held to cp -r on tmpfs): a cold render %s against %s on disk, cp -r %s against %s: %.2f × cp -r on tmpfs, %.2f × on disk.\n",
			round(median(o.times)), round(median(byName[diskRender].times)), round(median(c.times)), round(cp),
			float64(median(o.times))/float64(median(c.times)), float64(median(byName[diskRender].times))/float64(cp))
		if e := byName[tmpfsRenderAgainst]; e != nil {
			fmt.Fprintf(&b, "The earlier build's cold render on tmpfs in the same rounds: %s, %.2f × cp -r on tmpfs.\n",
				round(median(e.times)), float64(median(e.times))/float64(median(c.times)))
		}
	}
	return b.String()
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// settle waits until the 1-minute load average is under below, at most
// max, and says how long it waited.
func settle(max time.Duration, below float64) {
	start := time.Now()
	for time.Since(start) < max {
		f := strings.Fields(loadavg())
		if load, err := strconv.ParseFloat(f[0], 64); err != nil || load < below {
			break
		}
		time.Sleep(2 * time.Second)
	}
	fmt.Fprintf(os.Stderr, "procbench: waited %s for the load to settle (%s)\n", time.Since(start).Round(time.Second), loadavg())
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func fileCount(dir string) int {
	n := 0
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

const (
	beginMarker = "<!-- procbench:begin -->"
	endMarker   = "<!-- procbench:end -->"
)

// replaceSection puts report between the markers of file, with the commit.
func replaceSection(file, report string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	commit, _ := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	section := fmt.Sprintf("%s\nMeasured by `make bench` (tools/procbench) at commit `%s` on %s.\n\n%s%s",
		beginMarker, strings.TrimSpace(string(commit)), time.Now().UTC().Format("2006-01-02"), report, endMarker)
	s := string(b)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s … %s section", file, beginMarker, endMarker)
	}
	return os.WriteFile(file, []byte(s[:i]+section+s[j+len(endMarker):]), 0o644)
}
