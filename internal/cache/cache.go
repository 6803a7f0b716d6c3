// Package cache stores results by content-addressed key: Dir keeps each
// entry in a file of its own, as Go's build cache does, so that a run reads
// only the entries it asks for; Memory lives for one process. Entry points:
// OpenDir, NewMemory.
package cache

import "sync"

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
