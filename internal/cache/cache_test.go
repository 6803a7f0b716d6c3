package cache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A value stored in one run is read in the next; a value stored and read in
// the same run comes back from the spill file; nothing is written when
// nothing was stored.
func TestFileKeepsValuesAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c", "cache")
	c := Open(path)
	if _, ok := c.Get("a"); ok {
		t.Fatal("an empty cache had a")
	}
	c.Put("a", []byte("alpha"))
	c.Put("b", []byte{})
	c.Put("a", []byte("alpha, again"))
	if v, ok := c.Get("a"); !ok || string(v) != "alpha, again" {
		t.Fatalf("a = %q, %v in the run that stored it", v, ok)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path)
	for k, want := range map[string]string{"a": "alpha, again", "b": ""} {
		if v, ok := c.Get(k); !ok || string(v) != want {
			t.Errorf("%s = %q, %v after a save; want %q", k, v, ok, want)
		}
	}
	info, _ := os.Stat(path)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(path); !again.ModTime().Equal(info.ModTime()) || again.Size() != info.Size() {
		t.Error("a run that stored nothing rewrote the cache")
	}
	// A third run adds one value; the two older ones stay.
	c = Open(path)
	c.Put("c", []byte("gamma"))
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path)
	for k, want := range map[string]string{"a": "alpha, again", "b": "", "c": "gamma"} {
		if v, ok := c.Get(k); !ok || string(v) != want {
			t.Errorf("%s = %q, %v after the third run; want %q", k, v, ok, want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) > 0 {
		t.Errorf("temporary files left beside the cache: %v", left)
	}
}

// A file of another format, a cut file and garbage are an empty cache, and
// the next save replaces them.
func TestFileIgnoresWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	c := Open(good)
	for i := 0; i < 50; i++ {
		c.Put(fmt.Sprint("k", i), bytes.Repeat([]byte{byte(i)}, i))
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"gob map of the old format": append([]byte{0x0e, 0xff, 0x81}, whole[3:]...),
		"cut":                       whole[:len(whole)-5],
		"cut in the values":         whole[:len(whole)/2],
		"empty":                     {},
		"trailer pointing past the end": func() []byte {
			b := append([]byte(nil), whole...)
			b[len(b)-16] ^= 0x7f
			return b
		}(),
	} {
		p := filepath.Join(dir, "bad")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		c := Open(p)
		for i := 0; i < 50; i++ {
			if v, ok := c.Get(fmt.Sprint("k", i)); ok && !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, i)) {
				t.Errorf("%s: k%d read as %v", name, i, v)
			}
		}
		c.Put("new", []byte("v"))
		if err := c.Save(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v, ok := Open(p).Get("new"); !ok || string(v) != "v" {
			t.Errorf("%s: the save after it did not take", name)
		}
	}
}

// Gets and Puts from many goroutines (the render's workers) see every value
// stored.
func TestFileConcurrentUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache")
	c := Open(path)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprintf("%d/%d", w, i)
				c.Put(k, []byte(k))
				if v, ok := c.Get(k); !ok || string(v) != k {
					t.Errorf("%s read back as %q, %v", k, v, ok)
				}
			}
		}(w)
	}
	wg.Wait()
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path)
	for w := 0; w < 8; w++ {
		for i := 0; i < 200; i++ {
			k := fmt.Sprintf("%d/%d", w, i)
			if v, ok := c.Get(k); !ok || string(v) != k {
				t.Fatalf("%s = %q, %v after the save", k, v, ok)
			}
		}
	}
}

// Values are not held in memory: a stored value lives in the spill file,
// and reads back from it.
func TestFileSpillsValues(t *testing.T) {
	c := Open(filepath.Join(t.TempDir(), "cache"))
	defer c.Save()
	big := bytes.Repeat([]byte("x"), 8<<20)
	c.Put("big", big)
	if c.used["big"].spill != true || c.size != int64(len(big)) {
		t.Fatalf("the value was not spilled: %+v", c.used["big"])
	}
	if v, ok := c.Get("big"); !ok || !bytes.Equal(v, big) {
		t.Fatal("the spilled value does not read back")
	}
}

// A run that uses more entries than the bound keeps them all, and the file
// it saves opens again.
func TestFileOverTheBoundReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache")
	c := Open(path)
	for i := 0; i <= maxEntries; i++ {
		c.Put(fmt.Sprint(i), []byte{byte(i)})
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path)
	defer c.Save()
	if v, ok := c.Get(fmt.Sprint(maxEntries)); !ok || len(v) != 1 || v[0] != byte(maxEntries%256) {
		t.Fatalf("a cache of %d entries did not open again", maxEntries+1)
	}
}

// Small values are gathered and written to the spill file together, and
// read back from memory until they are.
func TestFileGathersSmallValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache")
	c := Open(path)
	for i := 0; i < 1000; i++ {
		c.Put(fmt.Sprint(i), []byte(fmt.Sprint("v", i)))
	}
	if c.written != 0 {
		t.Fatalf("%d bytes of small values written one by one", c.written)
	}
	if v, ok := c.Get("999"); !ok || string(v) != "v999" {
		t.Fatalf("a gathered value read back as %q, %v", v, ok)
	}
	big := bytes.Repeat([]byte("x"), spillBuffer)
	c.Put("big", big)
	if c.written != c.size || len(c.pending) != 0 {
		t.Fatalf("%d of %d bytes written past the buffer's size", c.written, c.size)
	}
	if v, ok := c.Get("5"); !ok || string(v) != "v5" {
		t.Fatalf("a written value read back as %q, %v", v, ok)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path)
	defer c.Save()
	for _, k := range []string{"0", "999", "big"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s was not saved", k)
		}
	}
}

// When the spill file cannot be written, the values that were to go in it
// are forgotten rather than read back as whatever the file holds.
func TestFileForgetsValuesItCouldNotSpill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache")
	c := Open(path)
	c.Put("first", []byte("1"))
	c.spill.Close()
	c.Put("big", bytes.Repeat([]byte("x"), spillBuffer))
	c.Put("after", []byte("3"))
	for _, k := range []string{"first", "big", "after"} {
		if v, ok := c.Get(k); ok {
			t.Errorf("%s read back as %d bytes from a spill file that was never written", k, len(v))
		}
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path)
	defer c.Save()
	if _, ok := c.Get("first"); ok {
		t.Error("a value that was never written was saved")
	}
}

// BenchmarkSave is the end of a cold review of the 2,200-cluster fleet
// (1,200 values, 6 MB, into an empty cache) and of a warm one (200 new
// values beside 1,000 of 20,000 older ones read).
func BenchmarkSave(b *testing.B) {
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 3000+i%5000) }
	b.Run("cold", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			path := filepath.Join(dir, fmt.Sprint(i))
			c := Open(path)
			for k := range 1200 {
				c.Put(fmt.Sprint(k), value(k))
			}
			b.StartTimer()
			if err := c.Save(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		dir := b.TempDir()
		base := filepath.Join(dir, "base")
		c := Open(base)
		for k := range 20000 {
			c.Put(fmt.Sprint(k), value(k))
		}
		if err := c.Save(); err != nil {
			b.Fatal(err)
		}
		orig, err := os.ReadFile(base)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			path := filepath.Join(dir, fmt.Sprint(i))
			if err := os.WriteFile(path, orig, 0o600); err != nil {
				b.Fatal(err)
			}
			c := Open(path)
			for k := range 1000 {
				c.Get(fmt.Sprint(k * 7))
			}
			for k := range 200 {
				c.Put(fmt.Sprint("new", k), value(k))
			}
			b.StartTimer()
			if err := c.Save(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A save copies the spill file and the old values whole, or, past the
// bound, the old values this run used one by one: each way, every value
// kept reads back as stored, a value stored again reads as its last, and
// past the bound the old values this run did not use are gone.
func TestSaveKeepsEveryValueItIndexes(t *testing.T) {
	value := func(k string) []byte { return bytes.Repeat([]byte(k), 1+len(k)%7) }
	for _, over := range []bool{false, true} {
		t.Run(fmt.Sprint("over the bound ", over), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache")
			c := Open(path)
			old := 50
			if over {
				old = maxEntries
			}
			for i := range old {
				c.Put(fmt.Sprint("old", i), value(fmt.Sprint("old", i)))
			}
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			c = Open(path)
			for _, i := range []int{0, 7, old - 1} {
				k := fmt.Sprint("old", i)
				if v, ok := c.Get(k); !ok || !bytes.Equal(v, value(k)) {
					t.Fatalf("%s = %q, %v", k, v, ok)
				}
			}
			c.Put("old3", []byte("stored again"))
			for i := range 40 {
				c.Put(fmt.Sprint("new", i), value(fmt.Sprint("new", i)))
			}
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			c = Open(path)
			defer c.Save()
			want := map[string][]byte{"old3": []byte("stored again")}
			for _, i := range []int{0, 7, old - 1} {
				want[fmt.Sprint("old", i)] = value(fmt.Sprint("old", i))
			}
			for i := range 40 {
				want[fmt.Sprint("new", i)] = value(fmt.Sprint("new", i))
			}
			for k, w := range want {
				if v, ok := c.Get(k); !ok || !bytes.Equal(v, w) {
					t.Errorf("%s = %q, %v after the second save; want %q", k, v, ok, w)
				}
			}
			k := fmt.Sprint("old", 20)
			if v, ok := c.Get(k); ok == over || (ok && !bytes.Equal(v, value(k))) {
				t.Errorf("%s, unused by the second run, = %q, %v (over the bound: %v)", k, v, ok, over)
			}
		})
	}
}

// An old file cut short while a run had it open is not copied into the
// next one: the save fails and the file is left as it was.
func TestSaveRefusesAnOldFileCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache")
	c := Open(path)
	for i := range 100 {
		c.Put(fmt.Sprint(i), bytes.Repeat([]byte{byte(i)}, 100))
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path)
	if err := os.Truncate(path, 5000); err != nil {
		t.Fatal(err)
	}
	c.Put("new", []byte("value"))
	if err := c.Save(); err == nil {
		t.Error("a save copied an old file cut short")
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 5000 {
		t.Errorf("the cut file was replaced: %v, %v", info, err)
	}
}

// A value stored again in every run leaves its older bytes unindexed: the
// file does not carry them from save to save.
func TestSaveDoesNotCarryWhatItNoLongerIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache")
	c := Open(path)
	for i := range 20 {
		c.Put(fmt.Sprint("kept", i), bytes.Repeat([]byte{byte(i)}, 1000))
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Stat(path)
	for run := range 30 {
		c = Open(path)
		c.Put("again", bytes.Repeat([]byte{byte(run)}, 4000))
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	c = Open(path)
	defer c.Save()
	if v, ok := c.Get("again"); !ok || len(v) != 4000 || v[0] != 29 {
		t.Fatalf("again = %d bytes, %v: not the last run's", len(v), ok)
	}
	for i := range 20 {
		if v, ok := c.Get(fmt.Sprint("kept", i)); !ok || !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, 1000)) {
			t.Fatalf("kept%d lost after 30 saves", i)
		}
	}
	// 20,000 bytes kept and 4,000 of the last run's, with at most a
	// quarter more unindexed.
	if last, _ := os.Stat(path); last.Size() > first.Size()+4000+(first.Size()+4000)/3+200 {
		t.Errorf("the file grew from %d to %d bytes over 30 saves of one value stored again", first.Size(), last.Size())
	}
}
