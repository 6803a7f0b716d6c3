package hugeheap

// Size is how much of the heap a review advises: more than a review of the
// 2,200-cluster benchmark fleet touches, a little over half of what a
// 19,215-cluster render does.
const Size = 512 << 20

// StartSize is how much of the heap every command advises as it starts
// (package atstart): the 13 MB the packages' initialisation allocates and
// more than validate or an unchanged render of the 2,200-cluster fleet
// touch. Not all of a render's heap: at 19,215 clusters a render or
// render --check whose heap was advised whole (Size) varied more, 16-31 s
// against 17-23 s without (three interleaved runs each, at the same peaks).
const StartSize = 128 << 20

// Range is a run of the heap advised, [Start, End).
type Range struct{ Start, End uintptr }

// This file and the Linux one import only what the runtime initialises
// first (runtime, syscall, unsafe, slices, cmp): Advise runs while the program's
// packages are initialised (package atstart), before most of them, and a
// package it imported would be initialised before it. So the settings are
// read here without strings, strconv or os.

// disabled says whether GODEBUG asks for no transparent huge pages in the
// heap (disablethp=1, the Go runtime's own setting; the last one given
// counts, as the runtime reads it).
func disabled(godebug string) bool {
	off := false
	for godebug != "" {
		kv := godebug
		if i := index(godebug, ","); i >= 0 {
			kv, godebug = godebug[:i], godebug[i+1:]
		} else {
			godebug = ""
		}
		if i := index(kv, "="); i >= 0 && trim(kv[:i]) == "disablethp" {
			off = trim(kv[i+1:]) == "1"
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
	return index(setting, "[madvise]") >= 0
}

// strict says whether the kernel's overcommit mode (vm.overcommit_memory)
// is 2, where mapping memory counts against a commit limit whether or not
// it is touched (proc(5)).
func strict(mode string) bool {
	return trim(mode) == "2"
}

// limited says whether GOMEMLIMIT, as the runtime reads it at start (a
// byte count with an optional unit, B to TiB, or "off"), holds the heap
// under n bytes. A value the runtime refuses (one it cannot read, or over
// the largest int64) counts as a limit; the runtime stops before any
// package is initialised then anyway.
func limited(gomemlimit string, n int64) bool {
	if gomemlimit == "" || gomemlimit == "off" {
		return false
	}
	i := 0
	for i < len(gomemlimit) && '0' <= gomemlimit[i] && gomemlimit[i] <= '9' {
		i++
	}
	v, ok := parseUint(gomemlimit[:i])
	if !ok {
		return true
	}
	var s uint
	switch gomemlimit[i:] {
	case "", "B":
	case "KiB":
		s = 10
	case "MiB":
		s = 20
	case "GiB":
		s = 30
	case "TiB":
		s = 40
	default:
		return true
	}
	if v > (1<<63-1)>>s {
		return true
	}
	return int64(v<<s) < n
}

// parseUint reads a decimal number of digits only.
func parseUint(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		d := uint64(s[i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func index(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func trim(s string) string {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for s != "" && space(s[0]) {
		s = s[1:]
	}
	for s != "" && space(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
