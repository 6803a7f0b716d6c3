// Package gitbase reads a git ref's tree as a read-only fs.FS, straight from
// the object store with go-git: no checkout, no change to the worktree, in
// shallow and detached clones alike, reading only what is asked for. The
// base and HEAD of a review go through the same loader this way.
//
// Entry points: Open, (*Repo).FS, (*Repo).DefaultBase.
package gitbase

import (
	"errors"
	"fmt"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repo is an opened repository.
type Repo struct {
	repo *git.Repository
	// prefix is where the directory Open was given sits in the worktree
	// ("" at its top): a fleet may live in a subdirectory of its
	// repository, and every tree is read as that directory sees it.
	prefix  string
	storage *filesystem.Storage // nil unless it keeps pack files open
	// index is the git index as read once (worktree.go), for every
	// directory a run hashes, until ReleaseIndex.
	index struct {
		mu    sync.Mutex
		read  bool // idx, stamp and work hold what was read
		idx   *index.Index
		trees map[string]plumbing.Hash // cachedTrees of idx, once asked
		stamp time.Time
		work  string // the working tree's root, links resolved
	}
	// treesRead counts the trees listings read from commits, the index
	// not vouching for them (for the tests).
	treesRead atomic.Int64
}

// Close closes the pack files the repository keeps open.
func (r *Repo) Close() error {
	if r.storage == nil {
		return nil
	}
	return r.storage.Close()
}

// UserError is a mistake of the caller's (no repository, a revision that
// is not there), not a failure of git: its message says what to do.
type UserError struct{ Msg string }

func (e *UserError) Error() string { return e.Msg }

// Open opens the repository containing dir.
func Open(dir string) (*Repo, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, &UserError{fmt.Sprintf("%s is not in a git repository: reviews compare git commits; run this in a clone of the fleet repository", dir)}
	}
	if err != nil {
		return nil, fmt.Errorf("opening the git repository at %s: %w", dir, err)
	}
	// Open again over the same directories, keeping the pack files open:
	// by default go-git opens the pack anew for every object it reads. The
	// object cache is 16 MiB rather than go-git's 96 for each handle (a
	// review opens up to three): reviews read each object once, and the
	// smaller cache took a review of 19,215 clusters 40 MiB lower at the
	// peak without slowing one of 2,200.
	if st, ok := r.Storer.(*filesystem.Storage); ok {
		var wt billy.Filesystem
		if w, err := r.Worktree(); err == nil {
			wt = w.Filesystem
		}
		storage := filesystem.NewStorageWithOptions(st.Filesystem(), cache.NewObjectLRU(16*cache.MiByte), filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObject})
		if kept, err := git.Open(storage, wt); err == nil {
			out := &Repo{repo: kept, storage: storage}
			out.prefix = out.Prefix(dir)
			return out, nil
		}
	}
	out := &Repo{repo: r}
	out.prefix = out.Prefix(dir)
	return out, nil
}

// largeObject is the size past which an object is read as a stream from
// its pack or loose file instead of first being copied whole into a
// growing buffer (and go-git's cache): a base's index.json, 4 MB at 2,200
// clusters, cost 21 MB of buffers that way before ReadFile's own copy.
const largeObject = 1 << 20

// Repository exposes the go-git repository (for tests and history).
func (r *Repo) Repository() *git.Repository { return r.repo }

// Commit resolves a revision (branch, tag, SHA, HEAD~2, origin/main) to a
// commit.
func (r *Repo) Commit(rev string) (*object.Commit, error) {
	h, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if errors.Is(err, io.EOF) {
		// go-git's answer when a ~N or ^N walks past the first commit.
		return nil, &UserError{fmt.Sprintf("resolving %q: the history has no such commit (it walks past the first one; in a shallow clone, fetch the history: git fetch --unshallow, or fetch-depth: 0 in actions/checkout)", rev)}
	}
	if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, &UserError{fmt.Sprintf("no commit %q in this clone: name a branch, tag or commit that exists (--base); "+
			"a shallow clone lacks older commits: fetch them (git fetch --unshallow, or fetch-depth: 0 in actions/checkout)", rev)}
	}
	if err != nil {
		return nil, fmt.Errorf("resolving %q: %w", rev, err)
	}
	c, err := r.repo.CommitObject(*h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, &UserError{fmt.Sprintf("commit %s (%q) is not in this clone: it is shallow; fetch the history "+
			"(git fetch --unshallow, or fetch-depth: 0 in actions/checkout)", h, rev)}
	}
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", h, err)
	}
	return c, nil
}

// DefaultBranch is the deploy branch when the fleet names none
// (gitops.revision).
const DefaultBranch = "main"

// Mainline is the tip of the branch that deploys: origin/<branch>, else
// <branch>, else HEAD (a clone with neither follows its own first-parent
// history).
func (r *Repo) Mainline(branch string) (*object.Commit, string) {
	if branch == "" {
		branch = DefaultBranch
	}
	for _, ref := range []string{"origin/" + branch, branch, "HEAD"} {
		if c, err := r.Commit(ref); err == nil {
			return c, ref
		}
	}
	return nil, ""
}

// ErrNoHistory is DefaultBase's answer in a repository without a commit:
// there is no base, and nothing that existed before the change.
var ErrNoHistory = errors.New("the repository has no commit yet")

// DefaultBase is the base a review compares HEAD with when no --base is
// given: the merge base of HEAD and the deploy branch (gitops.revision; ""
// is DefaultBranch), so that a branch behind it does not report its newer
// commits as its own. The deploy branch is looked for as git would: its
// configured upstream, then origin/<branch>, then the local <branch>; a
// clone that has none of them compares with origin/HEAD, the remote's
// default branch, and says so.
func (r *Repo) DefaultBase(branch string) (*object.Commit, string, error) {
	if branch == "" {
		branch = DefaultBranch
	}
	if _, err := r.repo.Head(); errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, "", ErrNoHistory
	}
	head, err := r.Commit("HEAD")
	if err != nil {
		return nil, "", err
	}
	var lastErr error
	for _, ref := range r.baseCandidates(branch) {
		other, err := r.Commit(ref)
		if err != nil {
			lastErr = err
			continue
		}
		bases, err := head.MergeBase(other)
		if err != nil {
			return nil, "", fmt.Errorf("finding the merge base of HEAD and %s: %w", ref, err)
		}
		if len(bases) == 0 {
			return nil, "", &UserError{fmt.Sprintf("HEAD and %s share no history; pass --base", ref)}
		}
		how := "merge-base(HEAD, " + ref + ")"
		if ref == "origin/HEAD" {
			how += ", the remote's default branch: no " + branch + " in this clone"
		}
		return bases[0], how, nil
	}
	return nil, "", &UserError{fmt.Sprintf("no origin/%s, %s or origin/HEAD to compare with (%v): the deploy branch is gitops.revision (default %s); fetch it or pass --base", branch, branch, lastErr, DefaultBranch)}
}

// baseCandidates are the refs DefaultBase tries, in order.
func (r *Repo) baseCandidates(branch string) []string {
	var out []string
	if cfg, err := r.repo.Config(); err == nil {
		if b, ok := cfg.Branches[branch]; ok && b.Remote != "" && b.Remote != "." && b.Merge.IsBranch() {
			out = append(out, b.Remote+"/"+b.Merge.Short())
		}
	}
	for _, ref := range []string{"origin/" + branch, branch, "origin/HEAD"} {
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// FS returns the tree of commit c as a read-only file system, as the
// directory Open was given sees it (empty when c does not have it).
func (r *Repo) FS(c *object.Commit) (fs.FS, error) {
	t, err := r.tree(c)
	if err != nil {
		return nil, err
	}
	return &treeFS{tree: t, when: c.Committer.When}, nil
}

// tree is c's tree of the directory Open was given.
func (r *Repo) tree(c *object.Commit) (*object.Tree, error) {
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading the tree of %s: %w", c.Hash, err)
	}
	if r.prefix == "" {
		return t, nil
	}
	sub, err := t.Tree(r.prefix)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return &object.Tree{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s in %s: %w", r.prefix, c.Hash, err)
	}
	return sub, nil
}

// treeFS implements fs.FS, fs.ReadDirFS and fs.ReadFileFS over a tree. It
// is safe for concurrent use: go-git's trees and object storage are not, so
// every access to them holds mu (files are read whole under it).
type treeFS struct {
	mu    sync.Mutex
	tree  *object.Tree
	when  time.Time
	trees map[string]*object.Tree // resolved directories, so each tree object is decoded once
}

// sub resolves directory name, one path element at a time, through the
// cache of trees already decoded.
func (t *treeFS) sub(name string) (*object.Tree, error) {
	if name == "." || name == "" {
		return t.tree, nil
	}
	if st, ok := t.trees[name]; ok {
		return st, nil
	}
	parent, err := t.sub(path.Dir(name))
	if err != nil {
		return nil, err
	}
	st, err := parent.Tree(path.Base(name))
	if err != nil {
		return nil, err
	}
	if t.trees == nil {
		t.trees = map[string]*object.Tree{}
	}
	t.trees[name] = st
	return st, nil
}

// file finds a file through the cache of its directory's tree.
func (t *treeFS) file(name string) (*object.File, error) {
	dir, err := t.sub(path.Dir(name))
	if err != nil {
		return nil, err
	}
	return dir.File(path.Base(name))
}

func (t *treeFS) Open(name string) (fs.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if sub, err := t.sub(name); err == nil {
		entries, err := t.entries(sub, name)
		if err != nil {
			return nil, err
		}
		return &dir{info: info{name: path.Base(name), mode: fs.ModeDir | 0o755, when: t.when}, entries: entries}, nil
	}
	f, err := t.file(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	data, err := f.Contents()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{ReadCloser: io.NopCloser(strings.NewReader(data)), info: info{name: path.Base(name), size: f.Size, mode: 0o644, when: t.when}}, nil
}

// BlobHash returns the blob hash of the regular file name from its
// directory's tree entry, without reading the blob (config.BlobHasher).
func (t *treeFS) BlobHash(name string) ([20]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !fs.ValidPath(name) {
		return [20]byte{}, false
	}
	dir, err := t.sub(path.Dir(name))
	if err != nil {
		return [20]byte{}, false
	}
	base := path.Base(name)
	for _, e := range dir.Entries {
		if e.Name == base {
			if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
				return [20]byte{}, false
			}
			return [20]byte(e.Hash), true
		}
	}
	return [20]byte{}, false
}

func (t *treeFS) ReadFile(name string) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	f, err := t.file(name)
	if err != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrNotExist}
	}
	rc, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	// The blob's size is known: one buffer of it, not a doubling one.
	b := make([]byte, f.Size)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, err
	}
	return b, nil
}

func (t *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sub, err := t.sub(name)
	if err != nil {
		if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
		}
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return t.entries(sub, name)
}

func (t *treeFS) entries(sub *object.Tree, dir string) ([]fs.DirEntry, error) {
	out := make([]fs.DirEntry, 0, len(sub.Entries))
	for _, e := range sub.Entries {
		i := info{name: e.Name, mode: 0o644, when: t.when}
		switch e.Mode {
		case filemode.Dir:
			i.mode = fs.ModeDir | 0o755
		case filemode.Symlink:
			i.mode = fs.ModeSymlink | 0o777
		case filemode.Submodule:
			continue
		}
		out = append(out, &entry{info: i, fs: t, path: path.Join(dir, e.Name)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name() < out[b].Name() })
	return out, nil
}

type info struct {
	name string
	size int64
	mode fs.FileMode
	when time.Time
}

func (i info) Name() string               { return i.name }
func (i info) Size() int64                { return i.size }
func (i info) Mode() fs.FileMode          { return i.mode }
func (i info) ModTime() time.Time         { return i.when }
func (i info) IsDir() bool                { return i.mode.IsDir() }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.mode.Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }

// entry is a directory entry whose file size is read only when asked for.
type entry struct {
	info
	fs   *treeFS
	path string
}

func (e *entry) Info() (fs.FileInfo, error) {
	if e.mode.IsRegular() {
		e.fs.mu.Lock()
		defer e.fs.mu.Unlock()
		dir, err := e.fs.sub(path.Dir(e.path))
		if err != nil {
			return nil, err
		}
		size, err := dir.Size(path.Base(e.path))
		if err != nil {
			return nil, err
		}
		e.size = size
	}
	return e.info, nil
}

type file struct {
	io.ReadCloser
	info info
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }

type dir struct {
	info    info
	entries []fs.DirEntry
	off     int
}

func (d *dir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *dir) Close() error { return nil }
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.off += n
	return rest[:n], nil
}

// BlobHashes returns the git blob hash of every file under dir (of the
// directory Open was given) in commit c, by path relative to dir; none
// when c has no dir. It reads tree objects only, never the files.
func (r *Repo) BlobHashes(c *object.Commit, dir string) (map[string]plumbing.Hash, error) {
	tree, err := r.tree(c)
	if err != nil {
		return nil, err
	}
	return r.listing(tree, dir, vouched{})
}

// CheckedOutBlobHashes is BlobHashes of commit c's dir for a commit that
// shares trees with what is checked out: each directory the index's cached
// tree says it holds (git writes that extension on checkout and commit,
// and drops a directory's entry when its entries change) is listed from
// the index's entries instead of c's tree objects, which are read only
// where the two differ. The checked-out commit (a fresh clone's HEAD) is
// read from the index whole; a review's base, which shares all but the
// changed regions of deploy/ with the checkout, reads a few dozen trees of
// its thousands. Without a usable index it is BlobHashes.
func (r *Repo) CheckedOutBlobHashes(c *object.Commit, dir string) (map[string]plumbing.Hash, error) {
	tree, err := r.tree(c)
	if err != nil {
		return nil, err
	}
	return r.listing(tree, dir, r.vouched())
}

// listing is the blob hash of every file under dir of tree, by path
// relative to dir, each directory v vouches for taken from the index.
func (r *Repo) listing(tree *object.Tree, dir string, v vouched) (map[string]plumbing.Hash, error) {
	full := dir
	if r.prefix != "" {
		full = r.prefix + "/" + dir
	}
	// Made at the size of what the index lists under dir, which a
	// listing mostly shares (200,000 files at 19,215 clusters: the map
	// grown to that size was a tenth of the listing's CPU).
	var under []*index.Entry
	if v.idx != nil {
		under = entriesUnder(v.idx, full+"/")
	}
	out := make(map[string]plumbing.Hash, len(under))
	sub, err := tree.Tree(dir)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if v.idx != nil && v.trees[full] == sub.Hash && listEntries(under, full, "", out) {
		return out, nil
	}
	r.treesRead.Add(1)
	if err := r.listTree(sub, full, "", v, out); err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return out, nil
}

// listTree adds the files of tree t (at full, from the worktree's root;
// rel, from the listing's directory) to out: its files from t, each
// subtree from the index where v vouches for it, else from its own tree
// object.
func (r *Repo) listTree(t *object.Tree, full, rel string, v vouched, out map[string]plumbing.Hash) error {
	for _, e := range t.Entries {
		p := path.Join(rel, e.Name)
		switch {
		case e.Mode == filemode.Dir:
			at := full + "/" + e.Name
			if v.trees[at] == e.Hash && v.list(at, p, out) {
				continue
			}
			sub, err := t.Tree(e.Name)
			if err != nil {
				return err
			}
			r.treesRead.Add(1)
			if err := r.listTree(sub, at, p, v, out); err != nil {
				return err
			}
		case e.Mode.IsFile():
			out[p] = e.Hash
		}
	}
	return nil
}

// Changed lists the files under dirs whose content in the working tree at
// root differs from commit c (changed, added or deleted) as `git status`
// finds them (WorktreeHashes): a file whose size and modification time the
// index vouches for is not read. A review's label uses it; Dirty, which
// reads every file, decides what a pipeline run deploys.
func (r *Repo) Changed(c *object.Commit, root string, dirs ...string) ([]string, error) {
	committed := func(d string) (map[string]plumbing.Hash, error) { return r.CheckedOutBlobHashes(c, d) }
	return changed(dirs, committed, func(d string) (map[string]plumbing.Hash, error) { return r.WorktreeHashes(root, d) })
}

// Dirty lists the files under dirs whose content in the working tree at
// root (the directory Open was given) differs from commit c (changed, added
// or deleted), reading and hashing every regular file of those directories.
func (r *Repo) Dirty(c *object.Commit, root string, dirs ...string) ([]string, error) {
	tree, err := r.tree(c)
	if err != nil {
		return nil, err
	}
	disk := os.DirFS(root)
	committed := func(d string) (map[string]plumbing.Hash, error) { return r.listing(tree, d, vouched{}) }
	return changed(dirs, committed, func(d string) (map[string]plumbing.Hash, error) {
		out := map[string]plumbing.Hash{}
		err := fs.WalkDir(disk, d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == d {
					return fs.SkipDir
				}
				return err
			}
			if e.IsDir() || !e.Type().IsRegular() {
				return nil
			}
			b, err := fs.ReadFile(disk, p)
			if err != nil {
				return err
			}
			out[strings.TrimPrefix(p, d+"/")] = plumbing.ComputeHash(plumbing.BlobObject, b)
			return nil
		})
		return out, err
	})
}

// changed lists, sorted, the files under dirs whose blob hash in the
// working tree (worktree: each file of a directory, by path relative to
// it) differs from a commit's (committed, alike), or that only one of the
// two has.
func changed(dirs []string, commit, worktree func(dir string) (map[string]plumbing.Hash, error)) ([]string, error) {
	var out []string
	for _, d := range dirs {
		committed, err := commit(d)
		if err != nil {
			return nil, err
		}
		now, err := worktree(d)
		if err != nil {
			return nil, fmt.Errorf("reading the working tree: %w", err)
		}
		for p, h := range now {
			if c, ok := committed[p]; !ok || c != h {
				out = append(out, d+"/"+p)
			}
		}
		for p := range committed {
			if _, ok := now[p]; !ok {
				out = append(out, d+"/"+p)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
