package hugeheap

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
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
	maps := readSmaps(t)
	for _, r := range got {
		for at := r.Start; at < r.End; {
			m, ok := mappingAt(maps, at)
			if !ok {
				t.Fatalf("%#x (advised %#x-%#x) is in no mapping", at, r.Start, r.End)
			}
			if !m.flags["hg"] {
				t.Errorf("mapping %#x-%#x, holding advised %#x-%#x, lacks the hg flag (flags %v)", m.start, m.end, r.Start, r.End, m.flags)
			}
			at = m.end
		}
	}
}

func TestAdviseLeavesATightLimitAlone(t *testing.T) {
	if s := readSetting(thpDir + "enabled"); !asksOnly(s) {
		t.Skipf("the kernel does not give huge pages on request only here (%q): Advise does nothing", strings.TrimSpace(s))
	}
	const size = 64 << 20
	old := debug.SetMemoryLimit(size + size/8)
	defer debug.SetMemoryLimit(old)
	if got := Advise(size); got != nil {
		t.Errorf("under a heap limit of %d bytes, Advise took %d bytes of blocks and advised %v", size+size/8, size, got)
	}
	debug.SetMemoryLimit(2 * size)
	if got := Advise(size); got == nil {
		t.Errorf("under a heap limit of %d bytes, Advise advised nothing", 2*size)
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

type mapping struct {
	start, end uintptr
	flags      map[string]bool
}

// readSmaps reads this process's mappings and their VmFlags.
func readSmaps(t *testing.T) []mapping {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && len(out) > 0 {
			for _, fl := range strings.Fields(rest) {
				out[len(out)-1].flags[fl] = true
			}
			continue
		}
		field, _, _ := strings.Cut(line, " ")
		lo, hi, ok := strings.Cut(field, "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, mapping{uintptr(a), uintptr(b), map[string]bool{}})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mappingAt(maps []mapping, at uintptr) (mapping, bool) {
	for _, m := range maps {
		if m.start <= at && at < m.end {
			return m, true
		}
	}
	return mapping{}, false
}
