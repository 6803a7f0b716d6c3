//go:build !linux && !windows

package awsemu

import "syscall"

var interruptSignal = syscall.SIGTERM
