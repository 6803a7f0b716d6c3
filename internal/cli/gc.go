package cli

import (
	"os"
	"runtime/debug"
)

// TuneGC lets the heap grow to three times the live data between
// collections (GOGC=200) unless the user set GOGC. A render allocates a
// great deal of short-lived data (CUE evaluation, YAML encoding) and keeps
// little: on the 2,200-cluster benchmark fleet the default spent about a
// fifth of the CPU in the collector, and this setting costs about 50 MiB of
// peak memory there. cmd/regionctl and the benchmarks call it.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
}
