//go:build !linux

package diskfs

import "io/fs"

func newFS(root string) fs.FS { return dirOf(root) }
