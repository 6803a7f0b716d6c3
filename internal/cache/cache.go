// Package cache is a content-addressed result store kept in one file. The
// file holds the values one after another and, at its end, an index of
// their keys and places: opening it reads only the index, and a value is
// read from the file when it is asked for. Values stored during a run are
// appended to a spill file beside it, not kept in memory, and the store is
// written back (the entries this run used, then older ones while under a
// bound) atomically, by rename, only when something was added. Memory use
// is one index entry per key, whatever the values weigh, and the values
// not yet written to the spill file (about spillBuffer bytes).
// Entry point: Open.
package cache

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// maxEntries bounds the file; when exceeded, the entries not used by this
// run are dropped.
const maxEntries = 200_000

// magic heads the file; a file without it (an older format) is ignored.
const magic = "regionctl-cache 2\n"

// trailerSize is the length of the file's end: the index's offset and its
// entry count (a cut file fails the checks of readIndex).
const trailerSize = 8 + 8

// maxIndex bounds what Open reads as an index.
const maxIndex = 64 << 20

// spillBuffer is how many bytes of stored values are gathered before they
// are written to the spill file in one write: a render stores thousands of
// small values, and a write each was a system call each.
const spillBuffer = 256 << 10

// File is a cache backed by one file. It is safe for concurrent use.
type File struct {
	path  string
	mu    sync.Mutex
	old   *os.File       // the file as opened, nil when it was absent or unreadable
	oldAt map[string]loc // the old file's entries
	// oldEnd is where the old file's values end (its index begins).
	oldEnd int64
	spill  *os.File // this run's values
	name   string   // the spill file's name, for systems that cannot remove an open file
	size   int64    // the spill file's length, pending included
	// pending are the values stored since the last write to the spill
	// file, which they will take from offset written on.
	pending []byte
	written int64
	used    map[string]loc // the entries this run read or stored
	dirty   bool
	err     error // the first spill failure: nothing more is stored
}

// loc is where a value lives: in the old file or the spill file.
type loc struct {
	spill    bool
	off, len int64
}

// Open opens the cache at path; a missing, unreadable or foreign file
// starts empty.
func Open(path string) *File {
	c := &File{path: path, oldAt: map[string]loc{}, used: map[string]loc{}}
	f, err := os.Open(path)
	if err != nil {
		return c
	}
	if at, end, err := readIndex(f); err == nil {
		c.old, c.oldAt, c.oldEnd = f, at, end
	} else {
		f.Close()
	}
	return c
}

// readIndex reads the index at the end of f and checks each entry lies
// within the values, which end where the index begins (returned).
func readIndex(f *os.File) (map[string]loc, int64, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := info.Size()
	head := make([]byte, len(magic))
	if size < int64(len(magic))+trailerSize {
		return nil, 0, errors.New("cache: short file")
	}
	if _, err := f.ReadAt(head, 0); err != nil || string(head) != magic {
		return nil, 0, errors.New("cache: not this format")
	}
	var tr [trailerSize]byte
	if _, err := f.ReadAt(tr[:], size-trailerSize); err != nil {
		return nil, 0, err
	}
	at, n := int64(binary.LittleEndian.Uint64(tr[:8])), int64(binary.LittleEndian.Uint64(tr[8:]))
	end := size - trailerSize
	if at < int64(len(magic)) || at > end || end-at > maxIndex || n < 0 || n > end-at {
		return nil, 0, errors.New("cache: bad trailer")
	}
	buf := make([]byte, end-at)
	if _, err := f.ReadAt(buf, at); err != nil {
		return nil, 0, err
	}
	r := bytes.NewReader(buf)
	out := make(map[string]loc, n)
	for i := int64(0); i < n; i++ {
		klen, err := binary.ReadUvarint(r)
		if err != nil || klen > uint64(r.Len()) {
			return nil, 0, errors.New("cache: bad index")
		}
		key := make([]byte, klen)
		if _, err := io.ReadFull(r, key); err != nil {
			return nil, 0, err
		}
		off, err1 := binary.ReadUvarint(r)
		vlen, err2 := binary.ReadUvarint(r)
		if err1 != nil || err2 != nil || off < uint64(len(magic)) || off > uint64(at) || vlen > uint64(at)-off {
			return nil, 0, errors.New("cache: bad index")
		}
		out[string(key)] = loc{off: int64(off), len: int64(vlen)}
	}
	if r.Len() != 0 {
		return nil, 0, errors.New("cache: bad index")
	}
	return out, at, nil
}

// Get returns the value stored under key.
func (c *File) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	l, ok := c.used[key]
	if !ok {
		if l, ok = c.oldAt[key]; ok {
			c.used[key] = l
		}
	}
	if ok && l.spill && l.off >= c.written {
		v := bytes.Clone(c.pending[l.off-c.written : l.off-c.written+l.len])
		c.mu.Unlock()
		return v, true
	}
	f := c.fileOf(l)
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	v, err := read(f, l)
	return v, err == nil
}

// fileOf is the file holding l; c.mu is held.
func (c *File) fileOf(l loc) *os.File {
	if l.spill {
		return c.spill
	}
	return c.old
}

// read reads a value (ReadAt may run concurrently with other reads).
func read(f *os.File, l loc) ([]byte, error) {
	if f == nil {
		return nil, errors.New("cache: closed")
	}
	v := make([]byte, l.len)
	_, err := f.ReadAt(v, l.off)
	return v, err
}

// Put stores value under key: appended to the spill file, not kept (past
// the spillBuffer bytes gathered for the next write).
func (c *File) Put(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	if c.spill == nil {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
			c.err = err
			return
		}
		f, err := os.CreateTemp(filepath.Dir(c.path), ".spill-*")
		if err != nil {
			c.err = err
			return
		}
		// The name is not needed past here; where the system allows, the
		// file goes with the process even if it is killed.
		if os.Remove(f.Name()) != nil {
			c.name = f.Name()
		}
		c.spill = f
	}
	c.pending = append(c.pending, value...)
	c.used[key] = loc{spill: true, off: c.size, len: int64(len(value))}
	c.size += int64(len(value))
	c.dirty = true
	if len(c.pending) >= spillBuffer {
		c.flush()
	}
}

// flush writes the pending values to the spill file; c.mu is held. When
// the write fails, the values it held are forgotten and nothing more is
// stored.
func (c *File) flush() {
	if len(c.pending) == 0 || c.err != nil {
		return
	}
	if _, err := c.spill.WriteAt(c.pending, c.written); err != nil {
		c.err = err
		for k, l := range c.used {
			if l.spill && l.off >= c.written {
				delete(c.used, k)
			}
		}
		c.size = c.written
	} else {
		c.written = c.size
	}
	c.pending = c.pending[:0]
	if cap(c.pending) > 2*spillBuffer {
		c.pending = nil // a large value's buffer is not kept
	}
}

// Save writes the cache back when it changed: the entries used by this
// run, plus older ones while the file stays under its bound. The files it
// read are closed: Save ends the cache's use.
func (c *File) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.close()
	c.flush()
	if !c.dirty {
		return nil
	}
	keys := make([]string, 0, len(c.used)+len(c.oldAt))
	for k := range c.used {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	keepOld := len(c.used)+len(c.oldAt) <= maxEntries
	if keepOld {
		var older []string
		for k := range c.oldAt {
			if _, ok := c.used[k]; !ok {
				older = append(older, k)
			}
		}
		sort.Strings(older)
		keys = append(keys, older...)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".cache-*")
	if err != nil {
		return fmt.Errorf("writing cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := c.writeTo(tmp, keys, keepOld); err != nil {
		tmp.Close()
		return fmt.Errorf("writing cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing cache: %w", err)
	}
	c.close() // some systems do not rename over an open file
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("writing cache: %w", err)
	}
	c.dirty = false
	return nil
}

// writeTo writes the values of keys, then the index and the trailer. This
// run's spill file is copied whole, and so are the old file's values when
// every old entry is kept (keepOld): a copy the system makes, where one
// read and write for each value cost 0.2 s for 20,000 values
// (BenchmarkSave). A file whose values are less than three quarters
// indexed (a value stored again leaves its old bytes unindexed, and whole
// copies would carry them from save to save) is copied value by value
// instead, as the old values are past the bound.
func (c *File) writeTo(f *os.File, keys []string, keepOld bool) error {
	var spillLive, oldLive int64
	for _, k := range keys {
		if l := c.loc(k); l.spill {
			spillLive += l.len
		} else {
			oldLive += l.len
		}
	}
	oldValues := c.oldEnd - int64(len(magic))
	wholeSpill := c.spill != nil && c.written > 0 && 4*spillLive >= 3*c.written
	wholeOld := c.old != nil && keepOld && 4*oldLive >= 3*oldValues
	if _, err := f.WriteString(magic); err != nil {
		return err
	}
	off := int64(len(magic))
	spillAt := off
	if wholeSpill {
		if err := copyRange(f, c.spill, 0, c.written); err != nil {
			return err
		}
		off += c.written
	}
	oldAt := off
	if wholeOld {
		if err := copyRange(f, c.old, int64(len(magic)), oldValues); err != nil {
			return err
		}
		off += oldValues
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var index []byte
	n := 0
	for _, k := range keys {
		l := c.loc(k)
		var at int64
		switch {
		case l.spill && l.off+l.len > c.written:
			continue // never written: a failed spill
		case l.spill && wholeSpill:
			at = spillAt + l.off
		case !l.spill && wholeOld:
			at = oldAt + l.off - int64(len(magic))
		default:
			v, err := read(c.fileOf(l), l)
			if err != nil {
				continue // an entry that cannot be read is left out
			}
			if _, err := w.Write(v); err != nil {
				return err
			}
			at = off
			off += int64(len(v))
		}
		index = binary.AppendUvarint(index, uint64(len(k)))
		index = append(index, k...)
		index = binary.AppendUvarint(index, uint64(at))
		index = binary.AppendUvarint(index, uint64(l.len))
		n++
	}
	if _, err := w.Write(index); err != nil {
		return err
	}
	var tr [trailerSize]byte
	binary.LittleEndian.PutUint64(tr[:8], uint64(off))
	binary.LittleEndian.PutUint64(tr[8:], uint64(n))
	if _, err := w.Write(tr[:]); err != nil {
		return err
	}
	return w.Flush()
}

// loc is where the value kept under k lives; c.mu is held.
func (c *File) loc(k string) loc {
	if l, ok := c.used[k]; ok {
		return l
	}
	return c.oldAt[k]
}

// copyRange appends n bytes of src from offset off to dst: on Linux by
// copy_file_range, in the kernel. A source shorter than that fails it.
func copyRange(dst, src *os.File, off, n int64) error {
	if _, err := src.Seek(off, io.SeekStart); err != nil {
		return err
	}
	copied, err := io.Copy(dst, io.LimitReader(src, n))
	if err == nil && copied != n {
		err = fmt.Errorf("cache: %s ends %d bytes short", src.Name(), n-copied)
	}
	return err
}

// close closes the files the cache reads; later reads miss.
func (c *File) close() {
	if c.old != nil {
		c.old.Close()
		c.old = nil
	}
	if c.spill != nil {
		c.spill.Close()
		c.spill = nil
		if c.name != "" {
			os.Remove(c.name)
		}
	}
}

// Memory is a cache that lives for one process: it lets the two sides of a
// review share results even when the file cache is off.
type Memory struct {
	mu sync.Mutex
	m  map[string][]byte
}

// NewMemory returns an empty in-memory cache.
func NewMemory() *Memory { return &Memory{m: map[string][]byte{}} }

// Get returns the value stored under key.
func (c *Memory) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

// Put stores value under key.
func (c *Memory) Put(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = value
}
