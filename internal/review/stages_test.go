package review

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"weak"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"

	"github.com/regionctl/regionctl/internal/deploytree"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// The renderer the stage tests' deploy/ trees are rendered by.
const testRenderer = "sha256:stage-test-renderer"

var checker = sync.OnceValues(func() (*schema.Checker, error) { return schema.New(schema.Options{Version: "test"}) })

func testChecker(t *testing.T) *schema.Checker {
	t.Helper()
	c, err := checker()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// renderInto renders the fleet of r's working tree into its deploy/.
func renderInto(t *testing.T, r *testrepo.Repo) {
	t.Helper()
	_, out, ds, err := render.FromFS(os.DirFS(r.Dir), testChecker(t), render.Options{Renderer: testRenderer})
	if err != nil || ds.HasErrors() {
		t.Fatalf("render: %v %v", err, ds)
	}
	if _, err := deploytree.Write(deploytree.OS{}, filepath.Join(r.Dir, deployDir), out, deploytree.Options{}); err != nil {
		t.Fatal(err)
	}
}

// fleetRepo is the uneven-sectors fleet, rendered and committed on main.
func fleetRepo(t *testing.T) (*testrepo.Repo, plumbing.Hash) {
	t.Helper()
	r := testrepo.Golden(t, "uneven-sectors")
	renderInto(t, r)
	return r, r.Commit("fleet")
}

func open(t *testing.T, r *testrepo.Repo) *gitbase.Repo {
	t.Helper()
	repo, err := gitbase.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo
}

const sectorFile = "config/sectors/prod-3.yaml"

// TestResolveFindsBothEnds: the ends stage takes the merge base with the
// deploy branch when no base is named, and reads a named head through a
// tree of its own, the working tree otherwise.
func TestResolveFindsBothEnds(t *testing.T) {
	r, first := fleetRepo(t)
	r.Edit(sectorFile, "order: 7", "order: 7 # edited")
	second := r.Commit("edit")
	repo := open(t, r)

	e, err := resolve(repo, Options{Root: r.Dir, Base: "HEAD~1", Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	if e.base.Hash != first || e.head.Hash != second || e.worktree {
		t.Errorf("ends %s..%s (worktree %v), want %s..%s", e.base.Hash, e.head.Hash, e.worktree, first, second)
	}
	if want := first.String()[:8] + " (HEAD~1)"; e.baseLabel != want {
		t.Errorf("base label %q, want %q", e.baseLabel, want)
	}
	for _, side := range []struct {
		fsys fs.FS
		want bool
	}{{e.baseFS, false}, {e.headFS, true}} {
		b, err := fs.ReadFile(side.fsys, sectorFile)
		if err != nil || strings.Contains(string(b), "# edited") != side.want {
			t.Errorf("a side reads %s as %q (%v); edited: want %v", sectorFile, b, err, side.want)
		}
	}

	// No base named: the merge base with main, which is HEAD here.
	w, err := resolve(repo, Options{Root: r.Dir})
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if w.base.Hash != second || !w.worktree || w.head.Hash != second {
		t.Errorf("default ends: base %s, head %s, worktree %v", w.base.Hash, w.head.Hash, w.worktree)
	}
	if got := w.label(nil); got != second.String()[:8]+" (HEAD)" {
		t.Errorf("a clean working tree's label %q", got)
	}
	if got := w.label([]string{sectorFile}); !strings.HasPrefix(got, "working tree (HEAD ") {
		t.Errorf("a changed working tree's label %q", got)
	}
	if _, err := resolve(repo, Options{Root: r.Dir, Base: "no-such-ref"}); err == nil {
		t.Error("a base that is not there resolved")
	}
}

// TestReadHeadSeesWhatGitStatusSees: the head stage lists the inputs the
// working tree changed and hashes its deploy/ as git would, a commit's
// from its tree; without drift it hashes nothing.
func TestReadHeadSeesWhatGitStatusSees(t *testing.T) {
	r, head := fleetRepo(t)
	repo := open(t, r)
	c, err := repo.Commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	committed, err := repo.BlobHashes(c, deployDir)
	if err != nil {
		t.Fatal(err)
	}
	const tfvars = "production/us-east-1/terraform/mc01.tfvars.json"
	if _, ok := committed[tfvars]; !ok {
		t.Fatalf("the fleet committed no %s", tfvars)
	}

	h, err := readHead(r.Dir, head, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.uncommitted) != 0 || !mapsEqual(h.deploy, committed) {
		t.Fatalf("a clean working tree: uncommitted %v, deploy/ %d files (committed %d)", h.uncommitted, len(h.deploy), len(committed))
	}

	r.Edit(sectorFile, "order: 7", "order: 7 # edited")
	r.Write(deployDir+"/"+tfvars, "{}\n")
	h, err = readHead(r.Dir, head, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.uncommitted, sectorFile) {
		t.Errorf("uncommitted %v lacks %s", h.uncommitted, sectorFile)
	}
	if want := plumbing.ComputeHash(plumbing.BlobObject, []byte("{}\n")); h.deploy[tfvars] != want {
		t.Errorf("the edited %s hashes to %s, want %s", tfvars, h.deploy[tfvars], want)
	}

	if h, err = readHead(r.Dir, head, true, false); err != nil || h.deploy != nil {
		t.Errorf("without drift the working tree's deploy/ was hashed (%d files, %v)", len(h.deploy), err)
	}
	if h, err = readHead(r.Dir, head, false, true); err != nil || !mapsEqual(h.deploy, committed) || h.uncommitted != nil {
		t.Errorf("a commit's head: deploy/ %d files, uncommitted %v, %v", len(h.deploy), h.uncommitted, err)
	}
}

func mapsEqual(a, b map[string]plumbing.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestReadCommittedAndAsCommitted: the committed stage reads a commit's
// deploy/ and its index; the base's view keeps what it committed, and
// only that, taking the head's bytes where the blob is the same.
func TestReadCommittedAndAsCommitted(t *testing.T) {
	r, base := fleetRepo(t)
	d := readCommitted(r.Dir, base)
	if d.err != nil || d.index == nil || d.index.Renderer != testRenderer || len(d.hashes) == 0 {
		t.Fatalf("committed: %d files, index %v, %v", len(d.hashes), d.index != nil, d.err)
	}
	const tfvars = "production/us-east-1/terraform/mc01.tfvars.json"
	if d.owners[tfvars] != "us-east-1/mc01" {
		t.Errorf("owner of %s: %q", tfvars, d.owners[tfvars])
	}
	if none := readCommitted(r.Dir, plumbing.NewHash(strings.Repeat("1", 40))); none.err == nil {
		t.Error("a commit that is not there was read")
	}

	repo := open(t, r)
	c, _ := repo.Commit(base.String())
	fsys, err := repo.FS(c)
	if err != nil {
		t.Fatal(err)
	}
	committed, _ := fs.ReadFile(fsys, deployDir+"/"+tfvars)
	const neverCommitted = "production/us-east-1/terraform/never.tfvars.json"
	out := &render.Output{Artifacts: []render.Artifact{
		{Path: tfvars, Owner: "us-east-1/mc01", Bytes: []byte("rendered again")},
		{Path: neverCommitted, Owner: "us-east-1/mc01", Bytes: []byte("{}")},
	}, Unchanged: map[string]bool{}}
	head := &render.Output{Artifacts: []render.Artifact{{Path: tfvars, Bytes: committed}}}
	const gone = "production/us-east-1/effective/mc01.yaml" // a cluster file the render no longer gives
	idx := &render.Index{Clusters: []render.IndexCluster{{ID: "us-east-1/mc01", Files: []string{tfvars, gone}}}}
	part := committedDeploy{hashes: map[string]plumbing.Hash{tfvars: d.hashes[tfvars], gone: d.hashes[gone]}, index: idx, owners: idx.Owners()}
	if _, ok := d.hashes[gone]; !ok {
		t.Fatalf("the fleet committed no %s", gone)
	}
	view := asCommitted(out, fsys, part, head, nil, false).ByPath()
	if string(view[tfvars]) != string(committed) {
		t.Errorf("the base's view of %s is %q, not what it committed", tfvars, view[tfvars])
	}
	if _, ok := view[neverCommitted]; ok {
		t.Error("a file the base rendered but never committed is in its view")
	}
	if len(view[gone]) == 0 {
		t.Error("a committed file of a rendered cluster that the render lacks is not in the base's view")
	}
	if view := asCommitted(out, fsys, part, head, map[string]plumbing.Hash{tfvars: d.hashes[tfvars]}, false).ByPath(); view[tfvars] != nil {
		t.Error("a settled file is in the base's view")
	}

	// index.json is in the base's view, as committed, but never read: no
	// comparison reads its text, and it is the largest file.
	withIndex := *out
	withIndex.Artifacts = append(append([]render.Artifact(nil), out.Artifacts...), render.Artifact{Path: render.IndexPath})
	part.hashes[render.IndexPath] = d.hashes[render.IndexPath]
	reads := &recordingFS{FS: fsys}
	view = asCommitted(&withIndex, reads, part, head, nil, false).ByPath()
	if b, ok := view[render.IndexPath]; !ok || b != nil {
		t.Errorf("index.json in the base's view: %v, %d bytes", ok, len(b))
	}
	if reads.names[deployDir+"/"+render.IndexPath] {
		t.Error("the base's view read index.json")
	}
	if !reads.names[deployDir+"/"+gone] {
		t.Errorf("the recording saw none of the reads (%v)", reads.names)
	}
}

// recordingFS records the names opened or read through it.
type recordingFS struct {
	fs.FS
	mu    sync.Mutex
	names map[string]bool
}

func (r *recordingFS) record(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names == nil {
		r.names = map[string]bool{}
	}
	r.names[name] = true
}

func (r *recordingFS) Open(name string) (fs.File, error) {
	r.record(name)
	return r.FS.Open(name)
}

func (r *recordingFS) ReadFile(name string) ([]byte, error) {
	r.record(name)
	return fs.ReadFile(r.FS, name)
}

// TestOwnedFilesAreTheOwnersMaps holds ownedFiles, which walks the
// index's owners the render did not leave out, to the owners map it
// stands for (Index.Owners): each file whose owner is not unchanged,
// once, with that owner, for the committed index of the test fleet with
// no owner, one cluster, one region and every owner unchanged, and for a
// hostile index listing a file twice for one cluster and once more for
// a region (the region's, as Owners has it).
func TestOwnedFilesAreTheOwnersMaps(t *testing.T) {
	r, base := fleetRepo(t)
	d := readCommitted(r.Dir, base)
	if d.err != nil || d.index == nil {
		t.Fatalf("committed: %v", d.err)
	}
	all := map[string]bool{}
	for _, o := range d.owners {
		all[o] = true
	}
	twice := &render.Index{
		Clusters: []render.IndexCluster{{ID: "r/a", Files: []string{"x", "x", "y"}}, {ID: "r/b", Files: []string{"y", "z"}}},
		Regions:  []render.IndexRegion{{Name: "r", Files: []string{"z", "w"}}},
	}
	for _, tc := range []struct {
		name      string
		idx       *render.Index
		unchanged map[string]bool
	}{
		{"nothing unchanged", d.index, map[string]bool{}},
		{"one cluster unchanged", d.index, map[string]bool{"us-east-1/mc01": true}},
		{"a region unchanged", d.index, map[string]bool{"us-east-1": true}},
		{"every owner unchanged", d.index, all},
		{"a hostile index", twice, map[string]bool{}},
		{"a hostile index, r/b unchanged", twice, map[string]bool{"r/b": true}},
	} {
		owners := tc.idx.Owners()
		want := map[string]string{}
		for p, o := range owners {
			if !tc.unchanged[o] {
				want[p] = o
			}
		}
		got := map[string]string{}
		ownedFiles(tc.idx, owners, tc.unchanged, func(p, owner string) {
			if prev, seen := got[p]; seen && prev == owner {
				return // listed twice for one owner: asCommitted takes it once
			} else if seen {
				t.Errorf("%s: %s given to %s and %s", tc.name, p, prev, owner)
			}
			got[p] = owner
		})
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: files by owner (-Owners +ownedFiles):\n%s", tc.name, d)
		}
	}
}

// TestLoadTakesTheBaseOnlyWhenVouched: the load stage trusts the base's
// index only when nothing vouched against it, and renders the base whole
// when something did (it may still read what the base committed, to settle
// the head's files the base committed as they are, as a whole review does).
func TestLoadTakesTheBaseOnlyWhenVouched(t *testing.T) {
	r, base := fleetRepo(t)
	r.Edit(sectorFile, "order: 7", "order: 7 # edited")
	repo := open(t, r)
	o := Options{Root: r.Dir, Base: "HEAD", Checker: testChecker(t), Render: render.Options{Renderer: testRenderer}, Trusted: true}
	e, err := resolve(repo, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	d := readCommitted(r.Dir, base)
	for _, tc := range []struct {
		unvouched string
		trusted   bool
	}{{"", true}, {"this regionctl is built from modified sources", false}} {
		asked := false
		l, err := load(e, o, fleet.Parse(e.headFS, "config", o.Checker), tc.unvouched, func() committedDeploy { asked = true; return d })
		if err != nil {
			t.Fatal(err)
		}
		if got := l.pair.Trusted != nil; got != tc.trusted || (tc.trusted && !asked) {
			t.Errorf("unvouched %q: trusted %v, asked for the index %v; want %v", tc.unvouched, got, asked, tc.trusted)
		}
		if !tc.trusted && (l.pair.BaseOut == nil || len(l.pair.Unchanged) != 0) {
			t.Errorf("unvouched %q: the base was not rendered whole", tc.unvouched)
		}
		if tc.trusted && len(l.pair.Unchanged) == 0 {
			t.Error("a trusted base left no cluster unrendered")
		}
	}
}

// TestCompareRefusesWhatDoesNotRender: a side whose diagnostics hold an
// error ends the review, named by its label.
func TestCompareRefusesWhatDoesNotRender(t *testing.T) {
	r, _ := fleetRepo(t)
	repo := open(t, r)
	e, err := resolve(repo, Options{Root: r.Dir, Base: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	bad := diag.Diagnostics{{Severity: diag.Error, Summary: "broken"}}
	l := &loaded{pair: &render.Pair{Pair: &fleet.Pair{HeadDiags: bad}, BaseOut: &render.Output{}}}
	_, err = compare(repo, e, Options{}, l, &committedDeploy{}, headState{uncommitted: []string{sectorFile}}, "")
	var nr *NotRendered
	if !errors.As(err, &nr) || !strings.HasPrefix(nr.Label, "working tree (HEAD ") || len(nr.Diags) != 1 {
		t.Errorf("compare of a head that does not render: %v", err)
	}
}

// TestCompareLetsGoOfTheBasesIndex: a review whose base another renderer
// wrote reads the base's committed index.json to take the base's view of
// its files (asCommitted), and keeps nothing of it for the comparison that
// follows, the review's peak: once compare returns, with the loaded pair
// and the committed stage's value still held, the index is collected.
func TestCompareLetsGoOfTheBasesIndex(t *testing.T) {
	r, base := fleetRepo(t)
	r.Edit(sectorFile, "order: 7", "order: 7 # edited")
	repo := open(t, r)
	o := Options{Root: r.Dir, Base: "HEAD", Checker: testChecker(t), Render: render.Options{Renderer: "sha256:another-renderer"}, Trusted: true}
	e, err := resolve(repo, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	d := readCommitted(r.Dir, base)
	if d.err != nil || d.index == nil {
		t.Fatalf("committed: index %v, %v", d.index != nil, d.err)
	}
	index := weak.Make(d.index)
	l, err := load(e, o, fleet.Parse(e.headFS, "config", o.Checker), "", func() committedDeploy { return d })
	if err != nil {
		t.Fatal(err)
	}
	if l.pair.Trusted != nil || l.pair.BaseRendered == "" {
		t.Fatalf("the base of another renderer was trusted (%q)", l.pair.BaseRendered)
	}
	res, err := compare(repo, e, o, l, &d, headState{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || res.Report == nil {
		t.Fatal("no report")
	}
	runtime.GC()
	runtime.GC()
	if index.Value() != nil {
		t.Error("the base's committed index outlives the comparison")
	}
	runtime.KeepAlive(l)
	runtime.KeepAlive(&d)
	runtime.KeepAlive(res)
}
