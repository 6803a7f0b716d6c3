package hugeheap

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/regionctl/regionctl/internal/hugeheap/smaps"
)

// TestAdviseMarksTheHeap is judged by the kernel: /proc/self/smaps lists
// each mapping with the advice it holds ("hg" among its VmFlags is
// MADV_HUGEPAGE, proc(5)), and the runtime's statistics say the blocks
// were given back.
func TestAdviseMarksTheHeap(t *testing.T) {
	if s := readSetting(thpDir + "enabled"); !asksOnly(s) {
		t.Skipf("the kernel does not give huge pages on request only here (%s: %q): Advise does nothing", thpDir+"enabled", strings.TrimSpace(s))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const size = 64 << 20
	got := Advise(size)
	runtime.ReadMemStats(&after)
	if len(got) == 0 {
		t.Fatal("Advise advised nothing")
	}
	total := uintptr(0)
	for _, r := range got {
		total += r.End - r.Start
	}
	// Each run loses at most a huge page at each end to alignment.
	if total < size-uintptr(len(got))*2*(4<<20) {
		t.Errorf("advised %d bytes of %d in %d runs", total, size, len(got))
	}
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 2*block {
		t.Errorf("the heap in use grew by %d bytes: the blocks were kept", grew)
	}
	maps, err := smaps.Read()
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	for _, r := range got {
		if why := smaps.Flagged(maps, r.Start, r.End, "hg"); why != "" {
			t.Error(why)
		}
	}
}

func TestAdviseLeavesATightLimitAlone(t *testing.T) {
	if s := readSetting(thpDir + "enabled"); !asksOnly(s) {
		t.Skipf("the kernel does not give huge pages on request only here (%q): Advise does nothing", strings.TrimSpace(s))
	}
	const size = 64 << 20
	t.Setenv("GOMEMLIMIT", strconv.Itoa(size+size/8))
	if got := Advise(size); got != nil {
		t.Errorf("under GOMEMLIMIT=%d, Advise took %d bytes of blocks and advised %v", size+size/8, size, got)
	}
	t.Setenv("GOMEMLIMIT", "128MiB")
	if got := Advise(size); got == nil {
		t.Errorf("under GOMEMLIMIT=128MiB, Advise advised nothing")
	}
}

func TestAdviseLeavesAlone(t *testing.T) {
	t.Setenv("GODEBUG", "disablethp=1")
	if got := Advise(16 << 20); got != nil {
		t.Errorf("with GODEBUG=disablethp=1, Advise advised %v", got)
	}
}

func TestRunsGroupAdjacentBlocks(t *testing.T) {
	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
	big := make([]byte, 4*16)
	other := make([]byte, 16)
	got := runs([][]byte{big[32:48], other, big[0:16], big[48:64], big[16:32]})
	var sizes []int
	for _, g := range got {
		sizes = append(sizes, len(g))
		for i := 1; i < len(g); i++ {
			if addr(g[i]) != addr(g[i-1])+16 {
				t.Errorf("a run holds a block at %#x after one at %#x", addr(g[i]), addr(g[i-1]))
			}
		}
	}
	// big's four blocks are one run, other another, whichever is first.
	if len(sizes) != 2 || sizes[0]+sizes[1] != 5 || (sizes[0] != 4 && sizes[1] != 4) {
		t.Errorf("runs of %v blocks, want one of 4 and one of 1", sizes)
	}
}
