// Package smaps reads this process's mappings from /proc/self/smaps, where
// the kernel lists each with the advice it holds (proc(5): "hg" among its
// VmFlags is MADV_HUGEPAGE). The tests of hugeheap and atstart hold their
// advice to it.
package smaps

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mapping is one mapping: [Start, End) and its VmFlags.
type Mapping struct {
	Start, End uintptr
	Flags      map[string]bool
}

// Read reads this process's mappings.
func Read() ([]Mapping, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && len(out) > 0 {
			for _, fl := range strings.Fields(rest) {
				out[len(out)-1].Flags[fl] = true
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
		out = append(out, Mapping{uintptr(a), uintptr(b), map[string]bool{}})
	}
	return out, sc.Err()
}

// Flagged says why [start, end) is not wholly in mappings that hold flag
// ("" when it is).
func Flagged(maps []Mapping, start, end uintptr, flag string) string {
	for at := start; at < end; {
		m, ok := mappingAt(maps, at)
		if !ok {
			return fmt.Sprintf("%#x (of %#x-%#x) is in no mapping", at, start, end)
		}
		if !m.Flags[flag] {
			return fmt.Sprintf("mapping %#x-%#x, holding %#x-%#x, lacks the %s flag (flags %v)", m.Start, m.End, start, end, flag, m.Flags)
		}
		at = m.End
	}
	return ""
}

func mappingAt(maps []Mapping, at uintptr) (Mapping, bool) {
	for _, m := range maps {
		if m.Start <= at && at < m.End {
			return m, true
		}
	}
	return Mapping{}, false
}
