package hugeheap

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

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

// TestLimitedReadsGOMEMLIMITAsTheRuntimeDoes is judged by the Go runtime:
// the test binary runs again with each value of GOMEMLIMIT and reports the
// limit the runtime took from it (debug.SetMemoryLimit(-1)); limited must
// hold the heap under a size exactly when that limit is below it.
func TestLimitedReadsGOMEMLIMITAsTheRuntimeDoes(t *testing.T) {
	if v := os.Getenv("HUGEHEAP_REPORT_LIMIT"); v != "" {
		fmt.Println(debug.SetMemoryLimit(-1))
		return
	}
	if testing.Short() {
		t.Skip("runs the test binary once per value")
	}
	const size = 640 << 20
	for _, v := range []string{"off", "1", "671088640", "671088639", "640MiB", "639MiB", "655360KiB", "1GiB", "1TiB", "0", "8388607TiB", "671088640B"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLimitedReadsGOMEMLIMITAsTheRuntimeDoes$")
		cmd.Env = append(os.Environ(), "HUGEHEAP_REPORT_LIMIT=1", "GOMEMLIMIT="+v)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%s: %v", v, err)
		}
		line, _, _ := strings.Cut(string(out), "\n")
		runtimes, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%s: the runtime reported %q", v, out)
		}
		if got, want := limited(v, size), runtimes < size; got != want {
			t.Errorf("limited(%q, %d) = %v; the runtime took a limit of %d from it", v, int64(size), got, runtimes)
		}
	}
	// Values the runtime refuses (it stops before main) count as a limit.
	for _, v := range []string{"1.5GiB", "1GB", "-1", "MiB", "1 GiB", "8388608TiB"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLimitedReadsGOMEMLIMITAsTheRuntimeDoes$")
		cmd.Env = append(os.Environ(), "HUGEHEAP_REPORT_LIMIT=1", "GOMEMLIMIT="+v)
		if out, err := cmd.Output(); err == nil {
			t.Errorf("GOMEMLIMIT=%s: the runtime took it (%q); the test has it refused", v, out)
		}
		if !limited(v, size) {
			t.Errorf("limited(%q) = false, want true", v)
		}
	}
}

func TestParseUintTakesDigitsOnly(t *testing.T) {
	for in, want := range map[string]bool{"2097152": true, "0": true, "": false, "2 ": false, "-1": false, "18446744073709551615": true, "18446744073709551616": false} {
		if _, ok := parseUint(in); ok != want {
			t.Errorf("parseUint(%q) ok = %v, want %v", in, ok, want)
		}
	}
	if n, _ := parseUint("2097152"); n != 2097152 {
		t.Errorf("parseUint(2097152) = %d", n)
	}
}
