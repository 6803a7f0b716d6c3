package config_test

import (
	"crypto/sha1"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/config"
)

// hashingFS is a file system that tells blob hashes (as a git tree does)
// and counts the files opened.
type hashingFS struct {
	fstest.MapFS
	mu     sync.Mutex
	opened map[string]int
}

func (h *hashingFS) Open(name string) (fs.File, error) {
	h.mu.Lock()
	h.opened[name]++
	h.mu.Unlock()
	return h.MapFS.Open(name)
}

func (h *hashingFS) BlobHash(name string) ([20]byte, bool) {
	f, ok := h.MapFS[name]
	if !ok {
		return [20]byte{}, false
	}
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(f.Data))
	s.Write(f.Data)
	var out [20]byte
	s.Sum(out[:0])
	return out, true
}

func fleetFS(sectorEKS string) fstest.MapFS {
	return fstest.MapFS{
		"config/global/a.yaml":                  {Data: []byte("eks:\n  node_min: 3\n")},
		"config/sectors/s1.yaml":                {Data: []byte("order: 1\nenvironment: staging\neks:\n  node_max: " + sectorEKS + "\n")},
		"config/regions/us-east-1.yaml":         {Data: []byte("sector: s1\n")},
		"config/clusters/us-east-1/mc01.yaml":   {Data: []byte("type: management\n")},
		"config/clusters/us-east-1/broken.yaml": {Data: []byte("type: [\n")},
	}
}

// TestParseReusingReadsOnlyWhatDiffers: a review's base takes every file
// whose blob the head has from the head's parse, and reads the others.
func TestParseReusingReadsOnlyWhatDiffers(t *testing.T) {
	head, headDiags := config.Parse(fleetFS("8"), "config")
	base := &hashingFS{MapFS: fleetFS("6"), opened: map[string]int{}}
	docs, diags := config.ParseReusing(base, "config", config.DecodeOptions{}, head)

	if n := base.opened["config/sectors/s1.yaml"]; n != 1 {
		t.Errorf("the changed sector file was opened %d times, want 1", n)
	}
	for _, p := range []string{"config/global/a.yaml", "config/regions/us-east-1.yaml", "config/clusters/us-east-1/mc01.yaml", "config/clusters/us-east-1/broken.yaml"} {
		if n := base.opened[p]; n != 0 {
			t.Errorf("%s is the same on both sides but was read %d times", p, n)
		}
	}
	if got := docs.Sectors[0].Value.Lookup("eks", "node_max"); got == nil || got.Int != 6 {
		t.Errorf("the base's sector has node_max %v, want the base's 6", got)
	}
	if docs.Global[0].Value != head.Global[0].Value {
		t.Error("an identical file was decoded again rather than shared")
	}
	// The unparsable file's error is the base's too, and still invalid.
	var broken *config.Document
	for _, d := range docs.Clusters {
		if d.Name == "broken" {
			broken = d
		}
	}
	if broken == nil || !broken.Invalid {
		t.Fatalf("the base's broken cluster file is not invalid: %+v", broken)
	}
	if len(diags) != len(headDiags) || !diags.HasErrors() {
		t.Errorf("base diagnostics %v, want the head's %v for the shared broken file", diags, headDiags)
	}
	// Without blob hashes, every file is read.
	plain := &hashingFS{MapFS: fleetFS("6"), opened: map[string]int{}}
	config.ParseReusing(struct{ fs.FS }{plain}, "config", config.DecodeOptions{}, head)
	if n := plain.opened["config/global/a.yaml"]; n != 1 {
		t.Errorf("without blob hashes a.yaml was read %d times, want 1", n)
	}
}
