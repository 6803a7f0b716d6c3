package cli

import (
	"crypto/sha256"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/renderstate"
	"github.com/regionctl/regionctl/internal/review"
)

// An unchanged render only looks, as git status does: after a clean render
// (no diagnostic at all), the size and modification time of every file it
// read (config/, charts/, pipelines/tekton/, the git refs the merge base
// comes from) and wrote (deploy/) are kept in .regionctl/render-state.json,
// with the contents' hashes of the files it wrote too close to that record
// for their times to prove anything (renderstate.Record). The next render
// (not render --check, the gate CI runs: it compares bytes) stats the same
// files and reads those few; when nothing differs and the same regionctl
// built it, there is nothing to render: it says so. Any difference, an
// input modified while the render that recorded ran, --no-cache, or a
// repository it cannot see whole (--root inside another repository)
// renders as before.

const stateFile = "render-state.json"

// statePath is where the record is kept; "" when .regionctl is not a
// directory of the repository's own (a link someone committed is never
// followed: nothing is read or written there).
func (a *app) statePath() string {
	dir, err := deploytree.Inside(a.root, deploytree.WorkDir)
	if err != nil {
		return ""
	}
	return filepath.Join(dir, stateFile)
}

// snapshot stats what a render of a.root reads and writes, or fails when
// the repository is not all under a.root.
func (a *app) snapshot() (renderstate.Snapshot, error) {
	return a.snapshotWith(nil)
}

// snapshotWith is snapshot, with deploy/'s files as deployStats says when
// it is not nil (a walk that just stat'ed them: the fresh-clone check).
func (a *app) snapshotWith(deployStats map[string]gitbase.FileStat) (renderstate.Snapshot, error) {
	var refs []string
	trees := append([]string{}, render.Inputs...)
	if deployStats == nil {
		trees = append(trees, deployDir)
	}
	switch info, err := os.Lstat(filepath.Join(a.root, ".git")); {
	case err == nil && info.IsDir():
		// HEAD, and the branches and remotes the merge base is taken from.
		trees = append(trees, ".git/refs")
		refs = []string{".git/HEAD", ".git/packed-refs"}
	case err == nil:
		return nil, errors.New("a .git file (a worktree): refs live elsewhere")
	default:
		abs, err := filepath.Abs(a.root)
		if err != nil {
			return nil, err
		}
		for d := filepath.Dir(abs); d != filepath.Dir(d); d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				return nil, errors.New("inside another repository")
			}
		}
	}
	s, err := renderstate.Take(a.root, trees, refs)
	if err != nil {
		return nil, err
	}
	return withDeploy(s, deployStats), nil
}

// withDeploy is s with deploy/'s files as stats says, in a map made at
// its size: some 2,000 inputs grown to 28,000 entries one by one took
// rehashing at the end of a render, on one core.
func withDeploy(s renderstate.Snapshot, stats map[string]gitbase.FileStat) renderstate.Snapshot {
	out := make(renderstate.Snapshot, len(s)+len(stats))
	maps.Copy(out, s)
	for p, st := range stats {
		out[deployDir+"/"+p] = renderstate.Stat{Size: st.Size, MTime: st.MTime}
	}
	return out
}

// snapshotInputsBeside starts the stat of what a render reads (all that
// snapshot stats but deploy/) on a goroutine of its own, for the record
// of a render that writes deploy/ or finds it clean, whose own stats
// stand for deploy/: the walk of the inputs then runs beside the render
// rather than after it, on one core. Taken before the render has read
// everything, it records nothing unsound: an input modified after it
// either has a time Record refuses (after began) or differs from the
// record at the next render.
func (a *app) snapshotInputsBeside() {
	done := make(chan struct{})
	var s renderstate.Snapshot
	var err error
	go func() {
		defer close(done)
		s, err = a.snapshotWith(map[string]gitbase.FileStat{})
	}()
	a.inputs = func() (renderstate.Snapshot, error) {
		<-done
		return s, err
	}
}

// unchangedSinceLastRender reports whether the last clean render's state
// still holds, and how many files deploy/ has then.
func (a *app) unchangedSinceLastRender() (int, bool) {
	if a.noCache {
		return 0, false
	}
	path := a.statePath()
	if path == "" {
		return 0, false
	}
	st := renderstate.Load(path)
	if st == nil {
		return 0, false
	}
	now, err := a.snapshot()
	if err != nil || !st.Unchanged(buildIdentity(), a.root, now) {
		return 0, false
	}
	return st.Rendered, true
}

// recordRender keeps the state of a clean render (every check passed and
// nothing to warn about) for the next render to compare with; anything
// else removes the old state.
func (a *app) recordRender(files int) { a.recordRenderWith(files, writtenTree{}) }

// beforeRecord, when a test sets it, runs before a render's record is
// taken: after the render read its inputs.
var beforeRecord func()

// writtenTree is deploy/ as a render wrote or read it (deploytree.Stream):
// each file's size and time (stats) and the hashes of the last files it
// wrote (sums), which a record would otherwise read back.
type writtenTree struct {
	stats map[string]gitbase.FileStat
	sums  map[string][sha256.Size]byte
}

// recordRenderWith is recordRender, with deploy/'s files as tree says when
// its stats are not nil.
func (a *app) recordRenderWith(files int, tree writtenTree) {
	deployStats := tree.stats
	path := a.statePath()
	if path == "" {
		return
	}
	if a.noCache || len(a.fleetDiags) > 0 {
		_ = os.Remove(path)
		return
	}
	if beforeRecord != nil {
		beforeRecord()
	}
	snapped := time.Now()
	var now renderstate.Snapshot
	var err error
	if deployStats != nil && a.inputs != nil {
		if now, err = a.inputs(); err == nil {
			now = withDeploy(now, deployStats)
		}
	} else {
		now, err = a.snapshotWith(deployStats)
	}
	if err == nil {
		err = renderstate.Record(path, a.root, buildIdentity(), files, a.began, snapped, now, deployDir, tree.sums)
	}
	if err != nil {
		// An old record must not outlive the render it described.
		_ = os.Remove(path)
	}
}

// committedByThisRenderer reports whether deploy/ needs no render because
// the checkout is a commit the deploy branch's CI held to render --check
// (review.CommittedCheckout), for a build known by its source and with the
// cache on. It returns how many files deploy/ holds and the commit. The
// first render of a fresh clone of the deploy branch then only looks, as
// the render after a recorded one does.
func (a *app) committedByThisRenderer() (review.Checkout, bool) {
	if a.noCache || renderer().Modified {
		return review.Checkout{}, false
	}
	return review.CommittedCheckout(a.root, a.deployBranch(), renderer().ID)
}
