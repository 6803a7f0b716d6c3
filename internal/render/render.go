package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/render/argocd"
	"github.com/regionctl/regionctl/internal/render/effective"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/render/tfvars"
	"github.com/regionctl/regionctl/terraform"
)

// Artifact is one file of deploy/.
type Artifact struct {
	Path  string // relative to deploy/, slash-separated
	Bytes []byte
	Owner string // "region/cluster", "region", or "" for fleet-wide files
	// Sum is the SHA-256 of Bytes when Summed: the render takes it for
	// the hash of a cluster's or region's files (index.json), and the
	// writer of deploy/ keeps it for the render's record, which then
	// need not read the file back.
	Sum    [sha256.Size]byte
	Summed bool
}

// Options configure a render.
type Options struct {
	// Renderer names the renderer (Identity's ID); index.json records it,
	// and a review takes a base's deploy/ on trust only when its index
	// names the same renderer.
	Renderer string
	// Roots holds the Terraform roots whose variables tfvars are checked
	// against; nil means the embedded terraform.Roots.
	Roots fs.FS
	// Cache, when set, keeps each cluster's artifacts by the hash of what
	// they are made of, so an unchanged cluster is not encoded again.
	Cache Cache
	// Charts lists the charts the platform owns under charts/ (ReadCharts):
	// a component without a chart source of its own uses charts/<name>.
	Charts []string
	// ChartValues are the defaults and schema of each chart of Charts
	// (ReadChartValues): a component of such a chart is held to its schema
	// as Helm would hold it. nil checks nothing.
	ChartValues map[string]*argocd.ChartValues
	// Pipelines are the Tekton Pipelines' declared params (tekton.ReadPipelines);
	// every rendered PipelineRun is checked against them. nil renders no
	// PipelineRuns (an empty, non-nil set fails every check).
	Pipelines tekton.Pipelines
	// Memo, when set with Cache, shares decoded artifacts between renders
	// of one invocation (both sides of a review).
	Memo *Memo
	// CacheSalt is mixed into every cache key beside Renderer; the CLI
	// passes a stamp of its own binary when its renderer is not known by
	// its source alone (Renderer.Modified), so that a rebuilt regionctl
	// re-renders.
	CacheSalt string
	// Unchanged names clusters (by ID) not to render: a review leaves out the
	// clusters whose inputs are the same on both sides (fleet.LoadPair).
	Unchanged map[string]bool
	// UnchangedRegions names regions whose identity chain is not rendered
	// either, their every cluster being in Unchanged (whose effective configs
	// need not have been checked then). A region's chain is made of all its
	// clusters, so a region not named here is rendered whole.
	UnchangedRegions map[string]bool
	// SameChains names regions whose chains are built and checked but not
	// rendered (Output.Unchanged names them): a review's regions whose
	// chain is the same on both sides (sameChains), the base's committed
	// files standing for theirs.
	SameChains map[string]bool
	// Sink, when set, is handed each region's and cluster's files as soon
	// as they are rendered (from several goroutines at once), and the
	// Output keeps only their paths and owners: a fleet's files need not
	// all be held at once (deploytree.Stream). The fleet-wide files and
	// index.json stay in the Output whole. An error from Sink ends the
	// render with it. Memo is not used with a Sink, which would hold them.
	Sink func([]Artifact) error
	// NoIndexBytes leaves index.json's bytes out of the Output (an
	// artifact with its path and no bytes, as CommittedOutput gives the
	// base's); Output.Index is whole. A review reads the Index and never
	// index.json's text, which at 19,215 clusters is 80 ms to encode.
	NoIndexBytes bool
	// Loaded, when set, is called by FromFS once the fleet is loaded
	// without errors, with its diagnostics, before anything renders: a
	// caller may start work that needs only the fleet as loaded beside the
	// render. It must not modify the fleet, which the render reads from
	// several goroutines at once.
	Loaded func(*config.Fleet, diag.Diagnostics)
}

// Cache stores rendered artifacts by key; safe for concurrent use.
type Cache interface {
	Get(key string) ([]byte, bool)
	Put(key string, value []byte)
}

// Output is a rendered fleet.
type Output struct {
	Artifacts []Artifact // sorted by path, index.json included
	Index     *Index
	// Unchanged are the clusters Options.Unchanged left out, and the regions
	// whose management clusters all were (by name): their files are
	// missing and their index entries have no files or hash. Such an output
	// is for comparison only and is never written.
	Unchanged map[string]bool
}

// ByPath returns the artifacts as a map from path to bytes.
func (o *Output) ByPath() map[string][]byte {
	m := make(map[string][]byte, len(o.Artifacts))
	for _, a := range o.Artifacts {
		m[a.Path] = a.Bytes
	}
	return m
}

// Render compiles a fleet that validated without errors. Problems found by
// the artifacts' own checks come back as diagnostics at the config file
// responsible, and no output.
func Render(f *config.Fleet, opts Options) (*Output, diag.Diagnostics) {
	for _, c := range f.Clusters {
		if opts.Unchanged[c.ID()] {
			continue
		}
		if c.Partial || c.Effective == nil {
			return nil, diag.Diagnostics{diag.Errorf(diag.Pos{File: c.Doc.File},
				"Run `regionctl validate` and fix its errors first.", "cluster %s has config errors; nothing was rendered", c.ID())}
		}
	}
	tfc, err := rootsChecker(opts.Roots)
	if err != nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Pos{File: "terraform"}, err.Error(), "cannot read the Terraform roots' variables")}
	}
	if opts.Sink != nil {
		opts.Memo = nil
	}
	g := GitOpsOf(f)
	r := &renderer{tf: tfc, opts: opts, source: tekton.Source{RepoURL: g.RepoURL, Revision: g.Revision}, gitops: g}
	r.gitopsDigest = GitOpsDigest(f)
	r.fleetDigest = r.fleetInputs().Digest()
	sink := &sinker{fn: opts.Sink}
	chains, diags := regionChains(f, opts.UnchangedRegions)
	if diags.HasErrors() {
		return nil, diags
	}
	for name := range opts.SameChains {
		if cr := chains[name]; cr != nil {
			cr.Unchanged = true
		}
	}
	// The regions' files and the clusters' are made at once: the end of
	// the regions' (the central files, the installations, their hashes)
	// runs on one core, which the clusters' workers then share.
	type regionResult struct {
		arts   []Artifact
		hashes map[string]string
		diags  diag.Diagnostics
	}
	regions := par.Go(func() regionResult {
		arts, hashes, ds := r.regionFiles(f, chains, sink)
		return regionResult{arts, hashes, ds}
	})
	clusters, inputs, hashes, ds := r.clusterFiles(f, sink)
	rr := regions.Wait()
	arts, regionHashes := rr.arts, rr.hashes
	diags = append(diags, rr.diags...)
	if err := sink.failed(); err != nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Pos{File: "deploy"}, err.Error(), "cannot write or compare the rendered files")}
	}
	arts = append(arts, clusters...)
	diags = append(diags, ds...)
	a, ds := r.centralArgo(f)
	arts = append(arts, a...)
	diags = append(diags, ds...)
	if diags.HasErrors() {
		return nil, diags
	}
	arts, _ = r.held(arts, nil) // the central and installation files
	slices.SortFunc(arts, byPath)
	idx := buildIndex(f, arts, opts.Renderer, inputs, hashes, regionHashes)
	if opts.NoIndexBytes {
		arts = append(arts, Artifact{Path: IndexPath})
	} else {
		b, err := MarshalIndex(idx)
		if err != nil {
			return nil, diag.Diagnostics{diag.Errorf(diag.Pos{File: "deploy/index.json"}, err.Error(), "cannot encode index.json")}
		}
		index, _ := r.held([]Artifact{{Path: IndexPath, Bytes: b}}, nil)
		arts = append(arts, index...)
	}
	// The index joins files in path order: one pass places it.
	for i := len(arts) - 1; i > 0 && byPath(arts[i-1], arts[i]) > 0; i-- {
		arts[i-1], arts[i] = arts[i], arts[i-1]
	}
	return &Output{Artifacts: arts, Index: idx, Unchanged: unchangedOf(opts.Unchanged, chains)}, diags
}

// unchangedOf names what a render left out: the clusters of skip and the
// regions whose chains it did not render; nil when it left out nothing.
func unchangedOf(skip map[string]bool, chains map[string]*chainRegion) map[string]bool {
	left := len(skip) > 0
	for _, cr := range chains {
		left = left || cr.Unchanged
	}
	if !left {
		return nil
	}
	skipped := map[string]bool{}
	for id := range skip {
		skipped[id] = true
	}
	for name, cr := range chains {
		if cr.Unchanged {
			skipped[name] = true
		}
	}
	return skipped
}

// sinker hands a render's files to Options.Sink (fn) as they are made and
// keeps only their paths and owners; failed gives the first error fn
// returned, after which no more clusters render.
type sinker struct {
	fn  func([]Artifact) error
	mu  sync.Mutex
	err error
}

// take hands arts to the Sink and returns them without their bytes, or as
// they are without one.
func (s *sinker) take(arts []Artifact) []Artifact {
	if s.fn == nil || len(arts) == 0 {
		return arts
	}
	if err := s.fn(arts); err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	kept := make([]Artifact, len(arts))
	for i, a := range arts {
		kept[i] = Artifact{Path: a.Path, Owner: a.Owner}
	}
	return kept
}

func (s *sinker) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// regionFiles renders the central files and each region's (its chain's
// and its Tekton installation's), and gives each region's hash for
// index.json.
func (r *renderer) regionFiles(f *config.Fleet, chains map[string]*chainRegion, sink *sinker) ([]Artifact, map[string]string, diag.Diagnostics) {
	perRegion := make([][]Artifact, len(f.Regions))
	perRegionDiags := make([]diag.Diagnostics, len(f.Regions))
	par.Do(len(f.Regions), func(i int) {
		perRegion[i], perRegionDiags[i] = r.cachedRegion(f.Regions[i], chains[f.Regions[i].Name])
	})
	arts, diags := centralArtifacts(chains)
	installs, ds := installArtifacts(f, chains)
	diags = append(diags, ds...)
	regional := map[string][]Artifact{}
	for _, a := range installs {
		if a.Owner == "" {
			arts = append(arts, a)
		} else {
			regional[a.Owner] = append(regional[a.Owner], a)
		}
	}
	hashes := make(map[string]string, len(f.Regions))
	for i, reg := range f.Regions {
		diags = append(diags, perRegionDiags[i]...)
		own := append(append([]Artifact(nil), perRegion[i]...), regional[reg.Name]...)
		sumAll(own)
		hashes[reg.Name] = hashSorted(own)
		arts = append(arts, sink.take(own)...)
	}
	return arts, hashes, diags
}

// clusterFiles renders every cluster not skipped, on every core, and gives
// each cluster's input identity and the hash of its files for index.json.
func (r *renderer) clusterFiles(f *config.Fleet, sink *sinker) ([]Artifact, map[string]string, map[string]string, diag.Diagnostics) {
	perCluster := make([][]Artifact, len(f.Clusters))
	perDiags := make([]diag.Diagnostics, len(f.Clusters))
	perInput := make([]string, len(f.Clusters))
	perHash := make([]string, len(f.Clusters))
	par.Do(len(f.Clusters), func(i int) {
		if sink.failed() == nil && !r.opts.Unchanged[f.Clusters[i].ID()] {
			perCluster[i], perDiags[i], perInput[i], perHash[i] = r.cluster(f.Clusters[i])
			if !perDiags[i].HasErrors() {
				perCluster[i] = sink.take(perCluster[i])
			}
		}
	})
	var arts []Artifact
	var diags diag.Diagnostics
	inputs := make(map[string]string, len(f.Clusters))
	hashes := make(map[string]string, len(f.Clusters))
	for i, c := range f.Clusters {
		inputs[c.ID()], hashes[c.ID()] = perInput[i], perHash[i]
		arts = append(arts, perCluster[i]...)
		diags = append(diags, perDiags[i]...)
	}
	return arts, inputs, hashes, diags
}

// rootsChecker checks tfvars against roots, or against the embedded roots
// when roots is nil: that checker is made once per process (its
// declarations parsed once, its verdicts shared by every render of it,
// as the two sides of a review are).
func rootsChecker(roots fs.FS) (*tfvars.Checker, error) {
	if roots == nil {
		return embeddedRoots()
	}
	return tfvars.NewChecker(roots)
}

// Prepare reads what every render of the process shares, the embedded
// Terraform roots' declarations (some milliseconds of parsing HCL), ahead of
// the first render: a caller with a core to spare, as a review waiting for
// its layer files is, calls it on a goroutine of its own.
func Prepare() { _, _ = embeddedRoots() }

var embeddedRoots = sync.OnceValues(func() (*tfvars.Checker, error) { return tfvars.NewChecker(terraform.Roots) })

// Memo keeps decoded artifacts of cached clusters for one invocation, keyed
// like the cache (content hashes): the two renders of a review share most
// clusters. Artifacts are never modified once built.
type Memo struct {
	m      sync.Map // key → []Artifact
	hashes sync.Map // key → the hash of those artifacts in index.json
}

// IndexPath is where index.json lives in deploy/.
const IndexPath = "index.json"

type renderer struct {
	tf     *tfvars.Checker
	opts   Options
	source tekton.Source
	gitops argocd.GitOps
	// gitopsDigest digests the fleet's gitops settings (GitOpsDigest);
	// fleetDigest is the fleet part of every cluster's input identity.
	gitopsDigest, fleetDigest string
}

// RegionDir is the directory of a region's files in deploy/.
func RegionDir(environment, region string) string { return path.Join(environment, region) }

// cachedRegion renders a region's artifacts (its identity chain), from the
// cache when its inputs are known.
func (r *renderer) cachedRegion(reg *config.Region, cr *chainRegion) ([]Artifact, diag.Diagnostics) {
	if cr == nil || cr.Unchanged {
		return nil, nil
	}
	if r.opts.Cache == nil && r.opts.Memo == nil {
		return r.held(r.chainArtifacts(reg, cr))
	}
	key := regionInputs{Renderer: r.opts.Renderer + "+" + r.opts.CacheSalt, Region: reg.Name, Sector: reg.Sector.Name, Chain: cr}.key()
	return r.cached(key, func() ([]Artifact, diag.Diagnostics) { return r.held(r.chainArtifacts(reg, cr)) })
}

// held returns arts as the Output keeps them when there is no Sink to take
// them: each file's bytes in a buffer of their size rather than the
// encoder's, which may be several times larger (a review of 19,215
// clusters holds thousands of files).
func (r *renderer) held(arts []Artifact, diags diag.Diagnostics) ([]Artifact, diag.Diagnostics) {
	if r.opts.Sink != nil {
		return arts, diags
	}
	for i, a := range arts {
		if cap(a.Bytes)-len(a.Bytes) > len(a.Bytes)/4 {
			arts[i].Bytes = bytes.Clone(a.Bytes)
		}
	}
	return arts, diags
}

// cluster renders c's artifacts, from the cache when its inputs are known,
// with their hash for index.json.
func (r *renderer) cluster(c *config.Cluster) (arts []Artifact, diags diag.Diagnostics, input, hash string) {
	key, input := r.clusterKey(c)
	if r.opts.Cache == nil && r.opts.Memo == nil {
		arts, diags := r.held(r.renderCluster(c))
		sumAll(arts)
		return arts, diags, input, hashSorted(arts)
	}
	arts, diags = r.cached(key, func() ([]Artifact, diag.Diagnostics) { return r.held(r.renderCluster(c)) })
	if r.opts.Memo == nil || diags.HasErrors() {
		// Without the memo these are this render's own (made or read
		// from the cache): their sums may be kept on them.
		sumAll(arts)
		return arts, diags, input, hashSorted(arts)
	}
	if known, ok := r.opts.Memo.hashes.Load(key); ok {
		return arts, diags, input, known.(string)
	}
	sum := hashSorted(arts)
	r.opts.Memo.hashes.Store(key, sum)
	return arts, diags, input, sum
}

// hashSorted is hashFiles of arts in path order, as index.json lists them.
func hashSorted(arts []Artifact) string {
	sorted := append([]Artifact(nil), arts...)
	slices.SortFunc(sorted, byPath)
	return hashFiles(sorted)
}

// byPath orders artifacts by path, as deploy/ and index.json list them.
func byPath(a, b Artifact) int { return strings.Compare(a.Path, b.Path) }

// sumAll takes the SHA-256 of each of arts that has none, kept on it: arts
// must be the caller's own, not a memo's that another render reads.
func sumAll(arts []Artifact) {
	for i := range arts {
		if !arts[i].Summed {
			arts[i].Sum, arts[i].Summed = sha256.Sum256(arts[i].Bytes), true
		}
	}
}

// cached returns the artifacts stored under key (in this run's memo, then
// the result cache), or makes them and stores them when they have no error.
// Either of the two may be absent.
func (r *renderer) cached(key string, make func() ([]Artifact, diag.Diagnostics)) ([]Artifact, diag.Diagnostics) {
	if r.opts.Memo != nil {
		if m, ok := r.opts.Memo.m.Load(key); ok {
			return m.([]Artifact), nil
		}
	}
	if r.opts.Cache == nil {
		arts, diags := make()
		if !diags.HasErrors() {
			r.remember(key, arts)
		}
		return arts, diags
	}
	if b, ok := r.opts.Cache.Get(key); ok {
		if arts, err := decodeArtifacts(b); err == nil {
			r.remember(key, arts)
			return arts, nil
		}
	}
	arts, diags := make()
	if !diags.HasErrors() {
		r.remember(key, arts)
		r.opts.Cache.Put(key, appendArtifacts(nil, arts))
	}
	return arts, diags
}

func (r *renderer) remember(key string, arts []Artifact) {
	if r.opts.Memo != nil {
		r.opts.Memo.m.Store(key, arts)
	}
}

func (r *renderer) renderCluster(c *config.Cluster) ([]Artifact, diag.Diagnostics) {
	dir := RegionDir(c.Environment(), c.Region.Name)
	at := diag.Pos{File: c.Doc.File}
	eff, err := effective.Render(c)
	if err != nil {
		return nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot render the effective config of %s", c.ID())}
	}
	vars, err := tfvars.ForCluster(c)
	if err != nil {
		return nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot map %s to Terraform variables", c.ID())}
	}
	root := tfvars.RootFor(c.Type)
	if problems := r.tf.Check(root, vars); len(problems) > 0 {
		return nil, diag.Diagnostics{diag.Errorf(at, strings.Join(problems, "\n"), "Terraform variables of %s do not match terraform/%s", c.ID(), root)}
	}
	tb, err := tfvars.Encode(vars)
	if err != nil {
		return nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot encode Terraform variables of %s", c.ID())}
	}
	arts := []Artifact{
		{Path: path.Join(dir, "effective", c.Name+".yaml"), Bytes: eff, Owner: c.ID()},
		{Path: path.Join(dir, "terraform", c.Name+".tfvars.json"), Bytes: tb, Owner: c.ID()},
	}
	if run := tekton.ForCluster(c, path.Join("deploy", dir, "terraform", c.Name+".tfvars.json"), r.source); run != nil && r.opts.Pipelines != nil {
		if problems := tekton.Check(run, r.opts.Pipelines); len(problems) > 0 {
			return nil, diag.Diagnostics{diag.Errorf(at, strings.Join(problems, "\n"), "the PipelineRun of %s does not match its Pipeline in %s", c.ID(), tekton.Dir)}
		}
		pb, err := tekton.Marshal(run)
		if err != nil {
			return nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot encode the PipelineRun of %s", c.ID())}
		}
		arts = append(arts, Artifact{Path: tekton.Path(c.Environment(), c.Region.Name, c.Name), Bytes: pb, Owner: c.ID()})
	}
	if !c.Bool("delete") {
		a, comps, ds := r.clusterArgo(c)
		if ds.HasErrors() {
			return nil, ds
		}
		arts = append(arts, a...)
		if ds := reach(c, comps, arts, r.gitops.Topology); ds.HasErrors() {
			return nil, ds
		}
	}
	return arts, nil
}

// hashFiles digests arts: each one's path, size and SHA-256, so that the
// files are read once, for their own sums (Sum, taken here for any
// without one).
func hashFiles(arts []Artifact) string {
	h := sha256.New()
	var b []byte
	for _, a := range arts {
		sum := a.Sum
		if !a.Summed {
			sum = sha256.Sum256(a.Bytes)
		}
		b = append(append(b[:0], a.Path...), 0)
		b = append(strconv.AppendInt(b, int64(len(a.Bytes)), 10), 0)
		h.Write(append(b, sum[:]...))
	}
	return hex.EncodeToString(h.Sum(nil))
}
