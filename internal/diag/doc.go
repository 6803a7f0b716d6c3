// Package diag holds Diagnostic, the one way regionctl reports a problem with
// the user's input: a severity, a short summary, a detail that says what to
// change, and the file:line:col it is about. It imports nothing internal.
package diag
