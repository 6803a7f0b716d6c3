package cli

import (
	"testing"

	"github.com/regionctl/regionctl/internal/hugeheap"
)

// TestReviewAdviceFitsTheDefaultLimit: hugeheap.Advise reads the heap's
// limit from GOMEMLIMIT and takes none when unset, as at the program's
// start; by a review's advice TuneGC has set MemoryLimit instead, and the
// blocks Advise takes (with the quarter it leaves for the heap beside
// them) must fit under it, or they would push the collector to its limit.
func TestReviewAdviceFitsTheDefaultLimit(t *testing.T) {
	if need := int64(hugeheap.Size) + hugeheap.Size/4; need > MemoryLimit {
		t.Errorf("a review advises %d bytes of blocks (%d with the heap's share) under a limit of %d", hugeheap.Size, need, MemoryLimit)
	}
}
