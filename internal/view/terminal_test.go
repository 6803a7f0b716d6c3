package view

import (
	"os"
	"testing"
)

// TestDevNullIsNotATerminal: /dev/null is a character device, and no
// terminal: output sent there gets no colour codes and no live progress.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("/dev/null was taken for a terminal")
	}
	if p := New(f, false); p.Color {
		t.Error("output to /dev/null is coloured")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) {
		t.Error("a pipe was taken for a terminal")
	}
}
