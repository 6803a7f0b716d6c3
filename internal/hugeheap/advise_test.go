package hugeheap

import "testing"

func TestDisabledReadsGODEBUGAsTheRuntimeDoes(t *testing.T) {
	for in, want := range map[string]bool{
		"":                           false,
		"disablethp=1":               true,
		"disablethp=0":               false,
		"gctrace=1,disablethp=1":     true,
		"disablethp=1,disablethp=0":  false,
		"disablethp=0, disablethp=1": true,
		"xdisablethp=1":              false,
		"disablethp=10":              false,
	} {
		if got := disabled(in); got != want {
			t.Errorf("disabled(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestAsksOnlyReadsTheKernelsMode(t *testing.T) {
	for in, want := range map[string]bool{
		"always [madvise] never\n": true,
		"[always] madvise never\n": false,
		"always madvise [never]\n": false,
		"":                         false,
	} {
		if got := asksOnly(in); got != want {
			t.Errorf("asksOnly(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestStrictReadsTheOvercommitMode(t *testing.T) {
	for in, want := range map[string]bool{"0\n": false, "1\n": false, "2\n": true, "2": true, "": false, "22\n": false} {
		if got := strict(in); got != want {
			t.Errorf("strict(%q) = %v, want %v", in, got, want)
		}
	}
}
