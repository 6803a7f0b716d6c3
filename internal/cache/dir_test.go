package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestDirKeepsEntriesApartAndWhole(t *testing.T) {
	d := OpenDir(t.TempDir())
	if _, ok := d.Get("missing"); ok {
		t.Fatal("a missing entry was found")
	}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			d.Put(fmt.Sprint("key", i%5), []byte(fmt.Sprint("value", i%5)))
		}(i)
	}
	wg.Wait()
	for i := 0; i < 5; i++ {
		if b, ok := d.Get(fmt.Sprint("key", i)); !ok || string(b) != fmt.Sprint("value", i) {
			t.Errorf("key%d = %q, %v", i, b, ok)
		}
	}
	// A second handle on the same directory (another run) sees them.
	if b, ok := OpenDir(d.root).Get("key3"); !ok || string(b) != "value3" {
		t.Errorf("another run reads %q, %v", b, ok)
	}
	// Keys never become paths: a hostile key lands inside the directory.
	if rel, err := filepath.Rel(d.root, d.path("../../../etc/passwd")); err != nil || filepath.IsAbs(rel) || rel[0] == '.' {
		t.Errorf("a key maps outside the cache: %s", rel)
	}
	d.Put("../../../etc/passwd", []byte("x"))
	if b, ok := d.Get("../../../etc/passwd"); !ok || string(b) != "x" {
		t.Error("a key with slashes is not stored")
	}
}

// Trimming removes what no run used for TrimAge and keeps what runs use:
// a Get refreshes an old entry.
func TestDirTrimsWhatIsNotUsed(t *testing.T) {
	now := time.Now()
	d := OpenDir(t.TempDir())
	d.now = func() time.Time { return now }
	d.Put("used", []byte("u"))
	d.Put("unused", []byte("x"))
	old := now.Add(-TrimAge - time.Hour)
	for _, k := range []string{"used", "unused"} {
		os.Chtimes(d.path(k), old, old)
	}
	if _, ok := d.Get("used"); !ok {
		t.Fatal("used is gone")
	}
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Get("unused"); ok {
		t.Error("an entry unused for longer than TrimAge was kept")
	}
	if _, ok := d.Get("used"); !ok {
		t.Error("an entry in use was trimmed")
	}
	// Within TrimInterval the next run does not walk the directory again.
	d.Put("later", []byte("l"))
	os.Chtimes(d.path("later"), old, old)
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.path("later")); err != nil {
		t.Error("a second trim within the interval removed an entry")
	}
}
