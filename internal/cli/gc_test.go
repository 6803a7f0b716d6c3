package cli

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
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

// TestMemoryProfiledOnlyWhenAsked: a run samples its allocations for the
// memory profile only when --memprofile asks for one, at the runtime's
// rate, and a run that asks gets a profile that holds samples.
func TestMemoryProfiledOnlyWhenAsked(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"render"}, 0},
		{[]string{"--root", "x", "render", "--check"}, 0},
		{[]string{"--memprofile", "m.out", "render"}, runtime.MemProfileRate},
		{[]string{"validate", "--memprofile=m.out"}, runtime.MemProfileRate},
		{[]string{"explain", "--", "--memprofile"}, 0},
		{[]string{"-test.run", "^$", "-test.memprofile=m.out"}, runtime.MemProfileRate},
	} {
		if got := memProfileRate(c.args); got != c.want {
			t.Errorf("%q: rate %d, want %d", c.args, got, c.want)
		}
	}
	if runtime.MemProfileRate != defaultMemProfileRate {
		t.Errorf("the runtime's default rate is %d, not %d", runtime.MemProfileRate, defaultMemProfileRate)
	}
	prof := filepath.Join(t.TempDir(), "mem.prof")
	if code := Run([]string{"--memprofile", prof, "--root", t.TempDir(), "version"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if info, err := os.Stat(prof); err != nil || info.Size() == 0 {
		t.Errorf("--memprofile wrote no profile: %v", err)
	}
}
