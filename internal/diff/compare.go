package diff

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/schema"
	"github.com/regionctl/regionctl/internal/secrets"
)

// Side is one end of a comparison.
type Side struct {
	Label  string // e.g. "abc1234 (merge-base(HEAD, origin/main))"
	Fleet  *config.Fleet
	Output *render.Output
	// Deploy is the committed deploy/ tree of this side (path → git blob
	// hash), for drift detection; nil skips it.
	Deploy map[string]plumbing.Hash
	// Committed and Index describe the base's committed deploy/ when the
	// review left out the clusters whose inputs did not change (the
	// outputs' Unchanged): the git blob hash of each file, and index.json,
	// which says which files are each cluster's. The head's committed files
	// of those clusters are held to the base's instead of to a render.
	Committed map[string]plumbing.Hash
	Index     *render.Index
	// Settled are the files a whole review left out of both outputs, the
	// same on both sides (path → git blob hash): the head's committed
	// files are held to them.
	Settled map[string]plumbing.Hash
	// Blobs, when set, is the git blob hash of each of Output's files
	// (the base as committed): the drift check takes a file's hash from it
	// instead of hashing its bytes, which a review that lists files
	// without their diffs leaves nil where they differ from the head's.
	Blobs map[string]plumbing.Hash
}

// Report is what a change does. Its JSON form is stable (docs/diff-json.md).
type Report struct {
	Base        string   `json:"base"`
	Head        string   `json:"head"`
	Uncommitted []string `json:"uncommitted,omitempty"` // working-tree files included on the head side
	// BaseRendered says why the base was rendered rather than taken from
	// its committed deploy/ ("" when it was taken, or with --full).
	BaseRendered string            `json:"base_rendered,omitempty"`
	Sectors      []SectorSummary   `json:"sectors"`   // rollout order
	Destroyed    []Cluster         `json:"destroyed"` // delete: true newly set, or gone
	Pruned       []string          `json:"pruned"`    // deploy/ files the head no longer renders
	Changes      []ValueChange     `json:"changes"`
	Waves        []SkippedWave     `json:"skipped_waves"`
	Drift        []string          `json:"drift"`       // deploy/ files edited by hand: committed bytes that are neither the base's render nor the head's
	DriftFiles   []FileDiff        `json:"drift_files"` // each drift file as a diff from what config/ renders (a/) to what is committed (b/)
	Stale        int               `json:"stale"`       // deploy/ files the change's config alters that were not re-rendered yet
	Files        []FileDiff        `json:"files"`
	Affected     []AffectedCluster `json:"affected"`
	// Manifests are the objects Argo CD will apply differently, for the
	// Applications of this repository's charts the change alters (render
	// --diff only); ManifestNotes say what was not rendered, or from where.
	Manifests     []ManifestChange `json:"manifests,omitempty"`
	ManifestNotes []string         `json:"manifest_notes,omitempty"`
}

// ManifestChange is one object of an Application's rendered chart that
// changes, and every cluster it changes on alike.
type ManifestChange struct {
	Application string   `json:"application"`
	Object      string   `json:"object"`  // "Kind[.group] [namespace/]name"
	Status      string   `json:"status"`  // added, changed, removed
	Unified     string   `json:"unified"` // of the first cluster, or of Shown
	Clusters    []string `json:"clusters"`
	// Varies says the clusters' diffs remove and add the same lines with
	// other lines around them (a cluster's name nearby); Unified is
	// Shown's.
	Varies bool   `json:"varies,omitempty"`
	Shown  string `json:"shown,omitempty"`
}

// Empty reports whether the change does nothing to the fleet.
func (r *Report) Empty() bool {
	return len(r.Affected) == 0 && len(r.Files) == 0 && len(r.Drift) == 0
}

// Cluster names a cluster.
type Cluster struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Sector      string `json:"sector"`
	Environment string `json:"environment"`
}

// SectorSummary is the blast radius of the change in one sector.
type SectorSummary struct {
	Name        string   `json:"name"`
	Order       int      `json:"order"`
	Environment string   `json:"environment"`
	Regions     []string `json:"regions"` // regions with an affected cluster
	Changed     []string `json:"changed"`
	Added       []string `json:"added"`
	Destroyed   []string `json:"destroyed"`
	Pipelines   []string `json:"pipelines"` // "central us-east-1/regional", ...
}

// ValueChange is one changed value, and every cluster it changes in.
type ValueChange struct {
	Path          string   `json:"path"`
	Old           string   `json:"old"` // as YAML writes it; "(unset)" when absent
	New           string   `json:"new"`
	Origin        string   `json:"origin"`         // file:line:col that set the new value (or removed the old)
	OriginLayer   string   `json:"origin_layer"`   // global, sector, region, cluster, schema
	OriginChanged bool     `json:"origin_changed"` // the origin file is changed by this change
	Clusters      []string `json:"clusters"`
	Sectors       []string `json:"sectors"`
	Rollout       bool     `json:"rollout"` // a versioned value that rolls out by sector
	// Downgrade: the key is ordered (@rollout(order=semver)) and the new
	// value is older than the old one.
	Downgrade bool `json:"downgrade"`
}

// SkippedWave is a versioned value the change gives a sector while an
// earlier sector does not run it.
type SkippedWave struct {
	Key       string   `json:"key"`
	Value     string   `json:"value"`
	Sector    string   `json:"sector"`
	Missing   []string `json:"missing_in"` // earlier sectors without it
	Origin    string   `json:"origin"`     // file:line:col that gives the sector the value
	Pos       diag.Pos `json:"-"`          // Origin as a position
	Exception string   `json:"exception,omitempty"`
}

// FileDiff is one rendered file that changed.
type FileDiff struct {
	Path    string `json:"path"`
	Status  string `json:"status"` // added, changed, removed
	Unified string `json:"unified"`
}

// Status names how a thing present inBase and inHead (not both absent)
// changed: added, removed, or changed.
func Status(inBase, inHead bool) string {
	switch {
	case !inBase:
		return "added"
	case !inHead:
		return "removed"
	}
	return "changed"
}

// Compare reports what changes from base to head. rolloutKeys are the
// schema's @rollout() paths (schema.RolloutKeys). listOnly lists the
// changed files without their unified diffs, for a caller that shows
// none (affected).
func Compare(base, head Side, rolloutKeys []string, listOnly bool) *Report {
	r := &Report{Base: base.Label, Head: head.Label, Destroyed: []Cluster{}, Pruned: []string{}, Changes: []ValueChange{},
		Waves: []SkippedWave{}, Drift: []string{}, DriftFiles: []FileDiff{}, Files: []FileDiff{}}
	// The parts read both sides and write their own fields of r: the
	// files, the config values and the committed tree are compared at once.
	par.All(func() {
		r.Affected = Affected(base.Output, head.Output)
		r.Files, r.Pruned = fileDiffs(base.Output.ByPath(), head.Output.ByPath(), !listOnly)
	}, func() {
		changedInputs := changedFiles(base.Fleet, head.Fleet)
		r.Changes = valueChanges(base.Fleet, head.Fleet, head.Output.Unchanged, changedInputs, rolloutKeys)
		if len(base.Fleet.Clusters) > 0 {
			// With nothing running yet (the first fleet commit) there is no
			// rollout order to keep.
			r.Waves = skippedWaves(base.Fleet, head.Fleet, rolloutKeys)
		}
		r.Destroyed = destroyed(base.Fleet, head.Fleet)
	}, func() {
		r.Drift, r.Stale = drift(head.Deploy, base, head.Output)
	})
	r.Sectors = sectors(head.Fleet, base.Fleet, r.Affected)
	return r
}

func clusterMap(f *config.Fleet) map[string]*config.Cluster {
	m := map[string]*config.Cluster{}
	for _, c := range f.Clusters {
		m[c.ID()] = c
	}
	return m
}

func clusterOf(c *config.Cluster) Cluster {
	return Cluster{ID: c.ID(), Type: c.Type, Sector: c.SectorName(), Environment: c.Environment()}
}

// changedFiles lists the layer files whose bytes differ between the sides.
func changedFiles(base, head *config.Fleet) map[string]bool {
	hashes := func(f *config.Fleet) map[string][32]byte {
		m := map[string][32]byte{}
		for _, d := range f.Docs.All() {
			m[d.File] = d.Hash
		}
		return m
	}
	b, h := hashes(base), hashes(head)
	out := map[string]bool{}
	for f, hh := range h {
		if bh, ok := b[f]; !ok || bh != hh {
			out[f] = true
		}
	}
	for f := range b {
		if _, ok := h[f]; !ok {
			out[f] = true
		}
	}
	return out
}

// valueChanges lists every leaf that differs in clusters present on both
// sides, grouping identical changes from one origin across clusters. The
// clusters in same have identical effective configs by construction.
func valueChanges(base, head *config.Fleet, same, changed map[string]bool, rolloutKeys []string) []ValueChange {
	bm := clusterMap(base)
	groups := map[string]*ValueChange{}
	for _, hc := range head.Clusters {
		bc := bm[hc.ID()]
		if bc == nil || bc.Effective == nil || hc.Effective == nil || same[hc.ID()] {
			continue
		}
		if config.Hash(bc.Effective) == config.Hash(hc.Effective) {
			continue
		}
		leafChanges, ok := changedLeaves(bc.Effective, hc.Effective)
		if !ok {
			leafChanges = changedLeavesByPath(bc.Effective, hc.Effective)
		}
		for _, lc := range leafChanges {
			if lc.nv != nil {
				add(groups, lc.path, lc.ov, lc.nv, lc.nv.Origin, hc, changed, rolloutKeys)
			} else {
				add(groups, lc.path, lc.ov, nil, removalOrigin(hc.Effective, lc.path, hc), hc, changed, rolloutKeys)
			}
		}
	}
	out := make([]ValueChange, 0, len(groups))
	for _, g := range groups {
		sort.Strings(g.Clusters)
		g.Sectors = uniqSorted(g.Sectors)
		out = append(out, *g)
	}
	sortChanges(out)
	return out
}

// sortChanges orders value changes by how many clusters they reach, most
// first, then by what they change.
func sortChanges(out []ValueChange) {
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Clusters) != len(out[j].Clusters) {
			return len(out[i].Clusters) > len(out[j].Clusters)
		}
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		if out[i].New != out[j].New {
			return out[i].New < out[j].New
		}
		// A group is one path, old and new value and origin: those order
		// the groups wholly, so that a report is the same on every run.
		if out[i].Old != out[j].Old {
			return out[i].Old < out[j].Old
		}
		return out[i].Origin < out[j].Origin
	})
}

func add(groups map[string]*ValueChange, p string, ov, nv *config.Value, origin config.Origin, c *config.Cluster, changed map[string]bool, rolloutKeys []string) {
	oldS, newS := "(unset)", "(unset)"
	if ov != nil {
		oldS = ov.Scalar()
	}
	if nv != nil {
		newS = nv.Scalar()
	}
	key := strings.Join([]string{p, oldS, newS, origin.Pos.String()}, "\x00")
	g := groups[key]
	if g == nil {
		g = &ValueChange{Path: p, Old: oldS, New: newS, Origin: origin.Pos.String(), OriginLayer: origin.Layer.String(),
			OriginChanged: changed[origin.Pos.File], Rollout: isRollout(p, rolloutKeys)}
		groups[key] = g
	}
	g.Clusters = append(g.Clusters, c.ID())
	g.Sectors = append(g.Sectors, c.SectorName())
}

// removalOrigin is where a value that disappeared was removed: the null
// that removed it, else the cluster file.
func removalOrigin(eff *config.Value, p string, c *config.Cluster) config.Origin {
	parts := strings.Split(p, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if parent := eff.Lookup(parts[:i]...); parent != nil {
			for _, r := range parent.Removed() {
				if r.Key == parts[i] {
					return config.Origin{Layer: config.LayerPath, Pos: r.KeyPos}
				}
			}
		}
	}
	return config.Origin{Layer: config.LayerCluster, Pos: c.Doc.Value.Origin.Pos}
}

// Redact replaces secret material in a report wherever it would be shown:
// a value that looks like a secret, and any well-known secret format in a
// file diff (a base committed before the scanner, say).
func Redact(r *Report) {
	for i := range r.Changes {
		c := &r.Changes[i]
		c.Old, c.New = redactScalar(c.Path, c.Old), redactScalar(c.Path, c.New)
	}
	for i := range r.Waves {
		r.Waves[i].Value = secrets.Redact(r.Waves[i].Key, r.Waves[i].Value)
	}
	for i := range r.Files {
		r.Files[i].Unified = secrets.Mask(r.Files[i].Unified)
	}
	for i := range r.DriftFiles {
		r.DriftFiles[i].Unified = secrets.Mask(r.DriftFiles[i].Unified)
	}
	for i := range r.Manifests {
		r.Manifests[i].Unified = secrets.Mask(r.Manifests[i].Unified)
	}
}

// DriftDiff is drift file p as a diff from what config/ renders to what
// is committed (either may be absent): the hand edit a reviewer must see.
func DriftDiff(p string, rendered []byte, isRendered bool, committed []byte, isCommitted bool) FileDiff {
	return FileDiff{Path: p, Status: "drift", Unified: unified(p, rendered, committed, isRendered, isCommitted)}
}

func redactScalar(path, s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		if red := secrets.Redact(path, u); red != u {
			return red
		}
		return s
	}
	return secrets.Redact(path, s)
}

// MarkDowngrades flags the value changes of ordered versioned keys (orders:
// schema.RolloutOrders) whose new value is older than the old one, such as
// removing a canary pin that was ahead of the sector.
func MarkDowngrades(r *Report, orders map[string]string) {
	for i := range r.Changes {
		c := &r.Changes[i]
		for key, order := range orders {
			if schema.MatchRolloutKey(key, c.Path) {
				c.Downgrade = schema.Older(order, unquote(c.New), unquote(c.Old))
			}
		}
	}
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

func isRollout(p string, keys []string) bool {
	for _, k := range keys {
		if schema.MatchRolloutKey(k, p) {
			return true
		}
	}
	return false
}

func uniqSorted(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// destroyed lists clusters that get delete: true in head, or whose file is
// gone.
func destroyed(base, head *config.Fleet) []Cluster {
	hm := clusterMap(head)
	out := []Cluster{}
	for _, bc := range base.Clusters {
		hc := hm[bc.ID()]
		switch {
		case hc == nil:
			out = append(out, clusterOf(bc))
		case hc.Deleting() && !bc.Deleting():
			out = append(out, clusterOf(hc))
		}
	}
	return out
}

// fileDiffs lists the changed rendered files, with their unified diffs
// when withUnified, and the files the head prunes.
func fileDiffs(base, head map[string][]byte, withUnified bool) ([]FileDiff, []string) {
	var paths []string
	for p := range head {
		paths = append(paths, p)
	}
	for p := range base {
		if _, ok := head[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	out := []FileDiff{}
	pruned := []string{}
	for _, p := range paths {
		if p == render.IndexPath {
			continue // its changes are the other files' changes
		}
		b, inBase := base[p]
		h, inHead := head[p]
		if inBase && inHead && string(b) == string(h) {
			continue
		}
		if !inHead {
			pruned = append(pruned, p)
		}
		out = append(out, FileDiff{Path: p, Status: Status(inBase, inHead)})
	}
	if withUnified {
		// The diffs are made on every core: a sector's change at 19,215
		// clusters changes 7,700 files, a third of a second of CPU.
		par.Do(len(out), func(i int) {
			p := out[i].Path
			b, inBase := base[p]
			h, inHead := head[p]
			out[i].Unified = unified(p, b, h, inBase, inHead)
		})
	}
	return out, pruned
}

// unified is the diff of one deploy/ file in the form git apply takes:
// /dev/null for the side where the file does not exist, with git's
// new/deleted file mode lines, and git's marker where a side does not end in
// a newline.
func unified(p string, base, head []byte, inBase, inHead bool) string {
	from, to := "a/deploy/"+p, "b/deploy/"+p
	var header string
	switch {
	case !inBase:
		from, header = "/dev/null", "new file mode 100644\n"
	case !inHead:
		to, header = "/dev/null", "deleted file mode 100644\n"
	}
	u := Unified(from, to, base, head, 3)
	if u == "" && inBase && inHead {
		return ""
	}
	return "diff --git a/deploy/" + p + " b/deploy/" + p + "\n" + header + u
}

// Unified is the unified diff of a and b as git writes it (git apply takes
// it): context lines around each change, no line that neither side has,
// and git's marker where a side does not end in a newline. go-udiff (the
// Go tools' diff, maintained) computes and writes it.
func Unified(from, to string, a, b []byte, context int) string {
	u, err := udiff.ToUnified(from, to, string(a), udiff.Lines(string(a), string(b)), context)
	if err != nil {
		// Cannot happen: the edits are a's own.
		return ""
	}
	return u
}

// drift splits the head's deploy/ files that are not what the head renders
// into drift (edited by hand: config did not change them, so base and head
// render them alike) and a count of stale ones (config changed them and
// nobody ran regionctl render yet). The files of clusters the review did
// not render, their inputs being unchanged, are drift where they differ
// from the base's committed files.
func drift(committed map[string]plumbing.Hash, baseSide Side, head *render.Output) ([]string, int) {
	if committed == nil {
		return []string{}, 0
	}
	base := baseSide.Output
	rendered, before := head.ByPath(), base.ByPath()
	d := []string{}
	stale := 0
	reused := reusedFiles(baseSide, head.Unchanged, len(baseSide.Settled))
	for p, h := range baseSide.Settled {
		reused[p] = h
	}
	// covered counts the committed files reused or rendered: when that is
	// all of them (no file of another owner, none added by hand), the
	// last loop would check nothing, and is skipped (200,000 files at
	// 19,215 clusters, two lookups each).
	covered := 0
	for p, want := range reused {
		c, ok := committed[p]
		if ok {
			covered++
		}
		if !ok || c != want {
			d = append(d, p)
		}
	}
	check := func(p string) {
		c, inDeploy := committed[p]
		h, inHead := rendered[p]
		if p == render.IndexPath || (inDeploy == inHead && (!inHead || c == plumbing.ComputeHash(plumbing.BlobObject, h))) {
			return
		}
		b, inBase := before[p]
		switch {
		case inBase == inHead && string(b) == string(h):
			// The change's config does not alter the file: an edit.
			d = append(d, p)
		case inDeploy && (!inBase || c != baseSide.blob(p, b)):
			// The config alters it, but what is committed is neither the
			// base's render nor the head's: an edit inside a cluster the
			// change touches, not a file waiting for its render.
			d = append(d, p)
		default:
			stale++
		}
	}
	for p := range rendered {
		check(p)
		if _, ok := committed[p]; ok {
			if _, isReused := reused[p]; !isReused {
				covered++
			}
		}
	}
	if covered < len(committed) {
		for p := range committed {
			_, isRendered := rendered[p]
			_, isReused := reused[p]
			if !isRendered && !isReused {
				check(p)
			}
		}
	}
	sort.Strings(d)
	return d, stale
}

// blob is the git blob hash of the side's file p, whose bytes are b.
func (s Side) blob(p string, b []byte) plumbing.Hash {
	if h, ok := s.Blobs[p]; ok {
		return h
	}
	return plumbing.ComputeHash(plumbing.BlobObject, b)
}

// reusedFiles are the base's committed files (path → blob hash) of the
// clusters and regions neither side rendered, in a map made at its size
// with room for more besides (a one-region review's holds 25,000 files at
// 2,200 clusters).
func reusedFiles(base Side, skipped map[string]bool, more int) map[string]plumbing.Hash {
	var lists [][]string
	n := more
	if len(skipped) > 0 && base.Index != nil {
		for _, c := range base.Index.Clusters {
			if skipped[c.ID] {
				lists, n = append(lists, c.Files), n+len(c.Files)
			}
		}
		for _, r := range base.Index.Regions {
			if skipped[r.Name] {
				lists, n = append(lists, r.Files), n+len(r.Files)
			}
		}
	}
	out := make(map[string]plumbing.Hash, n)
	for _, files := range lists {
		for _, f := range files {
			if h, ok := base.Committed[f]; ok {
				out[f] = h
			}
		}
	}
	return out
}

// sectors groups the affected clusters by sector in rollout order.
func sectors(head, base *config.Fleet, affected []AffectedCluster) []SectorSummary {
	order := map[string]SectorSummary{}
	for _, f := range []*config.Fleet{base, head} {
		for _, s := range f.Sectors {
			order[s.Name] = SectorSummary{Name: s.Name, Order: s.Order, Environment: s.Environment}
		}
	}
	for _, a := range affected {
		s := order[a.Sector]
		s.Regions = append(s.Regions, a.Region)
		switch a.Change {
		case "added":
			s.Added = append(s.Added, a.ID)
		case "destroyed", "removed":
			s.Destroyed = append(s.Destroyed, a.ID)
		default:
			s.Changed = append(s.Changed, a.ID)
		}
		if a.Pipeline != "none" {
			s.Pipelines = append(s.Pipelines, fmt.Sprintf("%s %s", a.Pipeline, a.ID))
		}
		order[a.Sector] = s
	}
	var out []SectorSummary
	for _, s := range order {
		if len(s.Regions) == 0 {
			continue
		}
		s.Regions = uniqSorted(s.Regions)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	if out == nil {
		out = []SectorSummary{}
	}
	return out
}
