package atstart

import _ "unsafe" // go:linkname

// setGCPercent is runtime/debug.SetGCPercent's own call into the runtime,
// which the runtime provides under that name (runtime/mgcpacer.go marks
// its definition with go:linkname, so the linker lets other packages
// name it too). Importing runtime/debug instead would make this package
// wait for os, fmt and their imports, and run after the collections it
// is here to spare.
//
//go:linkname setGCPercent runtime/debug.setGCPercent
func setGCPercent(percent int32) (previous int32)
