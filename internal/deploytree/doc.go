// Package deploytree is the only writer of deploy/. It compares a render
// with what is on disk, refuses to silently drop files it did not write, and
// replaces the tree atomically: the new tree is built in a staging directory
// of .regionctl/ beside deploy/ (unchanged files hard-linked, not rewritten)
// and swapped in with one atomic exchange (two renames where the system has
// none), so a failure at any point leaves deploy/ as it was. One writer at a
// time: a Stream begun for writing holds an operating-system lock until it
// finishes or aborts.
//
// Entry points: Begin (a Stream that takes a render's files as they are
// rendered, then Finish), Write (the same for a render held whole), Compare
// and Plan (what would change, writing nothing).
package deploytree
