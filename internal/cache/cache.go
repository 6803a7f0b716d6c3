// Package cache is a content-addressed result store kept in one file: it is
// loaded whole, consulted by key, and written back atomically only when
// something was added. Entry point: Open.
package cache

import (
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// maxEntries bounds the file; when exceeded, the entries not used by this
// run are dropped.
const maxEntries = 200_000

// File is a cache backed by one file. It is safe for concurrent use.
type File struct {
	path  string
	mu    sync.Mutex
	old   map[string][]byte
	used  map[string][]byte
	dirty bool
}

// Open loads the cache at path; a missing or unreadable file starts empty.
func Open(path string) *File {
	c := &File{path: path, old: map[string][]byte{}, used: map[string][]byte{}}
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		if gob.NewDecoder(f).Decode(&c.old) != nil {
			c.old = map[string][]byte{}
		}
	}
	return c
}

// Get returns the value stored under key.
func (c *File) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.used[key]; ok {
		return v, true
	}
	v, ok := c.old[key]
	if ok {
		c.used[key] = v
	}
	return v, ok
}

// Put stores value under key.
func (c *File) Put(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used[key] = value
	c.dirty = true
}

// Save writes the cache back when it changed: the entries used by this run,
// plus older ones while the file stays under its bound.
func (c *File) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	out := c.used
	if len(c.used)+len(c.old) <= maxEntries {
		out = make(map[string][]byte, len(c.used)+len(c.old))
		for k, v := range c.old {
			out[k] = v
		}
		for k, v := range c.used {
			out[k] = v
		}
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("creating cache directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".cache-*")
	if err != nil {
		return fmt.Errorf("writing cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := gob.NewEncoder(tmp).Encode(out); err != nil {
		tmp.Close()
		return fmt.Errorf("writing cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("writing cache: %w", err)
	}
	c.dirty = false
	return nil
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
