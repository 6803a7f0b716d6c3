package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// mainBegins is what TestMain writes to stderr first when
// TestNoCollectionBeforeMain runs the test binary again: the
// collections the runtime reports before it came before main.
const mainBegins = "regionctl test: main begins"

func TestMain(m *testing.M) {
	if os.Getenv("REGIONCTL_MAIN_BEGINS") != "" {
		fmt.Fprintln(os.Stderr, mainBegins)
		return
	}
	// A test binary has no main to set the collector's pace (cli.TuneGC):
	// package atstart left it off.
	debug.SetGCPercent(100)
	os.Exit(m.Run())
}

// TestNoCollectionBeforeMain is judged by the runtime: this test binary,
// which initialises what regionctl does, runs again with
// GODEBUG=gctrace=1, and every collection it reports before main is one
// a caller forced (hugeheap.Advise collects the blocks it gave back): none
// started by the heap's growth, which package atstart turns off until
// main. Without it the runtime reported seven, five of them while the
// advice took its blocks.
func TestNoCollectionBeforeMain(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1", "REGIONCTL_MAIN_BEGINS=1")
	var env []string
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, "GOGC=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	before, found := strings.CutSuffix(strings.SplitAfter(string(out), mainBegins)[0], mainBegins)
	if !found {
		t.Fatalf("the test binary did not reach main:\n%s", out)
	}
	for _, line := range strings.Split(before, "\n") {
		// gc <n> @<t>s <p>%: ... [(forced)]
		if strings.HasPrefix(line, "gc ") && !strings.HasSuffix(line, "(forced)") {
			t.Errorf("a collection before main that no caller forced: %s", line)
		}
	}
}

const atstart = "github.com/regionctl/regionctl/internal/hugeheap/atstart"

// TestAtStartComesFirst holds package atstart where it is useful: before
// the packages whose initialisation allocates, so that their heap grows
// into the memory it advised. The runtime judges the order: this test
// binary (main's imports and the testing package) runs again with
// GODEBUG=inittrace=1, which reports each package's initialisation in the
// order it ran, with the bytes it allocated.
func TestAtStartComesFirst(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen, before, total := false, 0, 0
	var heavy []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		// init <package> @<t> ms, <clock> ms clock, <bytes> bytes, <allocs> allocs
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		if f[1] == atstart {
			seen = true
			continue // its blocks, given back
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		total += n
		if seen {
			continue
		}
		before += n
		for _, p := range []string{"github.com/aws/", "k8s.io/", "sigs.k8s.io/", "cuelang.org/", "helm.sh/", "github.com/santhosh-tekuri/", "google.golang.org/"} {
			if strings.HasPrefix(f[1], p) {
				heavy = append(heavy, f[1])
			}
		}
	}
	if !seen {
		t.Fatalf("the runtime reported no initialisation of %s:\n%s", atstart, out)
	}
	if total < 1<<20 {
		t.Fatalf("the runtime reported %d bytes allocated by initialisation in all: is inittrace's format still read right?\n%s", total, out)
	}
	if len(heavy) > 0 {
		t.Errorf("initialised before %s: %v", atstart, heavy)
	}
	if before*100 > total {
		t.Errorf("%d of %d bytes of initialisation were allocated before %s ran (over 1%%)", before, total, atstart)
	}
	t.Logf("%d of %d bytes of initialisation allocated before %s", before, total, atstart)
}

// TestStartsUnderAnAddressSpaceLimit is judged by the kernel: this test
// binary, which links what regionctl links, starts under a limit of its
// address space (ulimit -v 1200000, some 1.1 GiB) without the heap's
// advice, and the advice's blocks failed it before main there ("out of
// memory: cannot allocate 4194304-byte block"). It must start.
func TestStartsUnderAnAddressSpaceLimit(t *testing.T) {
	if _, err := os.Stat("/proc/self/limits"); err != nil {
		t.Skip("no rlimits to set here")
	}
	cmd := exec.Command("sh", "-c", `ulimit -v 1200000 && exec "$0" -test.run='^$'`, os.Args[0])
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("under ulimit -v 1200000 the program did not start: %v\n%.600s", err, out)
	}
}
