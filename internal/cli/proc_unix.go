//go:build unix

package cli

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// processSpace names the space a PID counts in: this machine's boot and
// the PID namespace of this process (Linux), or "" when unknown, which
// leaves a killed run's lease to expire rather than be taken at once.
func processSpace() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + " " + ns
}
