// Package atstart advises the first part of the heap for huge pages while
// the program starts, before most of its packages are initialised:
// cmd/regionctl imports it for that alone.
//
// Initialising regionctl's some 1,100 packages allocates some 13 MB (the
// AWS SDK's service schemas, JSON Schema's metaschemas, Kubernetes' type
// registrations) before main runs, and then every command's heap grows
// from there: in 4 KiB pages, a fault each. `regionctl version` took some
// 4,300 faults and 101 ms without this package, 2,100 and 82 ms with it
// (20 runs each); validate of the 2,200-cluster fleet 0.59 against 0.35 s
// (eight interleaved cold runs).
//
// Go initialises packages in dependency order, and among those ready, in
// the order of their import paths (the Go specification, "Package
// initialization"): this package and hugeheap import only the runtime,
// syscall, unsafe, slices and cmp, so they are ready, and run, before any
// package of the SDK, Kubernetes, CUE or Helm, whose imports take most of
// the standard library first. TestAtStartComesFirst in cmd/regionctl
// holds it there, judged by the runtime's own report of the order
// (GODEBUG=inittrace=1).
//
// It also turns the collector off until main sets its pace (cli.TuneGC,
// main's first call), unless GOGC sets it. Those 13 MB were collected
// some five times over, three of them while the packages were initialised
// from a heap of 4 MB: `regionctl version` took 41 ms with them and 30
// with GOGC=off (25 interleaved runs), an unchanged render of 2,200
// clusters 137 against 129 ms (20). TestNoCollectionBeforeMain
// (cmd/regionctl) holds the start to the runtime's report of its
// collections (GODEBUG=gctrace=1).
package atstart

import (
	"syscall"

	"github.com/regionctl/regionctl/internal/hugeheap"
)

// Advised is what the program's start advised: nil where hugeheap.Advise
// does nothing (see there).
var Advised = start()

// start turns the collector off unless GOGC is set, then advises the
// first hugeheap.StartSize bytes of the heap: the blocks Advise takes
// (and gives back, collecting them itself) no longer start five
// collections on their way. Only main turns the collector on again: a
// program that imports this package must call cli.TuneGC first thing.
func start() []hugeheap.Range {
	if _, set := syscall.Getenv("GOGC"); !set {
		setGCPercent(-1)
	}
	return hugeheap.Advise(hugeheap.StartSize)
}
