// Package cli is regionctl's command line: one file per command, each parsing
// its flags, calling one library function and handing the result to a view.
// Only this package knows cobra, flags, stdout and exit codes.
//
// Entry point: Run.
package cli
