package gitbase

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/regionctl/regionctl/internal/fswalk"
	"github.com/regionctl/regionctl/internal/par"
)

// notAFile stands for a directory entry git cannot hold as a blob (a
// FIFO, a socket, a device): no rendered file has this hash, so it always
// differs.
var notAFile = plumbing.NewHash(strings.Repeat("f", 40))

// WorktreeHashes returns the git blob hash of each entry under dir (a
// directory of root, which is in r's working tree), keyed by its path
// relative to dir, the way `git status` finds them: a file whose size and
// modification time are what the index recorded, and not racily close to
// the index's own time, takes the index's hash without being read; any
// other file is read and hashed. Symbolic links are hashed as git stores
// them (their target) and never followed. A missing dir holds nothing.
func (r *Repo) WorktreeHashes(root, dir string) (map[string]plumbing.Hash, error) {
	out, _, err := r.WorktreeStats(root, dir)
	return out, err
}

// FileStat is a regular file's size and modification time (Unix
// nanoseconds), as a walk found them.
type FileStat = fswalk.Stat

// WorktreeStats is WorktreeHashes, with the size and modification time of
// each regular file as the walk found them: a caller that records them
// (the render record) need not walk the tree again. The stats are nil when
// dir holds anything but regular files and directories.
func (r *Repo) WorktreeStats(root, dir string) (map[string]plumbing.Hash, map[string]FileStat, error) {
	top := filepath.Join(root, dir)
	if _, err := os.Lstat(top); errors.Is(err, fs.ErrNotExist) {
		return map[string]plumbing.Hash{}, map[string]FileStat{}, nil
	}
	known, stamp := r.indexEntries(top)
	parts := make([]walked, fswalk.Workers+1)
	for i := range parts {
		// Room for a fair share of what the index lists.
		hint := len(known)/len(parts) + 16
		parts[i] = walked{hashes: make([]walkedHash, 0, hint), stats: make([]walkedStat, 0, hint)}
	}
	err := fswalk.Walk(top, 2, func(w int, rel string, e fswalk.Entry) error {
		return parts[w].add(top, rel, e, known, stamp)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	// One map of each, made to size: the walkers' finds are lists, not
	// maps merged into another (a fresh clone's deploy/ holds 25,000).
	n, files, irregular := 0, 0, false
	for _, w := range parts {
		n += len(w.hashes) + len(w.toRead)
		files += len(w.stats)
		irregular = irregular || w.irregular
	}
	out := make(map[string]plumbing.Hash, n)
	var stats map[string]FileStat
	if !irregular {
		stats = make(map[string]FileStat, files)
	}
	var toRead []string
	for _, w := range parts {
		for _, h := range w.hashes {
			out[h.rel] = h.hash
		}
		if stats != nil {
			for _, st := range w.stats {
				stats[st.rel] = st.stat
			}
		}
		toRead = append(toRead, w.toRead...)
	}
	// The files the index cannot vouch for are read by a few readers at
	// once: on a fresh checkout that can be all of them.
	var mu sync.Mutex
	var firstErr error
	par.Workers(8, len(toRead), func(_, i int) {
		rel := toRead[i]
		b, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(rel)))
		var h plumbing.Hash
		if err == nil {
			h = plumbing.ComputeHash(plumbing.BlobObject, b)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("reading %s: %w", filepath.Join(dir, rel), err)
		} else if err == nil {
			out[rel] = h
		}
	})
	if firstErr != nil {
		return nil, nil, firstErr
	}
	return out, stats, nil
}

// walked is what one walker found: each entry's hash where the index
// vouches for it (or it is not a regular file), the files to read, the
// regular files' stats, and whether anything but regular files and
// directories was found (then no stats are given).
type walked struct {
	hashes    []walkedHash
	stats     []walkedStat
	toRead    []string
	irregular bool
}

type walkedHash struct {
	rel  string
	hash plumbing.Hash
}

type walkedStat struct {
	rel  string
	stat FileStat
}

// add takes the entry d at rel (slash-separated, under top) as git status
// would: a link by its target, a file by the index's hash when its size and
// time are the index's and older than the index, else to be read.
func (w *walked) add(top, rel string, e fswalk.Entry, known map[string]*index.Entry, stamp time.Time) error {
	switch {
	case e.Type&fs.ModeSymlink != 0:
		w.irregular = true
		target, err := os.Readlink(filepath.Join(top, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		w.hashes = append(w.hashes, walkedHash{rel, plumbing.ComputeHash(plumbing.BlobObject, []byte(filepath.ToSlash(target)))})
	case !e.Type.IsRegular():
		w.irregular = true
		w.hashes = append(w.hashes, walkedHash{rel, notAFile})
	default:
		w.stats = append(w.stats, walkedStat{rel, FileStat{Size: e.Size, MTime: e.MTime}})
		if ie, ok := known[rel]; ok && int64(ie.Size) == e.Size {
			if t := e.ModTime(); ie.ModifiedAt.Equal(t) && t.Before(stamp) {
				w.hashes = append(w.hashes, walkedHash{rel, ie.Hash})
				return nil
			}
		}
		w.toRead = append(w.toRead, rel)
	}
	return nil
}

// indexEntries are the index's merged entries under the directory top,
// keyed by their path relative to it, and the time the index was written.
// Without a readable index there are none, and every file is read.
func (r *Repo) indexEntries(top string) (map[string]*index.Entry, time.Time) {
	r.index.mu.Lock()
	if !r.index.read {
		r.readIndex()
		r.index.read = true
	}
	idx, stamp, work := r.index.idx, r.index.stamp, r.index.work
	r.index.mu.Unlock()
	if idx == nil {
		return nil, time.Time{}
	}
	abs, err := filepath.Abs(top)
	if err != nil {
		return nil, time.Time{}
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, time.Time{}
	}
	rel, err := filepath.Rel(work, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, time.Time{}
	}
	under := entriesUnder(idx, filepath.ToSlash(rel)+"/")
	entries := make(map[string]*index.Entry, len(under))
	// Stage 0 is a merged entry as git writes it (go-git's index.Merged
	// constant is 1, which its own decoder never produces).
	for _, e := range under {
		if e.Stage == 0 && !e.SkipWorktree && !e.IntentToAdd {
			entries[e.Name[len(rel)+1:]] = e
		}
	}
	return entries, stamp
}

// ReleaseIndex lets go the git index WorktreeHashes and Changed read once
// and share: a large fleet's holds a quarter of a million entries. A later
// call reads it again.
func (r *Repo) ReleaseIndex() {
	r.index.mu.Lock()
	r.index.read, r.index.idx, r.index.trees = false, nil, nil
	r.index.mu.Unlock()
}

// readIndex reads the git index and the time it was written, with
// r.index.mu held; it leaves the index nil when it cannot be read.
func (r *Repo) readIndex() {
	wt, err := r.repo.Worktree()
	if err != nil {
		return
	}
	st, ok := r.repo.Storer.(*filesystem.Storage)
	if !ok {
		return
	}
	work, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return
	}
	// The time and the bytes of one open file: a git that rewrites the
	// index meanwhile replaces it by a rename, not under this handle.
	f, err := os.Open(filepath.Join(st.Filesystem().Root(), "index"))
	if err != nil {
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return
	}
	idx, err := decodeShared(f, info)
	if err != nil {
		return
	}
	r.index.idx, r.index.stamp, r.index.work = idx, info.ModTime(), work
}

// decoded holds each index this process decoded, by its file's path, size
// and time, for as long as a handle still holds it: a review's stages each
// read the checkout's index through a handle of their own, and a second
// decode of a large fleet's (a quarter of a million entries) is as dear as
// the first. The lock is held while decoding, so that a handle asking
// meanwhile waits for the index rather than decoding it too. Handles only
// read an index once decoded.
var decoded struct {
	sync.Mutex
	m map[decodedKey]weak.Pointer[index.Index]
}

type decodedKey struct {
	path  string
	size  int64
	mtime int64
}

// decodeShared is decodeIndex of the open index file f (info, its
// stat), or the index a handle of this process decoded from the same file
// unchanged.
func decodeShared(f *os.File, info fs.FileInfo) (*index.Index, error) {
	key := decodedKey{f.Name(), info.Size(), info.ModTime().UnixNano()}
	decoded.Lock()
	defer decoded.Unlock()
	if idx := decoded.m[key].Value(); idx != nil {
		return idx, nil
	}
	// Read into a buffer of the size stat'ed: io.ReadAll grows its own
	// from 512 bytes, copying what it read at each step, a few tens of
	// milliseconds of a review's CPU for the index of a fleet of 2,200
	// clusters (some 27,000 entries, 3 MB).
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	idx, err := decodeIndex(buf.Bytes())
	if err != nil {
		return nil, err
	}
	if decoded.m == nil {
		decoded.m = map[decodedKey]weak.Pointer[index.Index]{}
	}
	for k, p := range decoded.m {
		if p.Value() == nil {
			delete(decoded.m, k)
		}
	}
	decoded.m[key] = weak.Make(idx)
	return idx, nil
}

// vouched is what the index says it holds: the hash of each directory
// its cached-tree extension gives a valid entry (by its path from the
// worktree's root), and the index itself for the entries under them.
type vouched struct {
	idx   *index.Index
	trees map[string]plumbing.Hash
}

// vouched reads the index, once per handle, and the directories it vouches
// for; none without a readable index.
func (r *Repo) vouched() vouched {
	r.index.mu.Lock()
	defer r.index.mu.Unlock()
	if !r.index.read {
		r.readIndex()
		r.index.read = true
	}
	if r.index.trees == nil && r.index.idx != nil {
		r.index.trees = cachedTrees(r.index.idx.Cache)
	}
	return vouched{r.index.idx, r.index.trees}
}

// list adds the index's entries under dir (from the worktree's root) to
// out, by rel joined with their path under dir; false, adding nothing,
// when one is not a plain staged entry (a conflict, a sparse or an
// intent-to-add entry), which the caller then reads from the commit.
func (v vouched) list(dir, rel string, out map[string]plumbing.Hash) bool {
	if v.idx == nil {
		return false
	}
	return listEntries(entriesUnder(v.idx, dir+"/"), dir, rel, out)
}

// listEntries is list of the entries under dir, found already.
func listEntries(under []*index.Entry, dir, rel string, out map[string]plumbing.Hash) bool {
	for _, e := range under {
		if e.Stage != 0 || e.SkipWorktree || e.IntentToAdd {
			return false
		}
	}
	for _, e := range under {
		if e.Mode.IsFile() {
			out[path.Join(rel, e.Name[len(dir)+1:])] = e.Hash
		}
	}
	return true
}

// entriesUnder are the entries of idx whose names start with prefix: a
// run of them, since an index lists its entries sorted by name
// (decodeIndex refuses one that does not).
func entriesUnder(idx *index.Index, prefix string) []*index.Entry {
	es := idx.Entries
	i := sort.Search(len(es), func(i int) bool { return es[i].Name >= prefix })
	j := i
	for j < len(es) && strings.HasPrefix(es[j].Name, prefix) {
		j++
	}
	return es[i:j]
}

// cachedTrees are the directories the index's cached-tree extension
// gives a valid entry (slash-separated, from the worktree's root; the root
// itself is ""), with their hashes. The extension lists trees in
// pre-order, each with the number of its subtrees.
func cachedTrees(t *index.Tree) map[string]plumbing.Hash {
	out := map[string]plumbing.Hash{}
	if t == nil {
		return out
	}
	type frame struct {
		path string
		left int
	}
	var stack []frame
	for _, e := range t.Entries {
		for len(stack) > 0 && stack[len(stack)-1].left == 0 {
			stack = stack[:len(stack)-1]
		}
		full := e.Path
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			top.left--
			if top.path != "" {
				full = top.path + "/" + e.Path
			}
		}
		if e.Entries >= 0 {
			out[full] = e.Hash
		}
		stack = append(stack, frame{full, e.Trees})
	}
	return out
}
