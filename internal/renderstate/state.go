// Package renderstate lets an unchanged render only look, as git status
// does: after a render, Record keeps the size and modification time of
// every file the render read or wrote; the next render asks Unchanged,
// which stats the same trees and compares. Entry points: Take, Load.
package renderstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/regionctl/regionctl/internal/atomicfile"
	"github.com/regionctl/regionctl/internal/fswalk"
	"github.com/regionctl/regionctl/internal/par"
)

// Stat is what a render remembers of a file.
type Stat struct {
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime_ns"`
}

// Snapshot is the stat of every regular file under some trees of a root,
// by slash-separated path.
type Snapshot map[string]Stat

// Take stats every regular file under root's trees (missing trees have
// none) and the named single files (missing ones are left out). Anything
// but a regular file or directory (a link) fails it: the caller then
// renders, and the render refuses it with its own message.
func Take(root string, trees, files []string) (Snapshot, error) {
	s := Snapshot{}
	parts := make([]Snapshot, fswalk.Workers+1)
	for i := range parts {
		parts[i] = Snapshot{}
	}
	for _, t := range trees {
		top := filepath.Join(root, t)
		if _, err := os.Lstat(top); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := fswalk.Walk(top, 2, func(w int, rel string, e fswalk.Entry) error {
			p := path.Join(filepath.ToSlash(t), rel)
			if !e.Type.IsRegular() {
				return errors.New("not a regular file: " + filepath.Join(root, p))
			}
			parts[w][p] = Stat{e.Size, e.MTime}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, p := range parts {
		maps.Copy(s, p)
	}
	for _, f := range files {
		info, err := os.Lstat(filepath.Join(root, f))
		if err != nil {
			continue
		}
		if !info.Mode().IsRegular() {
			return nil, errors.New("not a regular file: " + f)
		}
		s[filepath.ToSlash(f)] = Stat{info.Size(), info.ModTime().UnixNano()}
	}
	return s, nil
}

// State is what the last clean render recorded.
type State struct {
	// Renderer identifies the regionctl build that rendered.
	Renderer string `json:"renderer"`
	// RacyFrom is the first modification time, in the file system's own
	// clock, that cannot prove a file unchanged: a file modified after the
	// snapshot, in the clock tick of the time recorded, keeps its size and
	// time. Files modified at or after it are held to Hashes instead.
	RacyFrom int64    `json:"racy_from_ns"`
	Files    Snapshot `json:"files"`
	// Hashes are the SHA-256 of the racy files' contents, by path.
	Hashes map[string]string `json:"hashes,omitempty"`
	// Rendered is how many files deploy/ holds.
	Rendered int `json:"rendered"`
}

// Load reads the state at path, or nil when there is none or it does not
// parse (a slow render then writes a new one).
func Load(path string) *State {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var s State
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

// Save writes the state atomically. The files are written by their own
// MarshalJSON, spliced in: json.Marshal of the whole would parse and
// copy their 28,000 entries again to check them.
func (s *State) Save(path string) error {
	rest := *s
	rest.Files = Snapshot{}
	b, err := json.Marshal(&rest)
	if err != nil {
		return err
	}
	files, err := s.Files.MarshalJSON()
	if err != nil {
		return err
	}
	empty := []byte(`"files":{}`)
	at := bytes.Index(b, empty)
	if at < 0 {
		return errors.New("render state: no files field to fill")
	}
	b = append(append(append(append(make([]byte, 0, len(b)+len(files)), b[:at]...), `"files":`...), files...), b[at+len(empty):]...)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b, ".state-*")
}

// tick is how far apart two modifications of a file may be and still get
// one time: file systems keep times in ticks of up to 2 s (FAT). One that
// keeps nanoseconds (any time off the millisecond shows it) stamps them
// from the kernel's coarse clock, whose tick is a jiffy (at most 10 ms);
// 100 ms leaves room.
func tick(s Snapshot) time.Duration {
	for _, st := range s {
		if st.MTime%int64(time.Millisecond) != 0 {
			return 100 * time.Millisecond
		}
	}
	return 2 * time.Second
}

// fsClock is how far the file system's clock (the times it stamps, which
// a network file system takes from its server) is ahead of this process's,
// as a file created in dir shows; erring low, so that times compared with
// it are taken as later than they are.
func fsClock(dir string) (time.Duration, error) {
	f, err := os.CreateTemp(dir, ".clock-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write([]byte{0}); err != nil {
		return 0, err
	}
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return info.ModTime().Sub(time.Now()), nil
}

// Record keeps at path the state of a render of root by renderer that
// began at began and wrote the tree written (deploy), with now, the
// snapshot Take took from snapped on, after the render. A file the render
// read (any outside written) modified since shortly before began may have
// changed after the render read it: then nothing is recorded, and the
// next render renders. Files of written modified too close to the
// snapshot for their time to prove anything are hashed, so that the
// render right after one that wrote files need not render again; known
// holds the SHA-256 sums of such files the caller wrote or read
// as now has them, by path relative to written (as deploytree's Sums give
// them), which are not read again.
func Record(path, root, renderer string, rendered int, began, snapped time.Time, now Snapshot, written string, known map[string][sha256.Size]byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	ahead, err := fsClock(filepath.Dir(path))
	if err != nil {
		return err
	}
	window := tick(now)
	readFrom := began.Add(ahead).Add(-window).UnixNano()
	racyFrom := snapped.Add(ahead).Add(-window).UnixNano()
	st := &State{Renderer: renderer, RacyFrom: racyFrom, Files: now, Rendered: rendered}
	prefix := written + "/"
	for p, f := range now {
		if !strings.HasPrefix(p, prefix) {
			if f.MTime >= readFrom {
				return errRacyInput
			}
			continue
		}
		if f.MTime < racyFrom {
			continue
		}
		var sum string
		if k, ok := known[p[len(prefix):]]; ok {
			sum = hex.EncodeToString(k[:])
		} else {
			var err error
			if sum, err = hashFile(root, p, f); err != nil {
				return err
			}
		}
		if st.Hashes == nil {
			st.Hashes = map[string]string{}
		}
		st.Hashes[p] = sum
	}
	return st.Save(path)
}

var errRacyInput = errors.New("an input was modified while the render ran")

// hashFile is the SHA-256 of root/p, which must still be as st says (a
// file that changes while it is read proves nothing).
func hashFile(root, p string, st Stat) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		return "", err
	}
	info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() || (Stat{info.Size(), info.ModTime().UnixNano()}) != st || int64(len(b)) != st.Size {
		return "", errors.New("changed while it was read: " + p)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b)), nil
}

// Unchanged reports whether now, taken of root by the same renderer, is
// the recorded snapshot: the same files with the same sizes and times, and
// those modified too close to the snapshot to tell by their time with the
// contents recorded.
func (s *State) Unchanged(renderer, root string, now Snapshot) bool {
	if s == nil || s.Renderer != renderer || len(now) != len(s.Files) || s.RacyFrom == 0 {
		return false
	}
	var racy []string
	for p, st := range now {
		old, ok := s.Files[p]
		if !ok || old != st {
			return false
		}
		if st.MTime < s.RacyFrom {
			continue
		}
		if _, ok := s.Hashes[p]; !ok {
			return false
		}
		racy = append(racy, p)
	}
	// The files too recent to prove anything by their time are read and
	// hashed on every core: after a render that wrote 25,000 files, the
	// last few thousand of them.
	var differs atomic.Bool
	par.Do(len(racy), func(i int) {
		if differs.Load() {
			return
		}
		p := racy[i]
		if got, err := hashFile(root, p, now[p]); err != nil || got != s.Hashes[p] {
			differs.Store(true)
		}
	})
	return !differs.Load()
}

// MarshalJSON writes the snapshot as encoding/json writes the map (each
// {"size","mtime_ns"}), without its reflection and in the map's own order,
// not sorted: the record of a 2,200-cluster render holds 28,000 files, and
// a fresh clone's first render, which only looks, spent a tenth of its time
// writing them; sorting their paths took as long again, at the end of the
// render, on one core. TestSnapshotJSONIsEncodingJSONs holds it to
// encoding/json's text, read back.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	size := 2
	for k := range s {
		size += len(k) + 48
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	first := true
	for k, st := range s {
		if !first {
			b = append(b, ',')
		}
		first = false
		if plainJSON(k) {
			b = append(append(append(b, '"'), k...), '"')
		} else {
			kb, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			b = append(b, kb...)
		}
		b = append(b, `:{"size":`...)
		b = strconv.AppendInt(b, st.Size, 10)
		b = append(b, `,"mtime_ns":`...)
		b = strconv.AppendInt(b, st.MTime, 10)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// plainJSON says s is written in JSON as it is, between quotes: printable
// ASCII that encoding/json does not escape (it escapes ", \ and, for
// HTML, <, > and &).
func plainJSON(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
