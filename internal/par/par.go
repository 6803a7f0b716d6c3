// Package par runs a loop's iterations on several goroutines: the one
// worker pool of the code base.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do runs fn(0..n-1) on GOMAXPROCS goroutines and returns when every call
// has.
func Do(n int, fn func(i int)) {
	Workers(runtime.GOMAXPROCS(0), n, func(_, i int) { fn(i) })
}

// Workers runs fn(w, i) for i in 0..n-1 on min(workers, n) goroutines,
// w being the goroutine's number (0..workers-1: a worker's own state, such
// as a compiled schema, is indexed by it), and returns when every call has.
// Each goroutine takes the next index from a counter: handing indices over
// a channel woke a goroutine per item.
func Workers(workers, n int, fn func(w, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(max(workers, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(w, i)
			}
		}()
	}
	wg.Wait()
}

// All runs each of fns on a goroutine of its own and returns when all
// have.
func All(fns ...func()) {
	Workers(len(fns), len(fns), func(_, i int) { fns[i]() })
}
