package deploytree

import (
	"os"
	"path/filepath"
	"testing"
)

// Both ways of swapping a staged tree in, the system's atomic exchange and
// the portable two renames every other system uses, keep the contract:
// afterwards the trees have traded places; when the swap cannot happen, b
// is as it was and nothing is left beside it.
func TestExchangeSwapsOrLeavesBAsItWas(t *testing.T) {
	for name, swap := range map[string]func(a, b string) error{
		"system":   OS{}.Exchange,
		"portable": renameExchange,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "staging"), filepath.Join(dir, "deploy")
			write := func(d, content string) {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "index.json"), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			read := func(d string) string {
				b, _ := os.ReadFile(filepath.Join(d, "index.json"))
				return string(b)
			}
			write(a, "new")
			write(b, "old")
			if err := swap(a, b); err != nil {
				t.Fatal(err)
			}
			if read(b) != "new" || read(a) != "old" {
				t.Fatalf("after the swap deploy holds %q, staging %q", read(b), read(a))
			}
			// A staged tree that is gone: the swap fails, deploy stays.
			if err := swap(filepath.Join(dir, "missing"), b); err == nil {
				t.Fatal("a swap with a missing tree succeeded")
			}
			if read(b) != "new" {
				t.Errorf("a failed swap left deploy holding %q", read(b))
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 2 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("a failed swap left %v", names)
			}
		})
	}
}
