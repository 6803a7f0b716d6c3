package atstart

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/hugeheap"
	"github.com/regionctl/regionctl/internal/hugeheap/smaps"
)

// gcAtStart is the collector's pace (GOGC's percent) as the package
// initialisation left it, before TestMain puts the default back: a test
// binary has no main to call cli.TuneGC.
var gcAtStart int

func TestMain(m *testing.M) {
	gcAtStart = debug.SetGCPercent(100)
	if os.Getenv("ATSTART_GC") != "" {
		fmt.Println("gc percent at start", gcAtStart)
		return
	}
	os.Exit(m.Run())
}

// TestCollectorOffUntilMain is judged by the runtime, which reports the
// pace it had (debug.SetGCPercent's answer): off as the start leaves it,
// unless GOGC sets the pace, which the start leaves alone.
func TestCollectorOffUntilMain(t *testing.T) {
	for _, c := range []struct{ gogc, want string }{{"", "-1"}, {"50", "50"}, {"off", "-1"}, {"300", "300"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(withoutGOGC(os.Environ()), "ATSTART_GC=1")
		if c.gogc != "" {
			cmd.Env = append(cmd.Env, "GOGC="+c.gogc)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOGC=%q: %v\n%s", c.gogc, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "gc percent at start "+c.want {
			t.Errorf("GOGC=%q: the runtime reports %q, want the pace %s", c.gogc, got, c.want)
		}
	}
}

func withoutGOGC(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOGC=") {
			out = append(out, kv)
		}
	}
	return out
}

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

// TestLimitedDataSegmentStarts is judged by the kernel: under a limit of
// the data segment (ulimit -d) that this test binary runs under without
// the advice, the blocks the advice maps failed it before main ("fatal
// error: runtime: out of memory"). The test binary runs again under the
// limit, and must start and advise nothing. cmd/regionctl's tests hold
// the address space's limit (ulimit -v) the same way, on a binary the
// size of regionctl.
func TestLimitedDataSegmentStarts(t *testing.T) {
	if os.Getenv("ATSTART_REPORT") != "" {
		fmt.Println("advised", len(Advised))
		return
	}
	if _, err := os.Stat("/proc/self/limits"); err != nil {
		t.Skip("no rlimits to set here")
	}
	cmd := exec.Command("sh", "-c", `ulimit -d 200000 && exec "$0" -test.run='^TestLimitedDataSegmentStarts$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "ATSTART_REPORT=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("under ulimit -d 200000 the program did not start: %v\n%.600s", err, out)
	}
	if !strings.Contains(string(out), "advised 0\n") {
		t.Errorf("under ulimit -d 200000 the start advised: %q", out)
	}
}
