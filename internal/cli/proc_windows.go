package cli

import "os"

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid) // on Windows, opens the process: fails when it is gone
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

func processSpace() string { return "" }
