package cli

import (
	"os"
	"runtime/debug"
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

// TuneGC lets the heap grow to five times the live data between
// collections (GOGC=400) unless the user set GOGC, up to MemoryLimit. A
// render allocates a great deal of short-lived data (CUE evaluation, YAML
// encoding) and keeps little: on the 2,200-cluster benchmark fleet the
// default spent about a fifth of the CPU in the collector; against
// GOGC=200, 400 takes 12 % off a cold validate and 6 % off a cold review
// there for 100-180 MiB more at the peak (305 and 576 MiB), while 800
// gained nothing more. cmd/regionctl and the benchmarks call it.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(MemoryLimit)
	}
}

// adviseHeap has a review's heap grow into transparent huge pages where the
// kernel gives them only on request (hugeheap.Advise), once a process. A
// review touches some 250 MiB of fresh heap at 2,200 clusters, and the
// advice took 30-40 ms of CPU off a one-sector review there (21
// interleaved runs); a cold render of every cluster, which writes the
// whole tree, ran no faster with it and varied more on this project's
// virtual machines, whose host hands a 2 MiB page over a fault at a time,
// so other commands do without.
var adviseHeap = sync.OnceFunc(func() { hugeheap.Advise(hugeheap.Size) })
