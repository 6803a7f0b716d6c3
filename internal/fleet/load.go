package fleet

import (
	"io/fs"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/schema"
)

// Load reads the fleet under dir of fsys and validates it. The fleet is
// returned even when diagnostics hold errors, so callers can show what
// loaded; clusters that failed a check are marked Partial.
func Load(fsys fs.FS, dir string, checker *schema.Checker) (*config.Fleet, diag.Diagnostics) {
	return LoadParsed(Parse(fsys, dir, checker), checker)
}

// Parsed is a fleet's layer files as read and decoded, before any check.
type Parsed struct {
	Docs  *config.Documents
	Diags diag.Diagnostics
}

// Parse reads and decodes the layer files under dir of fsys.
func Parse(fsys fs.FS, dir string, checker *schema.Checker) *Parsed {
	docs, diags := config.ParseWith(fsys, dir, checker.DecodeOptions())
	return &Parsed{Docs: docs, Diags: diags}
}

// LoadParsed is Load of files already parsed. It marks the documents that
// fail their layer's check.
func LoadParsed(p *Parsed, checker *schema.Checker) (*config.Fleet, diag.Diagnostics) {
	docs := p.Docs
	diags := append(diag.Diagnostics(nil), p.Diags...)
	diags = append(diags, checker.CheckLayers(docs)...)
	f, ds := config.Build(docs)
	diags = append(diags, ds...)
	diags = append(diags, checker.CheckClusters(f)...)
	diags = append(diags, checker.CheckAWSAndFleets(nil, f)[0]...)
	f.LetGoOfMerged(config.HashWithOrigins)
	return f, diags.Sorted()
}

// LoadLayers reads the fleet under dir of fsys and checks its layer files,
// but not its clusters (#Cluster, AWS's rules, the fleet's): what a
// fleet is needed for without them, such as each cluster's deletion phase,
// which its own file's delete and delete_pipeline give. A file whose blob
// a document of beside has (a fleet already loaded and checked, or nil) is
// decoded once, for both, and not checked again. Its clusters' effective
// configs lack the schema's defaults.
func LoadLayers(fsys fs.FS, dir string, checker *schema.Checker, beside *config.Documents) (*config.Fleet, diag.Diagnostics) {
	docs, diags := config.ParseReusing(fsys, dir, checker.DecodeOptions(), beside)
	return layersParsed(docs, diags, checker, beside)
}

// LoadLayersBeside is LoadLayers beside head, a fleet loaded and checked
// whole with headDiags: when every file is head's byte for byte and head
// loaded without an error (the merge base of a clean checkout of the deploy
// branch is that checkout), the fleet is head itself. Its clusters'
// effective configs then carry the schema's defaults, which LoadLayers'
// lack; the defaults of what its callers ask (delete, delete_pipeline) are
// the values an unset key reads as. A second fleet of 19,215 clusters held
// some 170 MB more at the end of a render.
func LoadLayersBeside(fsys fs.FS, dir string, checker *schema.Checker, head *config.Fleet, headDiags diag.Diagnostics) (*config.Fleet, diag.Diagnostics) {
	docs, diags := config.ParseReusing(fsys, dir, checker.DecodeOptions(), head.Docs)
	if len(diags) == 0 && !headDiags.HasErrors() && sameDocuments(docs, head.Docs) && checkedClean(head) {
		return head, nil
	}
	return layersParsed(docs, diags, checker, head.Docs)
}

// layersParsed is LoadLayers of docs, parsed with diags.
func layersParsed(docs *config.Documents, diags diag.Diagnostics, checker *schema.Checker, beside *config.Documents) (*config.Fleet, diag.Diagnostics) {
	var skip func(*config.Document) bool
	if beside != nil {
		checked := map[string][32]byte{}
		for _, d := range beside.All() {
			if d.Value != nil && !d.Invalid {
				checked[d.File] = d.Hash
			}
		}
		skip = identical(checked)
	}
	diags = append(diags, checker.CheckLayersExcept(docs, skip)...)
	f, ds := config.Build(docs)
	return f, append(diags, ds...).Sorted()
}

// LoadBeside is Load of the fleet under dir of fsys beside head, a fleet
// loaded and checked whole: a file head has byte for byte, as most of a
// merge base's are, is decoded once for both and not checked again
// (LoadLayers), and a cluster whose effective config is head's takes its
// check from the checker's memory; the rest is checked as Load checks it.
// When every file is head's byte for byte (the merge base of a clean
// checkout of the deploy branch is that checkout) and head loaded without
// an error (headDiags, its diagnostics), the fleet is head itself: a
// second fleet of 19,215 clusters would hold some 300 MB more for the same
// answer.
func LoadBeside(fsys fs.FS, dir string, checker *schema.Checker, head *config.Fleet, headDiags diag.Diagnostics) (*config.Fleet, diag.Diagnostics) {
	docs, diags := config.ParseReusing(fsys, dir, checker.DecodeOptions(), head.Docs)
	if len(diags) == 0 && !headDiags.HasErrors() && sameDocuments(docs, head.Docs) && checkedClean(head) {
		return head, nil
	}
	f, diags := layersParsed(docs, diags, checker, head.Docs)
	diags = append(diags, checker.CheckClusters(f)...)
	diags = append(diags, checker.CheckAWSAndFleets(nil, f)[0]...)
	f.LetGoOfMerged(config.HashWithOrigins)
	return f, diags.Sorted()
}

// sameDocuments says a and b are the same files, each holding the very
// value the other decoded (config.ParseReusing shares the value of a file
// whose blob is the same).
func sameDocuments(a, b *config.Documents) bool {
	as, bs := a.All(), b.All()
	if len(as) != len(bs) {
		return false
	}
	for i, d := range as {
		if d.File != bs[i].File || d.Value == nil || d.Value != bs[i].Value {
			return false
		}
	}
	return true
}

// checkedClean says no file and no cluster of f failed a check.
func checkedClean(f *config.Fleet) bool {
	for _, d := range f.Docs.All() {
		if d.Invalid {
			return false
		}
	}
	for _, c := range f.Clusters {
		if c.Partial {
			return false
		}
	}
	return true
}

// Pair is the two ends of a review loaded together.
type Pair struct {
	Base, Head           *config.Fleet
	BaseDiags, HeadDiags diag.Diagnostics
	// Unchanged names the clusters (by ID) whose input identity is the
	// same on both sides (the Identity LoadPair was given): their own
	// files are the same on both sides. A regional cluster is among them
	// only in a region of UnchangedRegions, and is still checked.
	Unchanged map[string]bool
	// UnchangedRegions names the regions whose every cluster, on either side,
	// is so (their regional cluster included): their identity chains are
	// the same on both sides, and their management clusters were checked
	// on neither side against #Cluster, so their effective configs lack
	// the schema's defaults. Regional clusters are always checked: the
	// central pipeline's policy is made of all of them.
	UnchangedRegions map[string]bool
}

// Identity gives a side's clusters their input identity (render's
// ClusterInput): side 0 is the base, 1 the head, f that side's fleet as
// built (before the schema's defaults). The function it returns is called
// from several goroutines at once, once for each cluster.
type Identity func(side int, f *config.Fleet) func(*config.Cluster) string

// LoadPair loads base and the head (parsed, by Parse) for a review and
// validates only what differs between them: a base file whose blob the
// head has at the same path is decoded once, for both; a layer file
// identical (same path, same bytes) on both sides is not checked on either,
// nor is a cluster whose input identity is the same on both sides
// (unchanged). The base is taken to be valid where the change does not
// touch it, as CI held it to be when it merged; what the change touches is
// checked on both sides.
func LoadPair(baseFS fs.FS, parsed *Parsed, dir string, checker *schema.Checker, identity Identity) *Pair {
	return loadPair(baseFS, parsed, dir, checker, identity)
}

// LoadPairWhole loads base and the head as LoadPair does, sharing what is
// the same on both sides (decoded files, effective configs), but checks
// every cluster on both sides and leaves none out: Unchanged and
// UnchangedRegions are empty. A layer file identical on both sides is checked
// on the head's.
func LoadPairWhole(baseFS fs.FS, parsed *Parsed, dir string, checker *schema.Checker) *Pair {
	return loadPair(baseFS, parsed, dir, checker, nil)
}

// loadPair is LoadPair, or LoadPairWhole when identity is nil.
func loadPair(baseFS fs.FS, parsed *Parsed, dir string, checker *schema.Checker, identity Identity) *Pair {
	whole := identity == nil
	// The head is read whole (Parse); the base reads only the files whose
	// blob differs from the head's (most of a review's are the same).
	headDocs, hd := parsed.Docs, append(diag.Diagnostics(nil), parsed.Diags...)
	baseDocs, bd := config.ParseReusing(baseFS, dir, checker.DecodeOptions(), headDocs)
	inBase, inHead := fileHashes(baseDocs), fileHashes(headDocs)
	bd = append(bd, checker.CheckLayersExcept(baseDocs, identical(inHead))...)
	if whole {
		hd = append(hd, checker.CheckLayers(headDocs)...)
	} else {
		hd = append(hd, checker.CheckLayersExcept(headDocs, identical(inBase))...)
	}
	// The head is built first; the base then takes the head's effective
	// config of every cluster made of the same values (most of a review's
	// clusters), sharing it, while the head's configs are digested.
	head, ds := config.Build(headDocs)
	hd = append(hd, ds...)
	if whole {
		return pairWhole(baseDocs, head, checker, bd, hd)
	}
	headKeys := par.Go(func() map[string]string { return inputs(head, identity(1, head)) })
	base, ds := config.BuildBeside(baseDocs, head)
	bd = append(bd, ds...)
	// The base's identities after the head's: the identity function may
	// remember what the two sides share.
	headIDs := headKeys.Wait()
	baseKeys := inputs(base, identity(0, base))
	same := unchangedRegions(base, head, baseKeys, headIDs)
	unchanged := map[string]bool{}
	for _, c := range head.Clusters {
		b, inBase := baseKeys[c.ID()]
		h, inHead := headIDs[c.ID()]
		// A regional cluster runs the central pipeline when its region's
		// identity chain changes, its own config unchanged: only in a
		// region the same on both sides is it certain not to.
		if inBase && inHead && b == h && (c.Type == "management" || same[c.Region.Name]) {
			unchanged[c.ID()] = true
		}
	}
	skip := func(c *config.Cluster) bool { return c.Type == "management" && same[c.Region.Name] }
	bd, hd = checkBeside(checker, base, head, skip, bd, hd)
	rest := checker.CheckAWSAndFleets(skip, base, head)
	bd, hd = append(bd, rest[0]...), append(hd, rest[1]...)
	letGoOfMerged(base, head)
	return &Pair{Base: base, Head: head, BaseDiags: bd.Sorted(), HeadDiags: hd.Sorted(), Unchanged: unchanged, UnchangedRegions: same}
}

// letGoOfMerged lets go of the configs the layers made of a pair's
// clusters (config.Fleet.LetGoOfMerged) once both are checked, each
// shared config digested once.
func letGoOfMerged(base, head *config.Fleet) {
	hashOf := config.RememberingHashWithOrigins()
	base.LetGoOfMerged(hashOf)
	head.LetGoOfMerged(hashOf)
}

// pairWhole is LoadPairWhole's end: the base built beside the head,
// sharing its effective configs, and every cluster of both checked, the
// head's taking the base's check where their configs are one.
func pairWhole(baseDocs *config.Documents, head *config.Fleet, checker *schema.Checker, bd, hd diag.Diagnostics) *Pair {
	base, ds := config.BuildBeside(baseDocs, head)
	bd = append(bd, ds...)
	bd, hd = checkBeside(checker, base, head, nil, bd, hd)
	rest := checker.CheckAWSAndFleets(nil, base, head)
	bd, hd = append(bd, rest[0]...), append(hd, rest[1]...)
	letGoOfMerged(base, head)
	return &Pair{Base: base, Head: head, BaseDiags: bd.Sorted(), HeadDiags: hd.Sorted(), Unchanged: map[string]bool{}, UnchangedRegions: map[string]bool{}}
}

// checkBeside checks the clusters of base and then those of head that skip
// (nil: none) does not name, adding each side's diagnostics to bd and hd.
// The base shares the effective configs of most clusters with the head
// (config.BuildBeside). A check's findings and defaults are a function of
// the config alone: a head cluster whose config the base's check passed
// takes the base's, the schema's defaults in, and is not checked again
// (its config digested, its defaults built and merged a second time); one
// that failed is, and reports on the head's side too. Shared, the checked
// config also tells later readers that the two sides' are one
// (diff.skippedWaves reads it once).
func checkBeside(checker *schema.Checker, base, head *config.Fleet, skip func(*config.Cluster) bool, bd, hd diag.Diagnostics) (diag.Diagnostics, diag.Diagnostics) {
	skipped := func(c *config.Cluster) bool { return skip != nil && skip(c) }
	shared := make(map[*config.Value]*config.Cluster, len(base.Clusters))
	for _, c := range base.Clusters {
		if c.Effective != nil && !c.Partial && !skipped(c) {
			shared[c.Effective] = c
		}
	}
	bd = append(bd, checker.CheckClustersExcept(base, skip)...)
	taken := make(map[*config.Cluster]bool, len(head.Clusters))
	for _, c := range head.Clusters {
		if b := shared[c.Effective]; b != nil && !b.Partial && !c.Partial && !skipped(c) {
			c.Effective = b.Effective
			taken[c] = true
		}
	}
	hd = append(hd, checker.CheckClustersExcept(head, func(c *config.Cluster) bool { return skipped(c) || taken[c] })...)
	return bd, hd
}

// fileHashes are the documents of docs that hold a value, by file.
func fileHashes(docs *config.Documents) map[string][32]byte {
	m := map[string][32]byte{}
	for _, d := range docs.All() {
		if d.Value != nil {
			m[d.File] = d.Hash
		}
	}
	return m
}

// inputs is each cluster's input identity by ID (id's), of the clusters
// built whole, taken on every core: id digests each cluster's config (its
// answers for a config the two sides share are remembered), some 10 ms of
// one core at 2,200 clusters. id is called for each cluster once, from
// several goroutines.
func inputs(f *config.Fleet, id func(*config.Cluster) string) map[string]string {
	ids := make([]string, len(f.Clusters))
	par.Do(len(f.Clusters), func(i int) {
		if c := f.Clusters[i]; !c.Partial && c.Effective != nil {
			ids[i] = id(c)
		}
	})
	m := make(map[string]string, len(f.Clusters))
	for i, c := range f.Clusters {
		if ids[i] != "" {
			m[c.ID()] = ids[i]
		}
	}
	return m
}

// identical reports the documents whose path and bytes the other side has.
func identical(other map[string][32]byte) func(*config.Document) bool {
	return func(d *config.Document) bool {
		h, ok := other[d.File]
		return ok && h == d.Hash
	}
}

// unchangedRegions names the head's regions where every cluster of either side
// has the same effective config on both: a region's identity chain is made
// of all its clusters.
func unchangedRegions(base, head *config.Fleet, baseKeys, headKeys map[string]string) map[string]bool {
	changed := map[string]bool{}
	for _, f := range []*config.Fleet{base, head} {
		for _, c := range f.Clusters {
			b, inBase := baseKeys[c.ID()]
			h, inHead := headKeys[c.ID()]
			if !inBase || !inHead || b != h {
				changed[c.Region.Name] = true
			}
		}
	}
	same := map[string]bool{}
	for _, c := range head.Clusters {
		if !changed[c.Region.Name] {
			same[c.Region.Name] = true
		}
	}
	return same
}
