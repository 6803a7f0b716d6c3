//go:build !linux

package fswalk

// walkUnder calls fn for every entry under top/dir that is not a
// directory, with its slash-separated path under top.
func walkUnder(top, dir string, fn func(rel string, e Entry) error) error {
	return walkDirUnder(top, dir, fn)
}
