package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Dir is a cache of one file per entry under a directory, named by the
// SHA-256 of its key and sharded by the name's first two characters. A Get
// reads one file; a Put writes one atomically (a temporary file renamed in
// place), so concurrent runs never see half an entry. Entries unused for
// TrimAge are removed, at most once per TrimInterval. Safe for concurrent
// use, within a process and across processes.
type Dir struct {
	root string
	now  func() time.Time
}

const (
	// TrimAge is how long an unused entry is kept.
	TrimAge = 5 * 24 * time.Hour
	// TrimInterval is how often a run trims the directory.
	TrimInterval = 24 * time.Hour
	// touchAfter: a used entry's modification time is refreshed when it is
	// older than this, so that trimming keeps what is in use without a
	// write per read.
	touchAfter = time.Hour
)

// OpenDir returns the cache under root (created on first Put).
func OpenDir(root string) *Dir { return &Dir{root: root, now: time.Now} }

func (d *Dir) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	name := hex.EncodeToString(sum[:])
	return filepath.Join(d.root, name[:2], name)
}

// Get returns the value stored under key.
func (d *Dir) Get(key string) ([]byte, bool) {
	p := d.path(key)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	if st, err := os.Stat(p); err == nil && d.now().Sub(st.ModTime()) > touchAfter {
		now := d.now()
		_ = os.Chtimes(p, now, now)
	}
	return b, true
}

// Put stores value under key. A cache that cannot be written only costs
// time: errors are dropped.
func (d *Dir) Put(key string, value []byte) {
	p := d.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(value)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

// Save trims the directory when the last trim is older than TrimInterval:
// entries (and leftover temporary files) unused for TrimAge go.
func (d *Dir) Save() error {
	marker := filepath.Join(d.root, "trim.txt")
	if b, err := os.ReadFile(marker); err == nil {
		if last, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && d.now().Sub(time.Unix(last, 0)) < TrimInterval {
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, err := os.Stat(d.root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	cutoff := d.now().Add(-TrimAge)
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || p == marker {
			return nil
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return os.WriteFile(marker, []byte(strconv.FormatInt(d.now().Unix(), 10)+"\n"), 0o644)
}
