package par

import (
	"sync/atomic"
	"testing"
)

// TestDoRunsEachIndexOnce: every index from 0 to n-1 once, none after.
func TestDoRunsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 1000} {
		seen := make([]atomic.Int32, n)
		Do(n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Errorf("n=%d: index %d ran %d times", n, i, c)
			}
		}
	}
}

// TestWorkersNumbersEachGoroutine: a worker's number is below the count
// and no two goroutines share one at a time; every index runs once.
func TestWorkersNumbersEachGoroutine(t *testing.T) {
	for _, tc := range []struct{ workers, n int }{{3, 100}, {8, 2}, {0, 5}, {4, 0}} {
		busy := make([]atomic.Int32, max(tc.workers, 1))
		seen := make([]atomic.Int32, tc.n)
		Workers(tc.workers, tc.n, func(w, i int) {
			if w < 0 || w >= len(busy) {
				t.Errorf("worker %d of %d", w, tc.workers)
				return
			}
			if busy[w].Add(1) != 1 {
				t.Errorf("worker %d runs twice at once", w)
			}
			seen[i].Add(1)
			busy[w].Add(-1)
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Errorf("%+v: index %d ran %d times", tc, i, c)
			}
		}
	}
	var a, b atomic.Bool
	All(func() { a.Store(true) }, func() { b.Store(true) })
	if !a.Load() || !b.Load() {
		t.Error("All did not run every function")
	}
}

func TestFutureWaitsForItsValue(t *testing.T) {
	release := make(chan struct{})
	var ran atomic.Int32
	f := Go(func() int {
		<-release
		ran.Add(1)
		return 42
	})
	close(release)
	if got := f.Wait(); got != 42 {
		t.Errorf("Wait() = %d, want 42", got)
	}
	if got := f.Wait(); got != 42 || ran.Load() != 1 {
		t.Errorf("a second Wait() = %d after %d runs; want 42 after 1", got, ran.Load())
	}
}
