// Package par runs a loop's iterations on every core.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do runs fn(0..n-1) on GOMAXPROCS goroutines and returns when every call
// has. Each goroutine takes the next index from a counter: handing indices
// over a channel woke a goroutine per item.
func Do(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
