package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/regionctl/regionctl/internal/hugeheap"
)

// MemoryLimit is the soft limit of the Go heap (and the runtime's own
// memory) unless GOMEMLIMIT is set: past it the collector runs as often as
// it must, so that a large fleet's peak stays near it instead of growing
// with GOGC to several times the live data (a 19,215-cluster review keeps
// some 400-560 MiB live). A fleet whose live data exceeds it still
// renders, with the collector taking at most half the CPU. The process's
// resident memory is the limit and up to some 70 MiB more (the binary's pages,
// stacks, what the collector has not returned). At 19,215 clusters, with
// resident memory read as /usr/bin/time's KiB over 1,024: a limit of 760
// MiB put every command at 750-860 MiB and render --diff at 4.1-4.7 s,
// render --check at 15.5 s; 800 puts them at 810-866 MiB, render --diff at
// 3.8-4.0 s and render --check at 12.8-13.6 s, under the bound of 900 MiB
// a runner of 1 GiB needs (BENCHMARKS.md); 840 reached 881 MiB for
// render --diff alone. Below 2,000 clusters or so no command comes near
// it.
const MemoryLimit = 800 << 20

// TuneGC turns memory profiling off unless asked for (memProfileRate),
// and lets the heap grow to three times the live data between
// collections (GOGC=200) unless the user set GOGC, up to MemoryLimit. A
// render allocates a great deal of short-lived data (CUE evaluation, YAML
// encoding) and keeps little: on the 2,200-cluster benchmark fleet the
// default (100) spent about a fifth of the CPU in the collector. Growing
// further costs more than it saves where the heap grows into fresh 4 KiB
// pages, each a fault: against GOGC=400, 200 takes 8 % off a cold render
// of every cluster (tmpfs, three interleaved runs: 1.78 against 1.94 s,
// 58,000 page faults against 86,000) and 6 % off a cold validate (five:
// 0.60 against 0.64 s). Those runs predate hugeheap/atstart, which has
// every command's first 128 MiB grow into huge pages: since, a cold
// validate took 0.34 s at 400 against 0.35 s at 200 (five interleaved
// runs) at a peak of 185 against 160 MiB, so 200 stays. A review's heap
// grows into huge pages further (reviewHeap), where 400 is the faster.
// cmd/regionctl's main calls it first thing, and must: package
// hugeheap/atstart turns the collector off while the packages initialise
// (unless GOGC is set), and only this turns it on again. The benchmarks
// call it too.
func TuneGC() {
	runtime.MemProfileRate = memProfileRate(os.Args[1:])
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(MemoryLimit)
	}
}

// memProfileRate is the runtime's memory profiling rate for a run of
// args: off, unless --memprofile asks for the profile (the runtime's
// default then), or a test binary's -test.memprofile does (its rate
// then). regionctl links runtime/pprof for that flag, and a
// program that does samples its allocations from the start: some 4,000
// stacks taken and hashed in a cold render of 2,200 clusters, which took
// 0.87 against 0.89 s without them (11 interleaved runs on tmpfs).
func memProfileRate(args []string) int {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--memprofile" || strings.HasPrefix(a, "--memprofile=") {
			return defaultMemProfileRate
		}
		if strings.HasPrefix(a, "-test.memprofile") {
			// A test binary's own profile (the benchmarks call TuneGC
			// too): the rate the testing package set stays.
			return runtime.MemProfileRate
		}
	}
	return 0
}

// defaultMemProfileRate is the runtime's (runtime.MemProfileRate).
const defaultMemProfileRate = 512 * 1024

// reviewHeap readies a review's heap: it grows into transparent huge
// pages where the kernel gives them only on request (hugeheap.Advise, once
// a process, for its first 512 MiB; every command's start advised 128 MiB,
// package hugeheap/atstart), and to five times the live data between
// collections (GOGC=400) unless the user set GOGC. A review touches some
// 250 MiB of fresh heap at 2,200 clusters, and the advice took 30-40 ms of
// CPU off a one-sector review there (21 interleaved runs); with it,
// GOGC=400 took 0.53 s against 0.64 s for 200 off a cold one-sector
// affected and 0.65 against 0.71 s off its render --diff (five
// interleaved runs).
func (a *app) reviewHeap() {
	a.gcPercent(400)
	adviseHeap()
}

// adviseHeap advises the review's heap with no collection started while
// Advise holds its blocks: one would only keep them to its end, and Advise
// runs one whole collection to give them back.
var adviseHeap = sync.OnceFunc(func() {
	old := debug.SetGCPercent(-1)
	hugeheap.Advise(hugeheap.Size)
	debug.SetGCPercent(old)
})

// settleHeap stops the collections GOGC asks for once a render has
// rendered every cluster (unless the user set GOGC): what is left (the
// rollout-wave check, the tree's swap, the render's record) allocates
// little, and a collection then only costs a core. The memory limit still
// holds: near it the collector runs as it must.
func (a *app) settleHeap() { a.gcPercent(-1) }

// gcPercent sets GOGC for the rest of this command unless the user set it;
// the command's end puts back what was before (restoreGC), so that a
// process that runs many commands (the tests) keeps its own.
func (a *app) gcPercent(p int) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	old := debug.SetGCPercent(p)
	if a.restoreGC == nil {
		a.restoreGC = func() { debug.SetGCPercent(old) }
	}
}
