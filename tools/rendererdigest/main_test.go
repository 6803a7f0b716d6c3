package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedIsCurrent: internal/render/source.go holds the digest of
// the renderer's source as it is; a change to any file the renderer is
// built from, without running this command, fails here (and in CI) before
// two different renderers could share one identity.
func TestGeneratedIsCurrent(t *testing.T) {
	want, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("../..", generated))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is stale: run go run ./tools/rendererdigest (or make build)", generated)
	}
}

// TestDigestCoversWhatIsBuilt: in a module of its own, the digest changes
// with a Go file or an embedded file of a root's dependency, and not with
// a test file or a package the roots do not import.
func TestDigestCoversWhatIsBuilt(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                         "module example.com/m\n\ngo 1.22\n",
		"internal/render/render.go":      "package render\n\nimport _ \"example.com/m/internal/dep\"\n",
		"internal/render/render_test.go": "package render\n",
		"internal/deploytree/tree.go":    "package deploytree\n",
		"internal/dep/dep.go":            "package dep\n\nimport _ \"embed\"\n\n//go:embed data.txt\nvar Data string\n",
		"internal/dep/data.txt":          "one\n",
		"internal/other/other.go":        "package other\n",
	}
	write := func(name, body string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		write(name, body)
	}
	digest := func() string {
		s, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s.Digest
	}
	first := digest()
	for _, tc := range []struct {
		file, body string
		changes    bool
	}{
		{"internal/render/render_test.go", "package render\n\n// a test\n", false},
		{"internal/other/other.go", "package other\n\n// not imported\n", false},
		{"internal/dep/data.txt", "two\n", true},
		{"internal/dep/dep.go", files["internal/dep/dep.go"] + "\n// changed\n", true},
		{"internal/deploytree/tree.go", "package deploytree\n\n// changed\n", true},
	} {
		write(tc.file, tc.body)
		now := digest()
		if (now != first) != tc.changes {
			t.Errorf("changing %s: digest changed %v, want %v", tc.file, now != first, tc.changes)
		}
		write(tc.file, files[tc.file])
		if tc.file == "internal/render/render_test.go" || tc.file == "internal/other/other.go" {
			continue
		}
		if digest() != first {
			t.Errorf("restoring %s did not restore the digest", tc.file)
		}
	}
}
