//go:build !linux

package awsemu

import "os/exec"

// The emulator serves tests and the demo, which run on Linux; elsewhere
// regionctl still builds, and moto_server is ended by its own process.
func ownProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
