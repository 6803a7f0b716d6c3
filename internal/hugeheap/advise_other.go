//go:build !linux

package hugeheap

// Advise does nothing but on Linux.
func Advise(size int) []Range { return nil }
