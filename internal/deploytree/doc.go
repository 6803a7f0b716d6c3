// Package deploytree is the only writer of deploy/. It compares a render
// with what is on disk, refuses to silently drop files it did not write, and
// replaces the tree atomically: the new tree is built in a staging directory
// of .regionctl/ beside deploy/ (unchanged files hard-linked, not rewritten)
// and swapped in with one atomic exchange (two renames where the system has
// none), so a failure at any point leaves deploy/ as it was. One writer at a
// time: Write holds an operating-system lock for its whole run.
//
// Entry points: Plan (what would change), Write and Check.
package deploytree
