package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestGeneratedIsCurrent: each cluster root's cluster-variables.tf is what
// the shared source gives (run make generate), and no root declares a
// shared variable a second time.
func TestGeneratedIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^variable "([^"]+)"`)
	src, _ := os.ReadFile(filepath.Join(root, Source))
	shared := map[string]bool{}
	for _, m := range decl.FindAllSubmatch(src, -1) {
		shared[string(m[1])] = true
	}
	if len(shared) == 0 {
		t.Fatalf("%s declares no variable", Source)
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(root, p))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what %s gives: run make generate (%v)", p, Source, err)
		}
		own, _ := filepath.Glob(filepath.Join(root, filepath.Dir(p), "*.tf"))
		for _, f := range own {
			if filepath.Base(f) == Name {
				continue
			}
			b, _ := os.ReadFile(f)
			for _, m := range decl.FindAllSubmatch(b, -1) {
				if shared[string(m[1])] {
					t.Errorf("%s declares %s, which %s declares for every cluster root", f, m[1], Source)
				}
			}
		}
	}
}
