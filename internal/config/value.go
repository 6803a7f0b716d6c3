package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/regionctl/regionctl/internal/diag"
)

// Kind is the type of a Value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	List
	Map
)

func (k Kind) String() string {
	return [...]string{"null", "bool", "int", "float", "string", "list", "map"}[k]
}

// Layer names the level of the hierarchy a value came from.
type Layer uint8

const (
	LayerSchema Layer = iota // a default filled in by the #Cluster schema
	LayerPath                // identity derived from a file's path
	LayerGlobal
	LayerSector
	LayerRegion
	LayerCluster
)

func (l Layer) String() string {
	return [...]string{"schema", "path", "global", "sector", "region", "cluster"}[l]
}

// Origin is where a value was set.
type Origin struct {
	Layer Layer
	Pos   diag.Pos
}

func (o Origin) String() string { return o.Pos.String() + " (" + o.Layer.String() + ")" }

// Value is one node of a config tree. Values are immutable once built: merge
// shares unchanged subtrees between clusters.
//
// A large fleet holds millions of Values, so the rare parts live apart: a
// float's bits share Int, and what a merge replaced or removed (Overrode,
// Removed) hangs off a pointer that most values leave nil.
type Value struct {
	Kind   Kind
	Bool   bool
	Int    int64 // Int; a Float's IEEE 754 bits (Float, NewFloat)
	Str    string
	Items  []*Value // List
	Fields []Field  // Map, sorted by key
	Origin Origin
	// Template is the text as written when Str came from ${...} interpolation.
	Template string
	merged   *merged
}

// merged is what a merge left behind under a value.
type merged struct {
	removed  []Field
	overrode []*Value
}

// NewFloat returns a float value.
func NewFloat(f float64, o Origin) *Value {
	return &Value{Kind: Float, Int: int64(math.Float64bits(f)), Origin: o}
}

// Float is a Float value's number (0 for other kinds).
func (v *Value) Float() float64 {
	if v.Kind != Float {
		return 0
	}
	return math.Float64frombits(uint64(v.Int))
}

// Removed holds the keys an explicit null removed from a map, with the
// position of that null, so a missing key can point at its removal.
func (v *Value) Removed() []Field {
	if v.merged == nil {
		return nil
	}
	return v.merged.removed
}

// Overrode lists the values this one replaced in lower layers, nearest
// first.
func (v *Value) Overrode() []*Value {
	if v.merged == nil {
		return nil
	}
	return v.merged.overrode
}

// Field is one key of a map with the position of the key itself.
type Field struct {
	Key    string
	KeyPos diag.Pos
	Value  *Value
}

// Get returns the value under key, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Map {
		return nil
	}
	i := sort.Search(len(v.Fields), func(i int) bool { return v.Fields[i].Key >= key })
	if i < len(v.Fields) && v.Fields[i].Key == key {
		return v.Fields[i].Value
	}
	return nil
}

// Field returns the field under key and whether it exists.
func (v *Value) Field(key string) (Field, bool) {
	if v == nil || v.Kind != Map {
		return Field{}, false
	}
	i := sort.Search(len(v.Fields), func(i int) bool { return v.Fields[i].Key >= key })
	if i < len(v.Fields) && v.Fields[i].Key == key {
		return v.Fields[i], true
	}
	return Field{}, false
}

// Lookup follows a path of map keys and list indexes (as decimal strings).
func (v *Value) Lookup(path ...string) *Value {
	for _, p := range path {
		if v == nil {
			return nil
		}
		switch v.Kind {
		case Map:
			v = v.Get(p)
		case List:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(v.Items) {
				return nil
			}
			v = v.Items[i]
		default:
			return nil
		}
	}
	return v
}

// Interface converts v to plain Go values (map[string]any, []any, string,
// int64, float64, bool, nil) for encoders.
func (v *Value) Interface() any {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case Bool:
		return v.Bool
	case Int:
		return v.Int
	case Float:
		return v.Float()
	case String:
		return v.Str
	case List:
		out := make([]any, len(v.Items))
		for i, it := range v.Items {
			out[i] = it.Interface()
		}
		return out
	case Map:
		out := make(map[string]any, len(v.Fields))
		for _, f := range v.Fields {
			out[f.Key] = f.Value.Interface()
		}
		return out
	}
	return nil
}

// Scalar formats a scalar for people: strings quoted, numbers and booleans
// as YAML writes them. Maps and lists are summarised.
func (v *Value) Scalar() string {
	if v == nil {
		return "(unset)"
	}
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		return strconv.FormatBool(v.Bool)
	case Int:
		return strconv.FormatInt(v.Int, 10)
	case Float:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case String:
		return strconv.Quote(v.Str)
	case List:
		parts := make([]string, len(v.Items))
		for i, it := range v.Items {
			parts[i] = it.Scalar()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Map:
		return fmt.Sprintf("{%d keys}", len(v.Fields))
	}
	return "?"
}

// IsScalar reports whether v is neither a map nor a list.
func (v *Value) IsScalar() bool { return v != nil && v.Kind != Map && v.Kind != List }

// Walk calls fn for every leaf (scalar, list or empty map) under v with its
// dotted path, in key order.
func (v *Value) Walk(prefix string, fn func(path string, leaf *Value)) {
	if v == nil {
		return
	}
	if v.Kind != Map || len(v.Fields) == 0 {
		fn(prefix, v)
		return
	}
	for _, f := range v.Fields {
		p := f.Key
		if prefix != "" {
			p = prefix + "." + f.Key
		}
		f.Value.Walk(p, fn)
	}
}

// NewMap builds a map value from fields, sorting them by key.
func NewMap(origin Origin, fields []Field) *Value {
	sort.Slice(fields, func(i, j int) bool { return fields[i].Key < fields[j].Key })
	return &Value{Kind: Map, Fields: fields, Origin: origin}
}

// NewString builds a string value.
func NewString(s string, origin Origin) *Value {
	return &Value{Kind: String, Str: s, Origin: origin}
}

// With returns a copy of map m with key set to val (added or replaced).
func (v *Value) With(key string, keyPos diag.Pos, val *Value) *Value {
	out := *v
	out.Fields = make([]Field, 0, len(v.Fields)+1)
	done := false
	for _, f := range v.Fields {
		if !done && f.Key >= key {
			out.Fields = append(out.Fields, Field{Key: key, KeyPos: keyPos, Value: val})
			done = true
			if f.Key == key {
				continue
			}
		}
		out.Fields = append(out.Fields, f)
	}
	if !done {
		out.Fields = append(out.Fields, Field{Key: key, KeyPos: keyPos, Value: val})
	}
	return &out
}

// WithFields returns a copy of map v with each of fields set (added or
// replaced), as With one at a time would, in one copy: fields are sorted
// by key, each key once. With none, it is v (values are never modified).
func (v *Value) WithFields(fields []Field) *Value {
	if len(fields) == 0 {
		return v
	}
	out := *v
	out.Fields = make([]Field, 0, len(v.Fields)+len(fields))
	i, j := 0, 0
	for i < len(v.Fields) || j < len(fields) {
		switch {
		case j == len(fields) || (i < len(v.Fields) && v.Fields[i].Key < fields[j].Key):
			out.Fields = append(out.Fields, v.Fields[i])
			i++
		case i == len(v.Fields) || fields[j].Key < v.Fields[i].Key:
			out.Fields = append(out.Fields, fields[j])
			j++
		default:
			out.Fields = append(out.Fields, fields[j])
			i++
			j++
		}
	}
	return &out
}

// WithPath returns v with the value at path set to x, or removed when x is
// nil, sharing everything off the path: a map is made where the path
// meets none (v nil or not a map included).
func (v *Value) WithPath(path []string, x *Value) *Value {
	if v == nil || v.Kind != Map {
		v = &Value{Kind: Map}
	}
	if len(path) == 1 {
		if x == nil {
			return v.Without(path[0])
		}
		return v.With(path[0], diag.Pos{}, x)
	}
	child := v.Get(path[0])
	if child == nil && x == nil {
		return v
	}
	return v.With(path[0], diag.Pos{}, child.WithPath(path[1:], x))
}

// Without returns a copy of map v without key.
func (v *Value) Without(key string) *Value {
	out := *v
	out.Fields = make([]Field, 0, len(v.Fields))
	for _, f := range v.Fields {
		if f.Key != key {
			out.Fields = append(out.Fields, f)
		}
	}
	return &out
}
