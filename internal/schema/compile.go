package schema

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"

	"github.com/regionctl/regionctl/internal/config"
	cueschema "github.com/regionctl/regionctl/schema"
)

// compiled is the schema evaluated in one cue.Context. A context and its
// values are not safe for concurrent use, so each worker owns one.
type compiled struct {
	ctx     *cue.Context
	root    cue.Value
	layers  map[config.Layer]cue.Value
	cluster cue.Value // #Cluster: what a merged config is
	// rules is #ClusterRules, what a merged config is checked against, and
	// settings #Settings, which the values no layer check saw are held to
	// (clusterCheck).
	rules, settings cue.Value
	fleet           cue.Value
	// inSettings memoises whether #Settings declares a default's path,
	// leafOK whether a value passes the field #Settings declares at a
	// path (leafPasses).
	inSettings map[string]bool
	leafOK     map[string]bool
	// rulesAt memoises the patterns #Settings gives a string field
	// (stringRule); nil for a field of another rule.
	rulesAt map[string]*patterns
	// stringOK memoises the verdict of a string field's patterns on a
	// string (stringPasses): a region's names and buckets come back in
	// each of its clusters.
	stringOK map[stringVerdict]bool
	// layerDecided are the top-level keys #Cluster adds nothing to.
	layerDecided map[string]bool
	// declaredAt memoises declared: the fields #Cluster declares at a path.
	declaredAt map[string]declaredFields
	// defaultJSON holds one copy of each short default value (defaults).
	defaultJSON map[string]json.RawMessage
	// fast decides #ClusterRules for the configs that visibly hold to it;
	// nil when it is off (fastRules).
	fast *fastRules
	// known is #KnownRegions, for fleetHolds; nil when it is off.
	known map[string]bool
}

// declaredFields are the fields #Cluster declares at a path, and the path
// of each.
type declaredFields struct {
	names []string
	paths [][]string
}

// source is the embedded schema text, read once.
type source struct {
	files map[string][]byte
	hash  [32]byte
}

func loadSource() (*source, error) {
	src := &source{files: map[string][]byte{}}
	names, err := fs.Glob(cueschema.FS, "*.cue")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(cueschema.FS, n)
		if err != nil {
			return nil, err
		}
		src.files[n] = b
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	copy(src.hash[:], h.Sum(nil))
	return src, nil
}

// compileEmbedded compiles the embedded schema in a context of its own.
func compileEmbedded() (*compiled, error) {
	src, err := loadSource()
	if err != nil {
		return nil, err
	}
	return src.compile()
}

func (s *source) compile() (*compiled, error) {
	ctx := cuecontext.New()
	inst := build.NewContext().NewInstance("schema", nil)
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := parser.ParseFile(path.Join("schema", n), s.files[n], parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing embedded schema %s: %w", n, err)
		}
		if err := inst.AddSyntax(f); err != nil {
			return nil, fmt.Errorf("adding embedded schema %s: %w", n, err)
		}
	}
	root := ctx.BuildInstance(inst)
	if err := root.Err(); err != nil {
		return nil, fmt.Errorf("compiling embedded schema: %w", err)
	}
	def := func(name string) cue.Value { return root.LookupPath(cue.ParsePath(name)) }
	c := &compiled{
		ctx:  ctx,
		root: root,
		layers: map[config.Layer]cue.Value{
			config.LayerGlobal:  def("#Global"),
			config.LayerSector:  def("#Sector"),
			config.LayerRegion:  def("#Region"),
			config.LayerCluster: def("#ClusterFile"),
		},
		cluster:     def("#Cluster"),
		rules:       def("#ClusterRules"),
		settings:    def("#Settings"),
		fleet:       def("#Fleet"),
		inSettings:  map[string]bool{},
		leafOK:      map[string]bool{},
		rulesAt:     map[string]*patterns{},
		stringOK:    map[stringVerdict]bool{},
		defaultJSON: map[string]json.RawMessage{},
	}
	var decided []string
	if err := def("#LayerDecided").Decode(&decided); err != nil {
		return nil, fmt.Errorf("embedded schema: #LayerDecided: %w", err)
	}
	c.layerDecided = map[string]bool{}
	for _, k := range decided {
		c.layerDecided[k] = true
	}
	for name, v := range map[string]cue.Value{"#Cluster": c.cluster, "#ClusterRules": c.rules, "#Settings": c.settings, "#Fleet": c.fleet} {
		if !v.Exists() {
			return nil, fmt.Errorf("embedded schema has no %s", name)
		}
	}
	c.fast = newFastRules(c, s.files["cluster.cue"])
	c.known = knownIfCurrent(c, s.files["fleet.cue"])
	return c, nil
}

// lookup finds the schema of a config path in def, following optional
// fields and pattern constraints (e.g. components.<name>).
func lookup(def cue.Value, p []string) cue.Value {
	v := def
	for _, sel := range p {
		next := v.LookupPath(cue.MakePath(cue.Str(sel)))
		if !next.Exists() {
			next = v.LookupPath(cue.MakePath(cue.Str(sel).Optional()))
		}
		if !next.Exists() {
			next = v.LookupPath(cue.MakePath(cue.Str(sel).Required()))
		}
		if !next.Exists() {
			next = v.LookupPath(cue.MakePath(cue.AnyString))
		}
		if !next.Exists() {
			next = v.LookupPath(cue.MakePath(cue.AnyIndex))
		}
		if !next.Exists() {
			return next
		}
		v = next
	}
	return v
}

// fieldNames lists the fields a struct schema allows, for "did you mean" help.
func fieldNames(def cue.Value) []string {
	it, err := def.Fields(cue.Optional(true), cue.Definitions(false))
	if err != nil {
		return nil
	}
	var out []string
	for it.Next() {
		out = append(out, strings.TrimRight(it.Selector().String(), "?!"))
	}
	sort.Strings(out)
	return out
}
