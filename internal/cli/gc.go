package cli

import (
	"os"
	"runtime/debug"

	"github.com/regionctl/regionctl/internal/hugeheap"
)

// MemoryLimit is the soft limit of the Go heap (and the runtime's own
// memory) unless GOMEMLIMIT is set: past it the collector runs as often as
// it must, so that a large fleet's peak stays near it instead of growing
// with GOGC to several times the live data (a 19,215-cluster render keeps
// about 560 MiB live). A fleet whose live data exceeds it still renders, with the
// collector taking at most half the CPU. The process's resident memory is
// the limit and some 130 MiB more (the binary's pages, stacks, what the
// collector has not returned): at 19,215 clusters a limit of 900 MiB put
// render --check at 984 MiB and the reviews at 930-960; 760 puts every
// command under 890 MiB, and render --check takes 26 s instead of 22 and
// render --diff 10.5 instead of 9 (BENCHMARKS.md). Below 2,000 clusters or
// so no command comes near it.
const MemoryLimit = 760 << 20

// TuneGC lets the heap grow to five times the live data between
// collections (GOGC=400) unless the user set GOGC, up to MemoryLimit. A
// render allocates a great deal of short-lived data (CUE evaluation, YAML
// encoding) and keeps little: on the 2,200-cluster benchmark fleet the
// default spent about a fifth of the CPU in the collector; against
// GOGC=200, 400 takes 12 % off a cold validate and 6 % off a cold review
// there for 100-180 MiB more at the peak (305 and 576 MiB), while 800
// gained nothing more. cmd/regionctl and the benchmarks call it.
//
// First it has the heap's first Size bytes backed by huge pages where the
// kernel wants them asked for (hugeheap.Advise).
func TuneGC() {
	hugeheap.Advise(hugeheap.Size)
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(MemoryLimit)
	}
}
