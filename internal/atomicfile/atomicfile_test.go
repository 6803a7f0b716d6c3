package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeAndLeavesNothingBeside(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, want := range []string{"first", "second"} {
		if err := Write(p, []byte(want), ".f-*"); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Fatalf("read %q, want %q", b, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want 1", len(entries))
	}
	// A directory that is not there fails and makes nothing.
	if err := Write(filepath.Join(dir, "no", "f"), []byte("x"), ".f-*"); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
