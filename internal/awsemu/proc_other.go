//go:build !linux

package awsemu

import "os/exec"

// The emulator is for tests and the demo, which run on Linux; elsewhere
// moto_server is ended by its own process.
func ownProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, kill bool) {
	if kill {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(interruptSignal)
}
