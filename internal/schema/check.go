package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
)

// Cache stores check results by content key. Implementations must be safe
// for concurrent use; a nil Cache disables caching.
type Cache interface {
	Get(key string) ([]byte, bool)
	Put(key string, value []byte)
}

// Options configure a Checker.
type Options struct {
	Cache   Cache
	Version string // regionctl's version: part of every cache key
	Workers int    // CUE contexts evaluated in parallel; 0 means GOMAXPROCS
}

// Identity is what names the checker's results in its cache: the Version
// it was given.
func (c *Checker) Identity() string { return c.opts.Version }

// Checker validates fleets against the embedded schema. It is safe for use
// by one goroutine at a time; it evaluates in parallel internally.
type Checker struct {
	opts Options
	src  *source
	pool []*compiled
	// memo keeps decoded cluster results for the life of the Checker: the
	// two sides of a review share most clusters.
	memo sync.Map // key → clusterResult
	// layerMemo keeps the findings of each layer file's values.
	layerMemo sync.Map // key → []finding
	// leaves shares the defaults most clusters are given alike (3, false,
	// "per_az", a cluster's name): values are never modified once built.
	leaves sync.Map // leafKey → *config.Value
	// typed memoises StringTyped (layer + path → bool).
	typed   sync.Map
	typedMu sync.Mutex
	// zones is #ZonesPerRegion, read once.
	zones     map[string]int
	zonesOnce sync.Once
}

// New compiles the embedded schema once per worker.
func New(opts Options) (*Checker, error) {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	src, err := loadSource()
	if err != nil {
		return nil, err
	}
	c := &Checker{opts: opts, src: src, pool: make([]*compiled, opts.Workers)}
	errs := make([]error, opts.Workers)
	par.Workers(len(c.pool), len(c.pool), func(_, i int) { c.pool[i], errs[i] = src.compile() })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parallel runs fn for 0..n-1 across the workers, each with its own context.
func (c *Checker) parallel(n int, fn func(w *compiled, i int)) {
	par.Workers(len(c.pool), n, func(w, i int) { fn(c.pool[w], i) })
}

func (c *Checker) key(kind string, parts ...[]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", kind, c.opts.Version)
	h.Write(c.src.hash[:])
	for _, p := range parts {
		h.Write(p)
	}
	return kind + hex.EncodeToString(h.Sum(nil)[:20])
}

// cached returns the result stored under key, or computes and stores it.
func cached[T any](c *Checker, key string, compute func() T) T {
	var out T
	if c.opts.Cache != nil {
		if b, ok := c.opts.Cache.Get(key); ok && json.Unmarshal(b, &out) == nil {
			return out
		}
	}
	out = compute()
	if c.opts.Cache != nil {
		if b, err := json.Marshal(out); err == nil {
			c.opts.Cache.Put(key, b)
		}
	}
	return out
}

// CheckLayers validates each document against its layer's schema (unknown
// keys, types, formats) and marks the documents that fail as Invalid.
func (c *Checker) CheckLayers(docs *config.Documents) diag.Diagnostics {
	return c.CheckLayersExcept(docs, nil)
}

// CheckLayersExcept is CheckLayers for the documents skip does not name (a
// nil skip names none).
func (c *Checker) CheckLayersExcept(docs *config.Documents, skip func(*config.Document) bool) diag.Diagnostics {
	all := docs.All()
	results := make([][]finding, len(all))
	c.parallel(len(all), func(w *compiled, i int) {
		d := all[i]
		if d.Value == nil || (skip != nil && skip(d)) {
			return
		}
		// What the layer's schema says of a file is a function of its
		// values alone (positions are resolved below, per file): files
		// that differ only in comments, layout or place, as most cluster
		// files do, are checked once.
		h := config.Hash(d.Value)
		key := c.key("L", []byte{byte(d.Layer)}, h[:])
		if m, ok := c.layerMemo.Load(key); ok {
			results[i] = m.([]finding)
			return
		}
		results[i] = cached(c, key, func() []finding {
			def := w.layers[d.Layer]
			u := def.Unify(w.ctx.BuildExpr(toCUE(d.Value, true)))
			return w.findingsOf(u.Validate(cue.Concrete(true)), def, d.Value, "in this file")
		})
		c.layerMemo.Store(key, results[i])
	})
	var diags diag.Diagnostics
	for i, fs := range results {
		d := all[i]
		for _, f := range fs {
			diags = append(diags, resolve(f, d.Value, diag.Pos{File: d.File}))
		}
		if len(fs) > 0 {
			d.Invalid = true
			d.InvalidPaths = map[string]bool{}
			for _, f := range fs {
				d.InvalidPaths[strings.Join(f.Path, ".")] = true
			}
		}
	}
	return diags
}

// clusterResult is what #Cluster says of one effective config.
type clusterResult struct {
	Findings []finding      `json:"f,omitempty"`
	Defaults []defaultValue `json:"d,omitempty"`
}

type defaultValue struct {
	Path []string        `json:"p"`
	JSON json.RawMessage `json:"v"`
	Pos  diag.Pos        `json:"pos"`
}

// Forget drops the cluster results the Checker keeps (memo), for a
// process whose loading is done: a cluster checked again is checked again,
// from the cache when it has the result. A review whose base it loads
// whole keeps 30-50 MiB of them at 19,215 clusters, beside a live heap
// near the memory limit.
func (c *Checker) Forget() { c.memo.Clear() }

// Kept is how many cluster results the Checker keeps (Forget drops them).
func (c *Checker) Kept() int {
	n := 0
	c.memo.Range(func(any, any) bool { n++; return true })
	return n
}

// CheckClusters unifies every complete cluster's effective config with
// #Cluster, adds the schema's defaults to it (with the schema as origin) and
// marks clusters that fail as Partial.
func (c *Checker) CheckClusters(f *config.Fleet) diag.Diagnostics {
	return c.CheckClustersExcept(f, nil)
}

// CheckClustersExcept is CheckClusters for the clusters skip does not name
// (a nil skip names none); the others keep their effective config as the
// layers made it, without the schema's defaults.
func (c *Checker) CheckClustersExcept(f *config.Fleet, skip func(*config.Cluster) bool) diag.Diagnostics {
	results := make([]*clusterResult, len(f.Clusters))
	c.parallel(len(f.Clusters), func(w *compiled, i int) {
		cl := f.Clusters[i]
		if cl.Partial || cl.Effective == nil || (skip != nil && skip(cl)) {
			return
		}
		in := w.clusterInput(cl.Effective)
		h := config.Hash(in)
		key := c.key("C", h[:])
		var r clusterResult
		if m, ok := c.memo.Load(key); ok {
			r = m.(clusterResult)
		} else {
			r = cached(c, key, func() clusterResult { return c.clusterCheck(w, in) })
			c.memo.Store(key, r)
		}
		results[i] = &r
	})
	// The schema's defaults go into the clusters that pass once every
	// cluster is checked, on every core: made on the check's workers as
	// each cluster's check ends, they came to 0.15 s less at 19,215
	// clusters, and 60-100 MiB more at a render's peak (the collector
	// meeting its limit sooner), against a bound of 900 MiB; made one
	// cluster after another, they were a serial tenth of a one-sector
	// review's check.
	par.Workers(len(c.pool), len(results), func(_, i int) {
		if r := results[i]; r != nil && len(r.Findings) == 0 && len(r.Defaults) > 0 {
			cl := f.Clusters[i]
			cl.Effective = config.Merge(c.defaultsTree(r.Defaults), cl.Effective)
		}
	})
	var diags diag.Diagnostics
	for i, r := range results {
		cl := f.Clusters[i]
		if r == nil || len(r.Findings) == 0 {
			continue
		}
		for _, fd := range r.Findings {
			d := resolve(fd, cl.Effective, diag.Pos{File: cl.Doc.File})
			d.Detail = fmt.Sprintf("%s (cluster %s)", d.Detail, cl.ID())
			diags = append(diags, d)
		}
		cl.Partial = true
	}
	return diags
}

// clusterCheck checks one cluster's merged config in (clusterInput) against
// #Cluster in two steps, which together find what unifying it with #Cluster
// would: #ClusterRules (the identity, the keys to set, the rules between
// keys, the defaults), then #Settings for only the values no layer check
// saw, the text of its ${...} strings and the defaults the first step filled
// in. Every other value of in came from a layer file that passed #Settings
// in its layer's check (a cluster with a failed file is not checked), so
// holding it to #Settings again would find nothing; skipping it halves the
// step. TestClusterCheckIsCluster holds the two steps to #Cluster. The
// first step is decided in Go (fastRules) for a config that visibly holds
// to #ClusterRules, and by CUE for every other.
func (c *Checker) clusterCheck(w *compiled, in *config.Value) clusterResult {
	var out clusterResult
	var err error
	if ds, ok := w.fast.check(in); ok {
		out.Defaults = w.interned(ds)
	} else {
		u := w.rules.Unify(w.build(in))
		err = u.Validate(cue.Concrete(true))
		w.defaults(u, in, nil, &out.Defaults)
	}
	// The values no layer check saw. A default at a path #Settings does
	// not declare (delete, delete_pipeline) is #ClusterRules' alone.
	var kept []defaultValue
	for _, d := range out.Defaults {
		if w.settingsDeclares(d.Path) {
			kept = append(kept, d)
		}
	}
	unseen := config.Merge(c.defaultsTree(kept), interpolatedOnly(in))
	if unseen != nil && !w.unseenPass(unseen, nil) {
		// Some value fails, or lies where #Settings declares nothing: the
		// findings are those of #Settings whole.
		s := w.settings.Unify(w.ctx.BuildExpr(toCUE(unseen, false)))
		switch serr := s.Validate(cue.Concrete(true)); {
		case serr == nil:
		case err == nil:
			err = serr
		default:
			err = errors.Append(errors.Promote(err, ""), errors.Promote(serr, ""))
		}
	}
	if err != nil {
		return clusterResult{Findings: w.findingsOf(err, w.cluster, in, "in some layer of this cluster (global, sector, region or cluster file)")}
	}
	return out
}

// unseenPass says the values no layer check saw (v, at path p: the
// defaults filled in and the ${...} strings, maps down to them) each pass
// the field #Settings declares at its path: a string of a pattern-only
// field by stringPasses, any other value through CUE, remembered by path
// and value (most are alike in many clusters: 3, "per_az", a region's
// bucket names). #Settings states no rule between fields
// (TestSettingsRelatesNoFields), so this is #Settings' verdict on them
// together, at a tenth of the cost. False when one fails or lies where
// #Settings declares nothing.
func (w *compiled) unseenPass(v *config.Value, p []string) bool {
	if v.Kind == config.Map {
		for _, f := range v.Fields {
			if !w.unseenPass(f.Value, append(p[:len(p):len(p)], f.Key)) {
				return false
			}
		}
		return true
	}
	if v.Kind == config.String {
		if ok, known := w.stringPasses(p, v.Str); known {
			return ok
		}
	}
	key, err := json.Marshal(v.Interface())
	if err != nil {
		return false
	}
	return w.leafPasses(p, string(key), func() cue.Value { return w.ctx.BuildExpr(toCUE(v, false)) })
}

// leafPasses says value (its JSON, and a way to build it) passes the field
// #Settings declares at p, remembering the answer.
func (w *compiled) leafPasses(p []string, value string, build func() cue.Value) bool {
	k := strings.Join(p, "\x00") + "\x01" + value
	if ok, seen := w.leafOK[k]; seen {
		return ok
	}
	s := lookup(w.settings, p)
	ok := s.Exists() && s.Unify(build()).Validate(cue.Concrete(true)) == nil
	w.leafOK[k] = ok
	return ok
}

// stringPasses says string v passes the field #Settings declares at p,
// when that field is patterns only (=~ and !~, as most of #Settings'
// strings are): they are matched here with Go's regexp, which CUE's =~ is,
// without a CUE evaluation per value. known is false for any other field.
// TestStringPassesIsCUEs holds it to CUE's verdict.
func (w *compiled) stringPasses(p []string, v string) (ok, known bool) {
	r := w.stringRule(p)
	if r == nil {
		return false, false
	}
	k := stringVerdict{r, v}
	if ok, seen := w.stringOK[k]; seen {
		return ok, true
	}
	ok = r.passes(v)
	w.stringOK[k] = ok
	return ok, true
}

// stringVerdict keys a string field's rule and a string.
type stringVerdict struct {
	rule *patterns
	s    string
}

// patterns are a string field's rule when it is =~ and !~ alone.
type patterns struct{ match, not []*regexp.Regexp }

// stringRule is the rule #Settings gives the string field at p as
// patterns, or nil when the field is anything else; found once per path.
func (w *compiled) stringRule(p []string) *patterns {
	k := strings.Join(p, "\x00")
	if r, seen := w.rulesAt[k]; seen {
		return r
	}
	var r *patterns
	if s := lookup(w.settings, p); s.Exists() {
		r = patternsOf(s.Eval())
	}
	w.rulesAt[k] = r
	return r
}

// patternsOf reads s as a conjunction of =~ and !~ with literal patterns,
// or returns nil.
func patternsOf(s cue.Value) *patterns {
	op, args := s.Expr()
	if op != cue.AndOp {
		args = []cue.Value{s}
	}
	r := &patterns{}
	for _, a := range args {
		aop, operands := a.Expr()
		if (aop != cue.RegexMatchOp && aop != cue.NotRegexMatchOp) || len(operands) != 1 {
			return nil
		}
		pat, err := operands[0].String()
		if err != nil {
			return nil
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil
		}
		if aop == cue.RegexMatchOp {
			r.match = append(r.match, re)
		} else {
			r.not = append(r.not, re)
		}
	}
	if len(r.match)+len(r.not) == 0 {
		return nil
	}
	return r
}

// settingsDeclares says #Settings declares a field at path p.
func (w *compiled) settingsDeclares(p []string) bool {
	k := strings.Join(p, "\x00")
	in, ok := w.inSettings[k]
	if !ok {
		in = lookup(w.settings, p).Exists()
		w.inSettings[k] = in
	}
	return in
}

// clusterInput is the part of an effective config the #Cluster step must
// see: everything but the layer-decided keys, of which only the interpolated
// strings (and the mappings around them) are kept, since their final text
// is known only now.
func (w *compiled) clusterInput(eff *config.Value) *config.Value {
	in := eff
	for _, f := range eff.Fields {
		if !w.layerDecided[f.Key] {
			continue
		}
		if kept := interpolatedOnly(f.Value); kept != nil {
			in = in.With(f.Key, f.KeyPos, kept)
		} else {
			in = in.Without(f.Key)
		}
	}
	return in
}

// interpolatedOnly returns v pruned to its interpolated strings, or nil when
// it holds none. A list is kept whole, since its items are positional.
func interpolatedOnly(v *config.Value) *config.Value {
	switch v.Kind {
	case config.String:
		if v.Template != "" {
			return v
		}
	case config.List:
		for _, it := range v.Items {
			if interpolatedOnly(it) != nil {
				return v
			}
		}
	case config.Map:
		var fields []config.Field
		for _, f := range v.Fields {
			if kept := interpolatedOnly(f.Value); kept != nil {
				f.Value = kept
				fields = append(fields, f)
			}
		}
		if fields != nil {
			out := *v
			out.Fields = fields
			return &out
		}
	}
	return nil
}

// defaults records every field #Cluster filled in that the effective config
// t does not set, in path order. It looks up only the fields the schema
// declares at each level (#Cluster's and #Settings', listed once per
// worker) rather than listing u's, which CUE sorts on every call (a third
// of the step's time); TestDefaultsAsFieldsListsThem holds it to listing
// them.
func (w *compiled) defaults(u cue.Value, t *config.Value, p []string, out *[]defaultValue) {
	names, paths := w.declared(p)
	for i, key := range names {
		child := t.Get(key)
		if child != nil && child.Kind != config.Map {
			continue
		}
		fv := u.LookupPath(cue.MakePath(cue.Str(key)))
		if !fv.Exists() {
			continue
		}
		cp := paths[i]
		if child == nil {
			if d, ok := defaultAt(fv, cp); ok {
				d.JSON = w.intern(d.JSON)
				*out = append(*out, d)
			}
			continue
		}
		if fv.IncompleteKind() == cue.StructKind {
			w.defaults(fv, child, cp, out)
		}
	}
}

// intern returns the one copy of a short default value: the memo keeps
// every cluster's defaults.
func (w *compiled) intern(j json.RawMessage) json.RawMessage {
	if len(j) > sharedLeafJSON {
		return j
	}
	if k, seen := w.defaultJSON[string(j)]; seen {
		return k
	}
	w.defaultJSON[string(j)] = j
	return j
}

// interned is ds with each short value interned.
func (w *compiled) interned(ds []defaultValue) []defaultValue {
	for i := range ds {
		ds[i].JSON = w.intern(ds[i].JSON)
	}
	return ds
}

// defaultAt is the value #Cluster gave the field at path p, with the
// position of its default; false when it has no concrete value.
func defaultAt(fv cue.Value, p []string) (defaultValue, bool) {
	b, err := fv.MarshalJSON()
	if err != nil {
		return defaultValue{}, false
	}
	pos := fv.Pos()
	if d, ok := fv.Default(); ok && d.Pos().IsValid() {
		pos = d.Pos() // the *default, not the field's first declaration
	}
	return defaultValue{Path: p, JSON: b, Pos: diag.Pos{File: pos.Filename(), Line: pos.Line(), Col: pos.Column()}}, true
}

// declared lists, sorted, the fields #Cluster declares at path p (its own,
// optional and required ones included), and the path of each, computed
// once per path: every cluster's defaults share these paths.
func (w *compiled) declared(p []string) ([]string, [][]string) {
	k := strings.Join(p, "\x00")
	if d, ok := w.declaredAt[k]; ok {
		return d.names, d.paths
	}
	var names []string
	if it, err := lookup(w.cluster, p).Fields(cue.Optional(true)); err == nil {
		for it.Next() {
			if sel := it.Selector(); sel.LabelType() == cue.StringLabel {
				names = append(names, sel.Unquoted())
			}
		}
	}
	sort.Strings(names)
	paths := make([][]string, len(names))
	for i, name := range names {
		paths[i] = append(append(make([]string, 0, len(p)+1), p...), name)
	}
	if w.declaredAt == nil {
		w.declaredAt = map[string]declaredFields{}
	}
	w.declaredAt[k] = declaredFields{names, paths}
	return names, paths
}

// leafKey is a default's value and where the schema gives it.
type leafKey struct {
	json string
	pos  diag.Pos
}

// sharedLeafJSON is the longest default value shared between clusters:
// longer ones are names derived from a cluster's identity, each its own.
const sharedLeafJSON = 32

// defaultsTree builds the config tree of the schema's defaults. Its maps
// are each cluster's own (a merge takes most of them apart); short values
// are shared between clusters. The tree is what merging each default, as
// a map nesting its value under its path, into the others in turn gives
// (mergedDefaults); built at once where it can be (treeOf), since each
// of those merges copied the maps above it.
func (c *Checker) defaultsTree(ds []defaultValue) *config.Value {
	leaves := make([]placedDefault, 0, len(ds))
	for i, d := range ds {
		if v := c.defaultLeaf(d); v != nil {
			leaves = append(leaves, placedDefault{d, v, i})
		}
	}
	if t, ok := treeOf(leaves); ok {
		return t
	}
	return mergedDefaults(leaves)
}

// placedDefault is a default with its value, and its place among the
// defaults (later ones merge over earlier ones).
type placedDefault struct {
	defaultValue
	value *config.Value
	order int
}

// defaultLeaf is d's value as a config tree (shared between clusters when
// short), or nil when it does not parse.
func (c *Checker) defaultLeaf(d defaultValue) *config.Value {
	o := config.Origin{Layer: config.LayerSchema, Pos: d.Pos}
	var k leafKey
	shared := len(d.JSON) <= sharedLeafJSON
	if shared {
		k = leafKey{json: string(d.JSON), pos: d.Pos}
		if l, ok := c.leaves.Load(k); ok {
			return l.(*config.Value)
		}
	}
	var v *config.Value
	if str, ok := plainJSONString(d.JSON); ok {
		// Most values too long to share are names, plain JSON strings:
		// read without the decoder.
		v = config.FromInterface(str, o)
	} else {
		var raw any
		if err := json.Unmarshal(d.JSON, &raw); err != nil {
			return nil
		}
		v = config.FromInterface(raw, o)
	}
	if shared {
		l, _ := c.leaves.LoadOrStore(k, v)
		v = l.(*config.Value)
	}
	return v
}

// plainJSONString is the string the JSON text j is when j is a string
// without escapes, control characters or bytes that are not UTF-8: its
// text between the quotes, as encoding/json reads it. False for any other
// text, for the decoder to read. TestPlainJSONStringIsTheDecoders holds
// the two together.
func plainJSONString(j []byte) (string, bool) {
	if len(j) < 2 || j[0] != '"' || j[len(j)-1] != '"' {
		return "", false
	}
	body := j[1 : len(j)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// mergedDefaults merges each default, as a map nesting its value under
// its path, over the ones before it.
func mergedDefaults(ds []placedDefault) *config.Value {
	var root *config.Value
	for _, d := range ds {
		o := config.Origin{Layer: config.LayerSchema, Pos: d.Pos}
		v := d.value
		for i := len(d.Path) - 1; i >= 0; i-- {
			v = config.NewMap(o, []config.Field{{Key: d.Path[i], KeyPos: d.Pos, Value: v}})
		}
		root = config.Merge(root, v)
	}
	return root
}

// treeOf builds what mergedDefaults gives, at once, for defaults whose
// paths are set, distinct, none inside another's value, with no null in
// their values (a merge drops nulls): each map takes the origin, and each
// key the position, of the last default under it, as each merge gives
// the upper side's. False for any other defaults, which mergedDefaults
// merges. TestDefaultsTreeIsTheMerges holds the two together.
func treeOf(ds []placedDefault) (*config.Value, bool) {
	if len(ds) == 0 {
		return nil, true
	}
	for _, d := range ds {
		if len(d.Path) == 0 || bytes.Contains(d.JSON, []byte("null")) {
			return nil, false
		}
	}
	sorted := slices.Clone(ds)
	slices.SortStableFunc(sorted, func(a, b placedDefault) int { return slices.Compare(a.Path, b.Path) })
	return treeAt(sorted, 0)
}

// treeAt builds the map of ds (sorted by path, sharing their first depth
// keys) at depth.
func treeAt(ds []placedDefault, depth int) (*config.Value, bool) {
	last := ds[0]
	var fields []config.Field
	for i := 0; i < len(ds); {
		key := ds[i].Path[depth]
		j := i + 1
		for j < len(ds) && ds[j].Path[depth] == key {
			j++
		}
		group := ds[i:j]
		under := group[0]
		for _, d := range group {
			if d.order > under.order {
				under = d
			}
		}
		if under.order > last.order {
			last = under
		}
		var v *config.Value
		switch {
		case len(group) == 1 && len(group[0].Path) == depth+1:
			v = group[0].value
		case len(group[0].Path) == depth+1:
			return nil, false // a default inside another's value, or set twice
		default:
			var ok bool
			if v, ok = treeAt(group, depth+1); !ok {
				return nil, false
			}
		}
		fields = append(fields, config.Field{Key: key, KeyPos: under.Pos, Value: v})
		i = j
	}
	return &config.Value{Kind: config.Map, Origin: config.Origin{Layer: config.LayerSchema, Pos: last.Pos}, Fields: fields}, true
}
