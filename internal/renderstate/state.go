// Package renderstate lets an unchanged render only look, as git status
// does: after a render, Record keeps the size and modification time of
// every file the render read or wrote; the next render asks Unchanged,
// which stats the same trees and compares. Entry points: Take, Load.
package renderstate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
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
	for _, t := range trees {
		err := filepath.WalkDir(filepath.Join(root, t), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				return errors.New("not a regular file: " + p)
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			s[filepath.ToSlash(rel)] = Stat{info.Size(), info.ModTime().UnixNano()}
			return nil
		})
		if err != nil {
			return nil, err
		}
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
	// Taken is when the snapshot was taken: a file modified at or after it
	// (in the same clock tick) cannot be told unchanged by its time.
	Taken int64    `json:"taken_ns"`
	Files Snapshot `json:"files"`
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

// Save writes the state atomically.
func (s *State) Save(path string) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// racyWindow is how close to the snapshot a modification time may be and
// still prove nothing: file systems keep times in ticks of up to a few
// milliseconds (2 s on FAT), so a file written just after the snapshot can
// carry its time.
const racyWindow = 2 * time.Second

// Unchanged reports whether now, taken by the same renderer, is the
// recorded snapshot: the same files with the same sizes and times, none of
// them modified too close to the snapshot to tell.
func (s *State) Unchanged(renderer string, now Snapshot) bool {
	if s == nil || s.Renderer != renderer || len(now) != len(s.Files) {
		return false
	}
	racy := s.Taken - int64(racyWindow)
	for p, st := range now {
		old, ok := s.Files[p]
		if !ok || old != st || st.MTime >= racy {
			return false
		}
	}
	return true
}
