package cli

import (
	"os"
	"runtime/debug"
)

// MemoryLimit is the soft limit of the Go heap (and the runtime's own
// memory) unless GOMEMLIMIT is set: past it the collector runs as often as
// it must, so that a large fleet's peak stays near it instead of growing to
// GOGC's three times the live data (a 19,215-cluster render keeps about
// 560 MiB live). A fleet whose live data exceeds it still renders, with the
// collector taking at most half the CPU.
const MemoryLimit = 900 << 20

// TuneGC lets the heap grow to three times the live data between
// collections (GOGC=200) unless the user set GOGC, up to MemoryLimit. A
// render allocates a great deal of short-lived data (CUE evaluation, YAML
// encoding) and keeps little: on the 2,200-cluster benchmark fleet the
// default spent about a fifth of the CPU in the collector, and this setting
// costs about 50 MiB of peak memory there. cmd/regionctl and the benchmarks
// call it.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(MemoryLimit)
	}
}
