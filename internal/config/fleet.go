package config

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
)

// Fleet is the resolved hierarchy: sectors in rollout order, regions and
// clusters by name, each cluster with its effective config.
type Fleet struct {
	Docs     *Documents
	Global   *Value // the global files merged, nil when there are none
	Sectors  []*Sector
	Regions  []*Region
	Clusters []*Cluster
}

// Sector is one sector file with its rollout metadata.
type Sector struct {
	Name        string
	Doc         *Document
	Order       int
	Environment string
	Soak        time.Duration
	MaxUpdate   string // "" or an int or percentage, as Argo CD's RollingSync takes it
	// Approval says which Terraform runs of the sector's clusters wait for
	// an approver: "destroys" (the default) or "always".
	Approval string
	base     *Value // global merged with this sector
}

// Region is one region file.
type Region struct {
	Name   string
	Doc    *Document
	Sector *Sector // nil when the region names an unknown sector
	base   *Value  // global, sector and region merged
}

// Cluster is one cluster file with its effective config.
type Cluster struct {
	Name   string
	Region *Region
	Doc    *Document
	Type   string
	// Effective is the merged, interpolated config with identity keys
	// (region, cluster, sector, environment, type). Schema defaults are added
	// by the schema package.
	Effective *Value
	// Merged is Effective as the layers made it, before the schema's
	// defaults: with the schema (the renderer's), all a cluster's config is
	// made of, and so what its input identity digests (MergedDigest). Nil
	// once let go for its digest (Fleet.LetGoOfMerged).
	Merged *Value
	// mergedDigest is MergedDigest's answer once given.
	mergedDigest *[32]byte
	// Partial is set when a layer this cluster is built from is invalid; its
	// effective config is then incomplete and is not checked further.
	Partial bool
	// id is ID, made once when Build makes the cluster: a review asks for
	// it a dozen times a cluster (at 19,215 clusters, a string each).
	id string
}

// layered is c's config as the layers made it: Merged, else Effective
// for a cluster that never had the schema's defaults apart; nil once
// Merged was let go.
func (c *Cluster) layered() *Value {
	switch {
	case c.Merged != nil:
		return c.Merged
	case c.mergedDigest != nil:
		return nil
	}
	return c.Effective
}

// MergedDigest is hashOf (HashWithOrigins, or one that remembers its
// answers) of c's config as the layers made it (Merged, else Effective),
// taken once and kept: the digest outlives Merged (LetGoOfMerged). One
// goroutine at a time may ask a cluster.
func (c *Cluster) MergedDigest(hashOf func(*Value) [32]byte) [32]byte {
	if c.mergedDigest == nil {
		h := hashOf(c.layered())
		c.mergedDigest = &h
	}
	return *c.mergedDigest
}

// LetGoOfMerged keeps the digest of each cluster's config as the layers
// made it (MergedDigest, by hashOf) and lets that config go where the
// schema's defaults made Effective another. Merged then holds the top of
// each config a second time, read for its digest alone: at 19,215
// clusters, some 37 MiB of a review of every cluster. Call it once
// nothing else reads f's clusters and nothing will build a fleet beside
// f: BuildBeside takes the layers' configs, and shares none of one that
// let go of them.
func (f *Fleet) LetGoOfMerged(hashOf func(*Value) [32]byte) {
	par.Do(len(f.Clusters), func(i int) {
		c := f.Clusters[i]
		if c.Merged != nil && c.Merged != c.Effective {
			c.MergedDigest(hashOf)
			c.Merged = nil
		}
	})
}

// ID is region/cluster.
func (c *Cluster) ID() string {
	if c.id != "" {
		return c.id
	}
	return c.Region.Name + "/" + c.Name
}

// Sector returns the cluster's sector name, or "".
func (c *Cluster) SectorName() string {
	if c.Region.Sector == nil {
		return ""
	}
	return c.Region.Sector.Name
}

// Environment returns the cluster's environment, or "".
func (c *Cluster) Environment() string {
	if c.Region.Sector == nil {
		return ""
	}
	return c.Region.Sector.Environment
}

// Bool returns the boolean at a top-level key of the effective config.
func (c *Cluster) Bool(key string) bool {
	v := c.Effective.Get(key)
	return v != nil && v.Kind == Bool && v.Bool
}

// Deleting reports whether the cluster is being deleted: delete: true, or
// delete_pipeline: true, which the schema makes imply it. Asking for either
// key keeps the answer right for a cluster not checked against #Cluster
// (fleet.LoadPair), whose effective config lacks what the schema derives.
func (c *Cluster) Deleting() bool { return c.Bool("delete") || c.Bool("delete_pipeline") }

// NeedsApproval says whether c's Terraform runs wait for an approver to
// approve their reviewed plan: a destroy, or any run of a sector with
// approval: always. A cluster whose pipeline is removed runs no Terraform.
func (c *Cluster) NeedsApproval() bool {
	if c.Bool("delete_pipeline") {
		return false
	}
	return c.Bool("delete") || c.Region != nil && c.Region.Sector != nil && c.Region.Sector.Approval == "always"
}

// Meta keys are read by the hierarchy itself and are not merged as settings.
var metaKeys = map[Layer]map[string]bool{
	LayerGlobal:  {"additional_regions": true, "gitops": true},
	LayerSector:  {"order": true, "environment": true, "soak": true, "max_update": true, "rollout_exceptions": true, "approval": true},
	LayerRegion:  {"sector": true, "region": true},
	LayerCluster: {"type": true, "cluster": true, "region": true},
}

// IdentityKeys are set from paths and the hierarchy, never merged. Sorted:
// effective sets them in one pass (WithFields).
var IdentityKeys = []string{"cluster", "environment", "region", "sector", "type"}

// Build resolves the hierarchy of docs and merges every cluster's effective
// config. It reports unknown sectors, undeclared regions and identity
// contradictions; type problems are the schema package's job.
func Build(docs *Documents) (*Fleet, diag.Diagnostics) { return BuildBeside(docs, nil) }

// BuildBeside is Build of docs, the other end of a review from beside (a
// fleet just built, its effective configs not yet touched by a check): a
// cluster whose layer values are the very values beside's same cluster was
// built from (config.ParseReusing shares the values of identical files)
// takes beside's effective config instead of merging its own, since
// merging and interpolating the same values give the same config. Such a
// cluster's effective config is shared by both fleets; values are never
// modified once built. A nil beside is Build.
func BuildBeside(docs *Documents, beside *Fleet) (*Fleet, diag.Diagnostics) {
	f := &Fleet{Docs: docs}
	globalInvalid := false
	for _, d := range docs.Global {
		globalInvalid = globalInvalid || d.Invalid
		if d.Value != nil {
			f.Global = Merge(f.Global, d.Value)
		}
	}
	sectors, diags := f.buildSectors(strip(f.Global, LayerGlobal))
	regions, ds := f.buildRegions(sectors)
	diags = append(diags, ds...)
	return f, append(diags, f.buildClusters(regions, beside, globalInvalid)...)
}

// buildSectors makes the fleet's sectors, in rollout order, each over the
// global settings; two sectors of one order are an error.
func (f *Fleet) buildSectors(globalSettings *Value) (map[string]*Sector, diag.Diagnostics) {
	var diags diag.Diagnostics
	sectors := map[string]*Sector{}
	byOrder := map[int]*Sector{}
	for _, d := range f.Docs.Sectors {
		s := &Sector{Name: d.Name, Doc: d}
		if v := d.Value.Get("order"); v != nil && v.Kind == Int {
			s.Order = int(v.Int)
			if prev := byOrder[s.Order]; prev != nil {
				dg := diag.Errorf(v.Origin.Pos,
					fmt.Sprintf("Sectors roll out one after another; give %s and %s different orders.", prev.Name, s.Name),
					"sector order %d is already used by sector %s", s.Order, prev.Name)
				dg.Related = []diag.Related{{Pos: prev.Doc.Value.Get("order").Origin.Pos, Message: "order first used here"}}
				diags = append(diags, dg)
			} else {
				byOrder[s.Order] = s
			}
		}
		if v := d.Value.Get("environment"); v != nil && v.Kind == String {
			s.Environment = v.Str
		}
		if v := d.Value.Get("soak"); v != nil && v.Kind == String {
			if dur, err := time.ParseDuration(v.Str); err == nil {
				s.Soak = dur
			}
		}
		s.Approval = "destroys"
		if v := d.Value.Get("approval"); v != nil && v.Kind == String {
			s.Approval = v.Str
		}
		if v := d.Value.Get("max_update"); v != nil && v.IsScalar() && v.Kind != Null {
			s.MaxUpdate = strings.Trim(v.Scalar(), `"`)
		}
		s.base = Merge(globalSettings, settings(d))
		sectors[s.Name] = s
		f.Sectors = append(f.Sectors, s)
	}
	sort.SliceStable(f.Sectors, func(i, j int) bool {
		if f.Sectors[i].Order != f.Sectors[j].Order {
			return f.Sectors[i].Order < f.Sectors[j].Order
		}
		return f.Sectors[i].Name < f.Sectors[j].Name
	})

	return sectors, diags
}

// buildRegions makes the fleet's regions, each in its sector.
func (f *Fleet) buildRegions(sectors map[string]*Sector) (map[string]*Region, diag.Diagnostics) {
	var diags diag.Diagnostics
	regions := map[string]*Region{}
	for _, d := range f.Docs.Regions {
		r := &Region{Name: d.Name, Doc: d}
		regions[r.Name] = r
		f.Regions = append(f.Regions, r)
		diags = append(diags, checkIdentity(d, "region", d.Name, "the file name")...)
		sv := d.Value.Get("sector")
		if sv != nil && sv.Kind == String {
			r.Sector = sectors[sv.Str]
			if r.Sector == nil && !d.InvalidPaths["sector"] {
				diags = append(diags, diag.Errorf(sv.Origin.Pos,
					fmt.Sprintf("Known sectors: %s. Add config/sectors/%s.yaml or name one of them.", sectorNames(f.Sectors), sv.Str),
					"unknown sector %q", sv.Str))
			}
		}
		if r.Sector != nil {
			r.base = Merge(r.Sector.base, settings(d))
		}
	}
	return regions, diags
}

// buildClusters makes the fleet's clusters with their effective configs,
// taking beside's where the inputs are the same; a cluster of an invalid
// layer (globalInvalid: a global one) is Partial.
func (f *Fleet) buildClusters(regions map[string]*Region, beside *Fleet, globalInvalid bool) diag.Diagnostics {
	docs := f.Docs
	var diags diag.Diagnostics
	// The clusters of beside whose effective config may be taken: built
	// without a diagnostic, from the same global values.
	var reused map[string]*Cluster
	if beside != nil && sameValues(docs.Global, beside.Docs.Global) {
		reused = make(map[string]*Cluster, len(beside.Clusters))
		for _, c := range beside.Clusters {
			if !c.Partial && c.Effective != nil && c.Region.Sector != nil {
				reused[c.ID()] = c
			}
		}
	}
	// Each cluster's diagnostics: its identity's, then its effective
	// config's, in the order of the files.
	type built struct {
		c            *Cluster
		diags, merge diag.Diagnostics
	}
	var todo []*built
	for _, d := range docs.Clusters {
		r := regions[d.Dir]
		if r == nil {
			todo = append(todo, &built{diags: diag.Diagnostics{diag.Errorf(diag.Pos{File: d.File},
				fmt.Sprintf("The directory config/clusters/%s/ needs a region file config/regions/%s.yaml that names its sector.", d.Dir, d.Dir),
				"cluster directory for undeclared region %q", d.Dir)}})
			continue
		}
		c := &Cluster{Name: d.Name, Region: r, Doc: d, id: r.Name + "/" + d.Name}
		if t := d.Value.Get("type"); t != nil && t.Kind == String {
			c.Type = t.Str
		}
		b := &built{c: c}
		b.diags = append(b.diags, checkIdentity(d, "cluster", d.Name, "the file name")...)
		b.diags = append(b.diags, checkIdentity(d, "region", d.Dir, "the directory name")...)
		c.Partial = d.Invalid || r.Doc.Invalid || r.Sector == nil || r.Sector.Doc.Invalid || globalInvalid
		if prev := reused[c.ID()]; prev != nil && r.Sector != nil && sameInputs(prev, c) {
			if m := prev.layered(); m != nil {
				c.Effective, c.Merged = m, m
			}
		}
		todo = append(todo, b)
	}
	// The effective configs are merged on every core: each reads only
	// values, which are never modified once built.
	bases := make([]*Value, 0, len(regions))
	for _, r := range regions {
		bases = append(bases, r.base)
	}
	shared := newInterpolated(bases...)
	par.Do(len(todo), func(i int) {
		b := todo[i]
		if b.c == nil || b.c.Effective != nil || b.c.Region.Sector == nil {
			return
		}
		b.c.Effective, b.merge = effective(b.c.Region, b.c, shared)
		b.c.Merged = b.c.Effective
	})
	for _, b := range todo {
		diags = append(diags, b.diags...)
		if b.c == nil {
			continue
		}
		diags = append(diags, b.merge...)
		if b.merge.HasErrors() {
			b.c.Partial = true
		}
		f.Clusters = append(f.Clusters, b.c)
	}
	sort.SliceStable(f.Clusters, func(i, j int) bool {
		if f.Clusters[i].Region.Name != f.Clusters[j].Region.Name {
			return f.Clusters[i].Region.Name < f.Clusters[j].Region.Name
		}
		return f.Clusters[i].Name < f.Clusters[j].Name
	})
	return diags
}

// sameValues reports whether two lists of documents hold the same values
// (the same pointers) in the same order, at the same paths.
func sameValues(a, b []*Document) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Value != b[i].Value || a[i].File != b[i].File {
			return false
		}
	}
	return true
}

// sameInputs reports whether c, of the fleet being built, is made of the
// same values as prev, of the fleet beside it: its cluster, region and
// sector files hold the same values at the same paths (the global files
// were compared already). Everything effective reads comes from those
// values, their paths and the names the paths give.
func sameInputs(prev, c *Cluster) bool {
	same := func(a, b *Document) bool {
		return a.Value == b.Value && a.File == b.File && a.Name == b.Name && a.Dir == b.Dir
	}
	return same(prev.Doc, c.Doc) && same(prev.Region.Doc, c.Region.Doc) && same(prev.Region.Sector.Doc, c.Region.Sector.Doc) &&
		prev.Type == c.Type && prev.Region.Sector.Environment == c.Region.Sector.Environment
}

// effective merges the cluster file over its region's base, adds identity
// and interpolates ${...} references.
func effective(r *Region, c *Cluster, shared *interpolated) (*Value, diag.Diagnostics) {
	d := c.Doc
	v := Merge(r.base, settings(d))
	if v == nil {
		v = NewMap(Origin{Layer: LayerCluster, Pos: diag.Pos{File: d.File}}, nil)
	}
	pathPos := func(file string) Origin { return Origin{Layer: LayerPath, Pos: diag.Pos{File: file}} }
	ident := map[string]*Value{
		"region":      NewString(r.Name, pathPos(r.Doc.File)),
		"cluster":     NewString(c.Name, pathPos(d.File)),
		"sector":      NewString(r.Sector.Name, originOf(r.Doc.Value.Get("sector"), r.Doc)),
		"environment": NewString(r.Sector.Environment, originOf(r.Sector.Doc.Value.Get("environment"), r.Sector.Doc)),
	}
	if t := d.Value.Get("type"); t != nil {
		ident["type"] = t
	}
	// IdentityKeys are sorted: set at once, in one copy of the map.
	fields := make([]Field, 0, len(IdentityKeys))
	for _, k := range IdentityKeys {
		if iv := ident[k]; iv != nil {
			fields = append(fields, Field{Key: k, KeyPos: iv.Origin.Pos, Value: iv})
		}
	}
	v = v.WithFields(fields)
	vars := map[string]string{
		"region": r.Name, "cluster": c.Name, "sector": r.Sector.Name,
		"environment": r.Sector.Environment, "cluster_type": c.Type,
	}
	return interpolateShared(v, vars, shared)
}

func originOf(v *Value, d *Document) Origin {
	if v != nil {
		return v.Origin
	}
	return Origin{Layer: d.Layer, Pos: diag.Pos{File: d.File}}
}

// settings returns the document's value without its layer's meta keys.
func settings(d *Document) *Value { return strip(d.Value, d.Layer) }

func strip(v *Value, layer Layer) *Value {
	if v == nil {
		return nil
	}
	for k := range metaKeys[layer] {
		if v.Get(k) != nil {
			v = v.Without(k)
		}
	}
	return v
}

// checkIdentity reports a layer key that contradicts the name its path gives.
func checkIdentity(d *Document, key, want, from string) diag.Diagnostics {
	v := d.Value.Get(key)
	if v == nil || (v.Kind == String && v.Str == want) {
		return nil
	}
	dg := diag.Errorf(v.Origin.Pos,
		fmt.Sprintf("The %s is %q, given by %s (%s); remove the `%s:` key, it is derived from the path.", key, want, from, d.File, key),
		"%s %s contradicts the path, which says %q", key, v.Scalar(), want)
	dg.Related = []diag.Related{{Pos: diag.Pos{File: d.File}, Message: fmt.Sprintf("the path gives %s %q", key, want)}}
	return diag.Diagnostics{dg}
}

func sectorNames(ss []*Sector) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
