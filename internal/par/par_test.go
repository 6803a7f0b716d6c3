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
