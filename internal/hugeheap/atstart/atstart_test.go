package atstart

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/hugeheap"
	"github.com/regionctl/regionctl/internal/hugeheap/smaps"
)

// TestAdvisedAtStart is judged by the kernel: the runs this test binary's
// start advised hold the advice in /proc/self/smaps, and the blocks taken
// for it were given back to the heap.
func TestAdvisedAtStart(t *testing.T) {
	mode, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if !strings.Contains(string(mode), "[madvise]") || os.Getenv("GOMEMLIMIT") != "" || strings.Contains(os.Getenv("GODEBUG"), "disablethp") {
		t.Skipf("hugeheap.Advise does nothing here (transparent_hugepage/enabled %q, GOMEMLIMIT %q, GODEBUG %q)", strings.TrimSpace(string(mode)), os.Getenv("GOMEMLIMIT"), os.Getenv("GODEBUG"))
	}
	if len(Advised) == 0 {
		t.Fatal("the start advised nothing")
	}
	total := uintptr(0)
	for _, r := range Advised {
		total += r.End - r.Start
	}
	// Each run loses at most a huge page at each end to alignment.
	if total < hugeheap.StartSize-uintptr(len(Advised))*(4<<20) {
		t.Errorf("advised %d bytes of %d in %d runs", total, hugeheap.StartSize, len(Advised))
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapInuse > hugeheap.StartSize/2 {
		t.Errorf("%d bytes of the heap are in use: the blocks were kept", m.HeapInuse)
	}
	maps, err := smaps.Read()
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	for _, r := range Advised {
		if why := smaps.Flagged(maps, r.Start, r.End, "hg"); why != "" {
			t.Error(why)
		}
	}
}
