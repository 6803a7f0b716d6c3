package review

import (
	"io/fs"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
)

// The committed stage reads the base's deploy/ (every file's blob hash and
// index.json) through a handle of its own, beside the loading of the
// fleets; the compare stage then makes the base's view of what it deployed
// from it (asCommitted).

// asCommitted is the base's render with each file as the base committed it
// (d: its blob hashes, index and owners): a file the base rendered but
// never committed was never deployed, and a committed file the render
// lacks (of a cluster or region it rendered) was. Owners come from the
// render, else from the committed index.json's (render.Index.Owners). A
// committed file whose blob the head renders byte for byte (the same git
// blob hash) takes the head's bytes instead of being read from git: most
// files of a changed cluster do not change. The settled files (settler),
// the same on both sides, are left out. For a review that lists the
// changed files without their diffs (listOnly), a file the head does not
// render byte for byte is not read at all: it is known to differ, and its
// blob hash (d.hashes, the view's Side.Blobs) is all the drift check asks
// of it; its Bytes are nil. A file the head renders empty is still read,
// for nil bytes would equal it. index.json is in the view, as committed,
// with no bytes: it is never read (nothing compares it as text).
func asCommitted(out *render.Output, fsys fs.FS, d committedDeploy, head *render.Output, settled map[string]plumbing.Hash, listOnly bool) *render.Output {
	committed := d.hashes
	// The base's files: those it rendered and committed, then those it
	// committed of owners it rendered but renders no more.
	rendered := make(map[string]bool, len(out.Artifacts))
	var arts []render.Artifact
	for _, a := range out.Artifacts {
		rendered[a.Path] = true
		if _, ok := committed[a.Path]; ok {
			if _, same := settled[a.Path]; !same {
				arts = append(arts, a)
			}
		}
	}
	// Only the files of the owners it rendered are looked up, not the
	// base's every file (25,000 at 2,200 clusters, 10 ms).
	ownedFiles(d.index, d.owners, out.Unchanged, func(p, owner string) {
		if _, ok := committed[p]; !ok || rendered[p] {
			return
		}
		if _, same := settled[p]; !same {
			arts = append(arts, render.Artifact{Path: p, Owner: owner})
			rendered[p] = true // listed twice, taken once
		}
	})
	headBytes := make(map[string][]byte, len(arts))
	for _, a := range head.Artifacts {
		headBytes[a.Path] = a.Bytes
	}
	// Each file is hashed, or read, by one of ReadFiles' workers: the
	// hashing runs on every core while the reads take turns on the
	// handle.
	paths := make([]string, len(arts))
	for i := range arts {
		paths[i] = arts[i].Path
	}
	contents, errs := deploytree.ReadFiles(paths, func(p string) ([]byte, error) {
		if p == render.IndexPath {
			// Never compared as text (its changes are the other files'),
			// and the largest file: 4 MB at 2,200 clusters, 32 MB at
			// 19,215, read whole from git at the end of every diff.
			return nil, nil
		}
		b := headBytes[p]
		if b != nil && plumbing.ComputeHash(plumbing.BlobObject, b) == committed[p] {
			return b, nil
		}
		if listOnly && (b == nil || len(b) > 0) {
			return nil, nil
		}
		return fs.ReadFile(fsys, deployDir+"/"+p)
	})
	// A file that cannot be read is left out.
	kept := arts[:0]
	for i, a := range arts {
		if errs[i] == nil {
			a.Bytes = contents[i]
			kept = append(kept, a)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Path < kept[j].Path })
	c := *out
	c.Artifacts = kept
	return &c
}

// ownedFiles calls each for every file idx lists for an owner that is not
// in unchanged (a cluster's ID, a region's name), with the owner owners
// (idx.Owners()) gives it: a file listed twice is its last owner's.
func ownedFiles(idx *render.Index, owners map[string]string, unchanged map[string]bool, each func(path, owner string)) {
	if idx == nil {
		return
	}
	take := func(owner string, files []string) {
		if unchanged[owner] {
			return
		}
		for _, f := range files {
			if owners[f] == owner {
				each(f, owner)
			}
		}
	}
	for _, c := range idx.Clusters {
		take(c.ID, c.Files)
	}
	for _, r := range idx.Regions {
		take(r.Name, r.Files)
	}
}

// committedDeploy is a commit's deploy/: each file's blob hash, and
// index.json (nil when absent or unreadable) with the owner of each file it
// lists (Index.Owners: asCommitted and the settler both need it).
type committedDeploy struct {
	hashes map[string]plumbing.Hash
	index  *render.Index
	owners map[string]string
	err    error
}

// readCommitted reads commit c's deploy/ through a handle of its own, so
// that it may run beside the rest of the review.
func readCommitted(root string, c plumbing.Hash) committedDeploy {
	d, err := withHandle(root, func(repo *gitbase.Repo) (committedDeploy, error) {
		commit, err := repo.Commit(c.String())
		if err != nil {
			return committedDeploy{}, err
		}
		hashes, err := repo.CheckedOutBlobHashes(commit, deployDir)
		if err != nil {
			return committedDeploy{}, err
		}
		fsys, err := repo.FS(commit)
		if err != nil {
			return committedDeploy{}, err
		}
		idx := readIndex(fsys)
		return committedDeploy{hashes: hashes, index: idx, owners: idx.Owners()}, nil
	})
	d.err = err
	return d
}

// readIndex is the deploy/index.json of fsys, or nil.
func readIndex(fsys fs.FS) *render.Index {
	b, err := fs.ReadFile(fsys, deployDir+"/"+render.IndexPath)
	if err != nil {
		return nil
	}
	idx, err := render.ParseIndex(b)
	if err != nil {
		return nil
	}
	return idx
}
