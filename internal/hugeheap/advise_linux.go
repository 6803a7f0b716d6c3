package hugeheap

import (
	"cmp"
	"runtime"
	"slices"
	"syscall"
	"unsafe"
)

const (
	thpDir = "/sys/kernel/mm/transparent_hugepage/"
	// block is the size of each block taken: a large object, which the
	// runtime places in fresh memory without touching it.
	block = 4 << 20
)

// Advise advises the next size bytes of the heap (rounded down to whole
// blocks) MADV_HUGEPAGE and returns the runs advised, or nil when the
// kernel gives huge pages without advice or never, when GODEBUG has
// disablethp=1, when the kernel counts every mapping against a commit
// limit (vm.overcommit_memory 2: the blocks could fail the process before
// it did anything), when the process's address space or data segment has
// a limit (bounded), or when GOMEMLIMIT leaves no room for the blocks. It
// takes a few milliseconds (the blocks are never touched; one collection
// gives them back), and is meant to be called once, while the program
// starts (package atstart): it reads the heap's limit from GOMEMLIMIT, as
// the runtime does at start, not from the runtime, so that it needs no
// package the runtime initialises late.
func Advise(size int) []Range {
	if disabled(getenv("GODEBUG")) || !asksOnly(readSetting(thpDir+"enabled")) || strict(readSetting("/proc/sys/vm/overcommit_memory")) || bounded() || limited(getenv("GOMEMLIMIT"), int64(size)+int64(size)/4) {
		return nil
	}
	huge := uintptr(2 << 20)
	if n, ok := parseUint(trim(readSetting(thpDir + "hpage_pmd_size"))); ok && n > 0 && n&(n-1) == 0 {
		huge = uintptr(n)
	}
	blocks := make([][]byte, size/block)
	for i := range blocks {
		blocks[i] = make([]byte, block)
	}
	var advised []Range
	for _, run := range runs(blocks) {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(run[0])))
		end := start + uintptr(len(run))*block
		beg := (start + huge - 1) &^ (huge - 1)
		end &^= huge - 1
		if end <= beg {
			continue
		}
		// The blocks are this process's heap, mapped and unused: the
		// advice changes how the kernel backs them, not their content.
		// The range spans several blocks, each its own allocation, so it
		// is passed by address (blocks keeps them, and the heap does not
		// move): a slice over it is what -race's pointer checks refuse.
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, syscall.MADV_HUGEPAGE); errno == 0 {
			advised = append(advised, Range{beg, end})
		}
	}
	runtime.KeepAlive(blocks)
	clear(blocks)
	// A collection that was under way while the blocks were taken keeps
	// them (what is allocated during a cycle survives it); GC finishes
	// that one and runs a whole cycle after it, which frees them.
	runtime.GC()
	return advised
}

// runs sorts the blocks by address and groups those that follow one
// another in memory.
func runs(blocks [][]byte) [][][]byte {
	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
	slices.SortFunc(blocks, func(a, b []byte) int { return cmp.Compare(addr(a), addr(b)) })
	var out [][][]byte
	from := 0
	for i := 1; i <= len(blocks); i++ {
		if i == len(blocks) || addr(blocks[i]) != addr(blocks[i-1])+uintptr(len(blocks[i-1])) {
			out = append(out, blocks[from:i])
			from = i
		}
	}
	return out
}

// bounded says whether the process's address space or data segment has a
// limit (RLIMIT_AS, RLIMIT_DATA: ulimit -v, -d). The blocks are mapped
// before they are given back, so under such a limit they could fail the
// process at start where it runs without them: under ulimit -v 1200000 or
// -d 200000, regionctl version did (TestStartsUnderAnAddressSpaceLimit in
// cmd/regionctl, TestLimitedDataSegmentStarts in atstart).
func bounded() bool {
	for _, res := range []int{syscall.RLIMIT_AS, syscall.RLIMIT_DATA} {
		var r syscall.Rlimit
		if err := syscall.Getrlimit(res, &r); err != nil || r.Cur != ^uint64(0) {
			return true
		}
	}
	return false
}

func getenv(name string) string {
	v, _ := syscall.Getenv(name)
	return v
}

// readSetting reads a short file of the kernel's settings ("" when it
// cannot: no advice then).
func readSetting(name string) string {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	var buf [256]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return ""
	}
	return string(buf[:n])
}
