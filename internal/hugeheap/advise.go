package hugeheap

import (
	"os"
	"strings"
)

// Size is how much of the heap Advise advises: more than a review of the
// 2,200-cluster benchmark fleet touches, a little over half of what a
// 19,215-cluster render does.
const Size = 512 << 20

// Range is a run of the heap advised, [Start, End).
type Range struct{ Start, End uintptr }

// disabled says whether GODEBUG asks for no transparent huge pages in the
// heap (disablethp=1, the Go runtime's own setting; the last one given
// counts, as the runtime reads it).
func disabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			off = v == "1"
		}
	}
	return off
}

// asksOnly says whether the kernel's setting (the content of
// transparent_hugepage/enabled, the mode chosen in brackets) gives huge
// pages only to memory advised to take them. Under "always" the heap has
// them already and the advice would only add the kernel's compaction
// stalls to its faults; under "never" it does nothing.
func asksOnly(setting string) bool {
	return strings.Contains(setting, "[madvise]")
}

// strict says whether the kernel's overcommit mode (vm.overcommit_memory)
// is 2, where mapping memory counts against a commit limit whether or not
// it is touched (proc(5)).
func strict(mode string) bool {
	return strings.TrimSpace(mode) == "2"
}

func readSetting(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	return string(b)
}
