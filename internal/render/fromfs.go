package render

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sort"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/render/tfvars"
	"github.com/regionctl/regionctl/internal/schema"
)

// Inputs are the directories of a repository a render reads (besides the
// schema and Terraform variables embedded in regionctl).
var Inputs = []string{"config", "charts", tekton.Dir}

// FromFS loads, validates and renders the repository in fsys (a working
// tree or a git tree). The fleet is returned even when it has errors; the
// output is nil then. opts.Charts and opts.Pipelines are read from fsys.
func FromFS(fsys fs.FS, checker *schema.Checker, opts Options) (*config.Fleet, *Output, diag.Diagnostics, error) {
	f, diags := fleet.Load(fsys, "config", checker)
	if diags.HasErrors() {
		return f, nil, diags, nil
	}
	if opts.Loaded != nil {
		opts.Loaded(f, diags)
	}
	charts, err := ReadCharts(fsys)
	if err != nil {
		return f, nil, diags, err
	}
	chartValues, err := ReadChartValues(fsys, charts)
	if err != nil {
		return f, nil, diags, err
	}
	pipelines, err := tekton.ReadPipelines(fsys)
	if err != nil {
		return f, nil, diags, fmt.Errorf("reading %s: %w", tekton.Dir, err)
	}
	opts.Charts, opts.ChartValues, opts.Pipelines = charts, chartValues, pipelines
	out, rdiags := Render(f, opts)
	return f, out, append(diags, rdiags...), nil
}

// Pair is the two renders of a review: the fleets as loaded (Unchanged
// names the clusters neither side rendered, UnchangedRegions the regions whose
// chains neither side rendered; both empty for a whole render), and their
// outputs.
type Pair struct {
	*fleet.Pair
	BaseOut, HeadOut *Output // nil on a side whose diagnostics hold errors
	// Trusted is the base's index.json when trust gave it: written by
	// this renderer.
	Trusted *Index
	// SameChains names the regions, not in UnchangedRegions, whose
	// identity chain is the same on both sides (sameChains): with the
	// base's side taken from what it committed, neither side lists their
	// files, which the head checks and does not render.
	SameChains map[string]bool
	// BaseRendered says why a review that would have taken the base from
	// its committed deploy/ rendered it ("" when it did not, or was not
	// asked to take it: a whole review).
	BaseRendered string
	// BaseAlike counts the clusters such a render left to the head's
	// render (Trust.Committed): their inputs are the same on both sides.
	BaseAlike int
}

// Trust is what a review knows of its base's committed deploy/ once the
// fleets are loaded (FromFSPair's trust).
type Trust struct {
	// Index is the base's index.json when this renderer wrote it and it
	// describes the base's deploy/; else nil, and Why says why.
	Index *Index
	Why   string
	// Committed says the review's base side is the deploy/ the base
	// committed (the files its render names, as committed), not the
	// render's bytes.
	Committed bool
}

// Streams hand the files of a whole review's renders to Sinks
// (Options.Sink), so that neither side's need all be held at once. Base,
// when set, is called before the base renders and returns its Sink (nil for
// none); Head is called before the head renders, after the base, with the
// base's output (nil when the base did not render), and says as well
// whether the bytes of the files the base's render kept (index.json, the
// fleet-wide files: those no Sink took) may be let go before the head
// renders, the caller needing only their paths and owners.
type Streams struct {
	Base func() func([]Artifact) error
	Head func(base *Output) (sink func([]Artifact) error, dropBase bool)
}

// FromFSPair loads and renders the base and head of a review; head is the
// head's fleet as parsed already (fleet.Parse), or nil. trust, when set,
// says what the review knows of the base's committed deploy/ (Trust); it is
// called once the fleets are loaded, so that it may wait for the index to be
// read. With the base's index (trusted), the clusters whose input identities
// are the same on both sides are neither checked nor rendered: they render
// the same on both sides, so they cannot differ. With trusted, the base is
// not rendered at all when its index lists every cluster the base has: the
// review compares the head with what the base committed, and the index names
// those files and their owners (CommittedOutput). Without trusted each side
// is loaded and checked whole, and the head rendered whole; so is the base,
// except, when the review's base side is what it committed (Committed),
// those same clusters and regions: the head's render names their files, the
// same on both sides (withAlike). Streams, when set, take each rendered
// side's files as they are rendered.
func FromFSPair(baseFS, headFS fs.FS, head *fleet.Parsed, checker *schema.Checker, opts Options, trust func() Trust, streams *Streams) (*Pair, error) {
	if head == nil {
		head = fleet.Parse(headFS, "config", checker)
	}
	incremental := trust != nil
	charts, pipelines, err := readSides(baseFS, headFS)
	if err != nil {
		return nil, err
	}
	chartValues, err := readChartValues(baseFS, headFS, charts)
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(baseFS, "config"); errors.Is(err, fs.ErrNotExist) {
		o := opts
		o.Charts, o.ChartValues, o.Pipelines = charts[1], chartValues[1], pipelines[1]
		return firstFleet(head, checker, o), nil
	}
	var ids fleet.Identity
	if incremental {
		if ids, err = identities(opts, charts, chartValues, pipelines); err != nil {
			return nil, err
		}
	}
	p, why, alike, alikeRegions := loadPair(baseFS, head, checker, trust, ids)
	trusted := p.Trusted
	render := func(f *config.Fleet, diags *diag.Diagnostics, i int) *Output {
		o := opts
		o.Charts, o.ChartValues, o.Pipelines = charts[i], chartValues[i], pipelines[i]
		o.Unchanged, o.UnchangedRegions = p.Unchanged, p.UnchangedRegions
		if i == 0 && alike != nil {
			o.Unchanged, o.UnchangedRegions = alike, alikeRegions
		}
		if i == 1 {
			o.SameChains = p.SameChains
		}
		return p.renderSide(f, diags, i, o, streams)
	}
	baseIDs := map[string]bool{}
	if p.Base != nil {
		for _, c := range p.Base.Clusters {
			baseIDs[c.ID()] = true
		}
	}
	if trusted != nil && !p.BaseDiags.HasErrors() && trusted.lists(baseIDs) {
		if !p.HeadDiags.HasErrors() {
			p.SameChains = sameChains(p.Base, p.Head, p.UnchangedRegions, sideInputs(opts, charts, chartValues, pipelines, p.Base, p.Head))
		}
		p.BaseOut = CommittedOutput(trusted, p.Unchanged, union(p.UnchangedRegions, p.SameChains))
	} else {
		p.BaseOut = render(p.Base, &p.BaseDiags, 0)
		if incremental {
			if why == "" {
				why = "the base's deploy/index.json does not list every cluster of the base"
			}
			p.BaseRendered = why
		}
	}
	p.HeadOut = render(p.Head, &p.HeadDiags, 1)
	if alike != nil && p.BaseOut != nil && p.HeadOut != nil {
		p.BaseOut, p.BaseAlike = withAlike(p.BaseOut, p.HeadOut), len(alike)
	}
	return p, nil
}

// sameChains names the regions outside skip (the review's
// UnchangedRegions) whose identity chain the two sides make alike though
// some of their clusters changed, as a change to a sector's EKS settings
// leaves its regions' chains: nil when the sides' fleet inputs differ
// (inputs, sideInputs': a chain's Terraform variables are checked against
// the roots, its Tekton installation made of the gitops settings) or
// either side's chains do not check. A region's files are made of its
// chain, its name and its sector's (regionInputs, the key the cache keeps
// them by) and the fleet inputs, so the base's committed files are the
// head's: the head still builds and checks its chain (regionChains, in
// Render), and renders neither its IAM documents nor its installation.
func sameChains(base, head *config.Fleet, skip map[string]bool, inputs [2]string) map[string]bool {
	if inputs[0] != inputs[1] {
		return nil
	}
	var chains [2]map[string]*chainRegion
	sectors := [2]map[string]string{{}, {}}
	for i, f := range []*config.Fleet{base, head} {
		var ds diag.Diagnostics
		if chains[i], ds = regionChains(f, skip); ds.HasErrors() {
			return nil
		}
		for _, reg := range f.Regions {
			if reg.Sector != nil {
				sectors[i][reg.Name] = reg.Sector.Name
			}
		}
	}
	var same map[string]bool
	for name, h := range chains[1] {
		b := chains[0][name]
		if b == nil || b.Unchanged || h.Unchanged || sectors[0][name] != sectors[1][name] {
			continue
		}
		if (regionInputs{Region: name, Sector: sectors[0][name], Chain: b}).key() == (regionInputs{Region: name, Sector: sectors[1][name], Chain: h}).key() {
			if same == nil {
				same = map[string]bool{}
			}
			same[name] = true
		}
	}
	return same
}

// sideInputs digests each side's fleet inputs (sideDigest).
func sideInputs(opts Options, charts [2][]string, chartValues [2]map[string]*argocd.ChartValues, pipelines [2]tekton.Pipelines, base, head *config.Fleet) [2]string {
	tfc, err := rootsChecker(opts.Roots)
	if err != nil {
		return [2]string{"base", "head"}
	}
	return [2]string{sideDigest(tfc, charts, chartValues, pipelines, 0, base), sideDigest(tfc, charts, chartValues, pipelines, 1, head)}
}

// sideDigest digests side i's fleet inputs (FleetInputs: its charts,
// their values, its Pipelines, the roots, f's gitops settings), for a
// review's identities and sameChains alike.
func sideDigest(tfc *tfvars.Checker, charts [2][]string, chartValues [2]map[string]*argocd.ChartValues, pipelines [2]tekton.Pipelines, i int, f *config.Fleet) string {
	return FleetInputs{Charts: charts[i], ChartValues: chartDigests(chartValues[i]), Pipelines: pipelines[i].Signature(), Roots: tfc.Signature(), GitOps: GitOpsDigest(f)}.Digest()
}

// union is the names of a and b; a itself when b is empty.
func union(a, b map[string]bool) map[string]bool {
	if len(b) == 0 {
		return a
	}
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// withAlike is the base's render with the files the head's render gives
// the owners the base's left out and the head's did not (base.Unchanged,
// which FromFSPair's alike put there): each renders from the same inputs
// on both sides, so the base's render would have given them, byte for
// byte. They are no longer left out.
func withAlike(base, head *Output) *Output {
	arts := append([]Artifact(nil), base.Artifacts...)
	for _, a := range head.Artifacts {
		if a.Owner != "" && base.Unchanged[a.Owner] && !head.Unchanged[a.Owner] {
			arts = append(arts, a)
		}
	}
	sort.Slice(arts, func(i, j int) bool { return arts[i].Path < arts[j].Path })
	unchanged := map[string]bool{}
	for o := range base.Unchanged {
		if head.Unchanged[o] {
			unchanged[o] = true
		}
	}
	c := *base
	c.Artifacts, c.Unchanged = arts, unchanged
	return &c
}

// loadPair loads a review's fleets: whole without trust; with it, leaving
// out what is the same on both sides (fleet.LoadPair) when trust gives the
// base's index (Pair.Trusted) and it lists every cluster left out, else
// whole, then with why (the base's render's reason) and, when the base
// committed its deploy/, the clusters and regions its render may leave to
// the head's: those LoadPair found the same on both sides.
func loadPair(baseFS fs.FS, head *fleet.Parsed, checker *schema.Checker, trust func() Trust, ids fleet.Identity) (p *Pair, why string, alike, alikeRegions map[string]bool) {
	p = &Pair{Pair: &fleet.Pair{}}
	// Nothing checks clusters again once the pair is loaded, however it
	// was: the checker's kept results (its memo, which lets the head take
	// the base's check of a config the two share) go when it returns. At
	// 19,215 clusters they are 30-50 MiB of a live heap near the memory
	// limit, kept to the review's end before.
	defer checker.Forget()
	whole := func() { p.Pair = fleet.LoadPairWhole(baseFS, head, "config", checker) }
	if trust == nil {
		whole()
		return p, "", nil, nil
	}
	p.Pair = fleet.LoadPair(baseFS, head, "config", checker, ids)
	t := trust()
	p.Trusted, why = t.Index, t.Why
	if t.Index != nil && t.Index.lists(p.Unchanged) {
		return p, why, nil, nil
	}
	if t.Index != nil {
		why = "the base's deploy/index.json does not list every cluster whose inputs did not change"
	}
	// The base's deploy/ was not rendered by this renderer, or does not
	// list some unchanged cluster (it was not rendered when committed): its
	// files cannot stand in for a render, so every cluster is checked and
	// rendered, the base's but where its inputs are the head's.
	same, sameRegions := p.Unchanged, p.UnchangedRegions
	// The partial load is garbage once its sets are kept: dropped and
	// collected before the whole load starts, its memory is reused
	// whole instead of leaving the whole load's objects scattered among
	// its freed ones. At 19,215 clusters, kept until whole returned, it
	// raised the live heap to some 650 MiB during the whole load and left
	// some 220 MiB of spans partly empty for the rest of the review: 1,052-
	// 1,059 MiB at the peak against 1,012-1,018 with the collection, 62-69
	// s against 34-57 (three interleaved runs; BENCHMARKS.md).
	p.Pair = &fleet.Pair{}
	runtime.GC()
	whole()
	if t.Committed && !p.BaseDiags.HasErrors() && !p.HeadDiags.HasErrors() {
		return p, why, same, sameRegions
	}
	return p, why, nil, nil
}

// renderSide renders side i of p (0 the base, 1 the head) with opts,
// leaving out the clusters and regions opts names, unless its
// diagnostics hold errors. Streams (when set) take the files as they are
// rendered.
func (p *Pair) renderSide(f *config.Fleet, diags *diag.Diagnostics, i int, opts Options, streams *Streams) *Output {
	if diags.HasErrors() {
		return nil
	}
	if streams != nil {
		if i == 0 && streams.Base != nil {
			opts.Sink = streams.Base()
		} else if i == 1 && streams.Head != nil {
			var drop bool
			opts.Sink, drop = streams.Head(p.BaseOut)
			if drop && p.BaseOut != nil {
				for j := range p.BaseOut.Artifacts {
					p.BaseOut.Artifacts[j].Bytes = nil
				}
			}
		}
	}
	// Unchanged clusters (opts') are not rendered; their regions' chains
	// are, unless the whole region is unchanged.
	out, ds := Render(f, opts)
	*diags = append(*diags, ds...)
	return out
}

// identities gives each side of a review its clusters' input identities
// (ClusterInput), with that side's charts, Pipelines and gitops settings;
// the two sides share the digest of each config they share.
func identities(opts Options, charts [2][]string, chartValues [2]map[string]*argocd.ChartValues, pipelines [2]tekton.Pipelines) (fleet.Identity, error) {
	tfc, err := rootsChecker(opts.Roots)
	if err != nil {
		return nil, err
	}
	hashOf := config.RememberingHashWithOrigins()
	return func(side int, f *config.Fleet) func(*config.Cluster) string {
		digest := sideDigest(tfc, charts, chartValues, pipelines, side, f)
		return func(c *config.Cluster) string { return ClusterInput(digest, c, hashOf) }
	}, nil
}

// readSides reads the charts and Pipelines of a review's base and head.
func readSides(baseFS, headFS fs.FS) (charts [2][]string, pipelines [2]tekton.Pipelines, err error) {
	for i, fsys := range []fs.FS{baseFS, headFS} {
		if charts[i], err = ReadCharts(fsys); err != nil {
			return charts, pipelines, err
		}
		if pipelines[i], err = tekton.ReadPipelines(fsys); err != nil {
			return charts, pipelines, fmt.Errorf("reading %s: %w", tekton.Dir, err)
		}
	}
	return charts, pipelines, nil
}

// readChartValues reads each side's charts' defaults and schemas.
func readChartValues(baseFS, headFS fs.FS, charts [2][]string) (values [2]map[string]*argocd.ChartValues, err error) {
	for i, fsys := range []fs.FS{baseFS, headFS} {
		if values[i], err = ReadChartValues(fsys, charts[i]); err != nil {
			return values, err
		}
	}
	return values, nil
}

// firstFleet is the pair of the first fleet commit: the base holds no
// fleet, so everything the head renders (with opts) is added.
func firstFleet(head *fleet.Parsed, checker *schema.Checker, opts Options) *Pair {
	p := &Pair{Pair: &fleet.Pair{}}
	p.Base = &config.Fleet{Docs: &config.Documents{}}
	p.BaseOut = &Output{Index: &Index{Sectors: []IndexSector{}, Regions: []IndexRegion{}, Clusters: []IndexCluster{}, Files: []string{}}, Unchanged: map[string]bool{}}
	p.Head, p.HeadDiags = fleet.LoadParsed(head, checker)
	if !p.HeadDiags.HasErrors() {
		var ds diag.Diagnostics
		p.HeadOut, ds = Render(p.Head, opts)
		p.HeadDiags = append(p.HeadDiags, ds...)
	}
	return p
}

// lists reports whether the index has an entry for every cluster of ids;
// a nil index lists none.
func (x *Index) lists(ids map[string]bool) bool {
	if len(ids) == 0 {
		return true
	}
	if x == nil {
		return false
	}
	listed := make(map[string]bool, len(x.Clusters))
	for _, c := range x.Clusters {
		listed[c.ID] = true
	}
	for id := range ids {
		if !listed[id] {
			return false
		}
	}
	return true
}

// Owners maps each file the index lists for a cluster or a region to its
// owner (a cluster's ID, a region's name); nil for a nil index.
func (x *Index) Owners() map[string]string {
	if x == nil {
		return nil
	}
	owners := make(map[string]string, len(x.Files))
	for _, c := range x.Clusters {
		for _, f := range c.Files {
			owners[f] = c.ID
		}
	}
	for _, r := range x.Regions {
		for _, f := range r.Files {
			owners[f] = r.Name
		}
	}
	return owners
}

// CommittedOutput is a render's output as a committed index.json lists it:
// the files Render makes with Options.Unchanged and UnchangedRegions set to
// unchanged and unchangedRegions, with their owners and no contents (the
// caller reads the committed files). That is every file but those of the
// clusters in unchanged and of the regions in unchangedRegions.
func CommittedOutput(idx *Index, unchanged, unchangedRegions map[string]bool) *Output {
	owner := idx.Owners()
	var skipped map[string]bool
	if len(unchanged) > 0 || len(unchangedRegions) > 0 {
		skipped = map[string]bool{}
		for _, c := range idx.Clusters {
			if unchanged[c.ID] {
				skipped[c.ID] = true
			}
		}
		for _, r := range idx.Regions {
			if unchangedRegions[r.Name] {
				skipped[r.Name] = true
			}
		}
	}
	arts := make([]Artifact, 0, len(idx.Files)+1)
	for _, f := range idx.Files {
		if o := owner[f]; o == "" || !skipped[o] {
			arts = append(arts, Artifact{Path: f, Owner: o})
		}
	}
	arts = append(arts, Artifact{Path: IndexPath})
	sort.Slice(arts, func(i, j int) bool { return arts[i].Path < arts[j].Path })
	return &Output{Artifacts: arts, Index: idx, Unchanged: skipped}
}
