package e2e

import "syscall"

func processGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
