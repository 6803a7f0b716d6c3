package encode

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Document is a value that builds its own tree for YAML: the nodes its
// JSON encoding would give the direct writer, built from its fields
// without the JSON text in between (encoding by reflection, then reading
// the text back took two thirds of the encoding of a cluster's Argo CD
// documents). A type implements it only alongside the JSON encoding it
// mirrors: YAML writes what it built only when the build says it could,
// and otherwise encodes v by its JSON, so a tree may decline anything it
// does not mirror exactly. Each Document's tests hold Built to ViaJSON.
type Document interface {
	// BuildYAML adds the document's members to t, whose top mapping is
	// open; what the JSON encoding would leave out (omitempty) it leaves
	// out too.
	BuildYAML(t *Tree)
}

// Tree is a document being built for the direct writer: each call adds a
// member to the collection open last (its key is ignored in a sequence).
// The first thing it cannot mirror exactly (a float, a string that is not
// UTF-8, a type it does not know) spoils it, and YAML then encodes the
// document by its JSON.
type Tree struct {
	w     *writer
	open  []int32 // the collections being built, the innermost last
	spoil bool
}

// add appends a node to the collection open last.
func (t *Tree) add(kind byte, key, text string) int32 {
	at := int32(len(t.w.nodes))
	if n := len(t.open); n > 0 {
		t.w.nodes[t.open[n-1]].n++
	}
	t.w.nodes = append(t.w.nodes, node{kind: kind, key: key, text: text, end: at + 1})
	return at
}

// Map opens a mapping under key; End closes it.
func (t *Tree) Map(key string) {
	if len(t.open) >= maxDepth {
		t.spoil = true
	}
	t.open = append(t.open, t.add('{', key, ""))
}

// Seq opens a sequence under key; End closes it.
func (t *Tree) Seq(key string) {
	if len(t.open) >= maxDepth {
		t.spoil = true
	}
	t.open = append(t.open, t.add('[', key, ""))
}

// End closes the collection opened last.
func (t *Tree) End() {
	n := len(t.open) - 1
	if n < 0 {
		t.spoil = true
		return
	}
	t.w.nodes[t.open[n]].end = int32(len(t.w.nodes))
	t.open = t.open[:n]
}

// Str adds a string, as JSON encodes a Go string: one that is not UTF-8
// (which JSON would change) spoils the tree.
func (t *Tree) Str(key, s string) {
	if !utf8.ValidString(s) {
		t.spoil = true
	}
	t.add('"', key, s)
}

// Bool adds a boolean.
func (t *Tree) Bool(key string, b bool) {
	if b {
		t.add('t', key, "")
	} else {
		t.add('f', key, "")
	}
}

// Int adds an integer.
func (t *Tree) Int(key string, i int64) {
	t.add('0', key, strconv.FormatInt(i, 10))
}

// Null adds null: a nil pointer, slice or map that JSON does not leave
// out.
func (t *Tree) Null(key string) { t.add('n', key, "") }

// Strs adds a []string as JSON encodes one: null when nil.
func (t *Tree) Strs(key string, l []string) {
	List(t, key, l, func(s string) { t.Str("", s) })
}

// List adds a slice as JSON encodes one, each item by add: null when
// nil.
func List[T any](t *Tree, key string, l []T, add func(T)) {
	if l == nil {
		t.Null(key)
		return
	}
	t.Seq(key)
	for _, e := range l {
		add(e)
	}
	t.End()
}

// StrMap adds a map[string]string as JSON encodes one: null when nil.
// Its order is the writer's to make.
func (t *Tree) StrMap(key string, m map[string]string) {
	mapping(t, key, m, t.Str)
}

// mapping adds a map as JSON encodes one, each member by add: null when
// nil. Its order is the writer's to make.
func mapping[V any](t *Tree, key string, m map[string]V, add func(k string, v V)) {
	if m == nil {
		t.Null(key)
		return
	}
	t.Map(key)
	for k, v := range m {
		add(k, v)
	}
	t.End()
}

// Value adds a generic value as JSON encodes it: maps of strings to
// values or strings, slices of values, strings or such maps, strings,
// booleans, integers, json.Number integers and nil. Anything else (a
// float, whose JSON text the writer leaves to the library anyway; a type
// with its own encoding) spoils the tree.
func (t *Tree) Value(key string, v any) {
	switch x := v.(type) {
	case nil:
		t.Null(key)
	case string:
		t.Str(key, x)
	case bool:
		t.Bool(key, x)
	case int:
		t.Int(key, int64(x))
	case int64:
		t.Int(key, x)
	case json.Number:
		if _, ok := int64Of(string(x)); !ok {
			t.spoil = true
		}
		t.add('0', key, string(x))
	case map[string]any:
		mapping(t, key, x, t.Value)
	case []any:
		List(t, key, x, func(e any) { t.Value("", e) })
	case map[string]string:
		t.StrMap(key, x)
	case []string:
		t.Strs(key, x)
	case []map[string]any:
		List(t, key, x, func(e map[string]any) { t.Value("", e) })
	case []map[string]string:
		List(t, key, x, func(e map[string]string) { t.StrMap("", e) })
	default:
		t.spoil = true
	}
}

// members is a generic mapping as a Document: YAML builds the tree of a
// map[string]any itself (Value), and takes its JSON path only for what
// Value declines.
type members map[string]any

func (m members) BuildYAML(t *Tree) {
	for k, v := range m {
		t.Value(k, v)
	}
}

// Built is the YAML of d's tree, or false when d spoiled it (or left a
// collection open) and d must be encoded by its JSON. YAML calls it; the
// tests of a Document hold what it writes to ViaJSON's.
func Built(d Document) ([]byte, bool) {
	w := writers.Get().(*writer)
	t := Tree{w: w, open: w.order[:0]}
	t.Map("")
	d.BuildYAML(&t)
	t.End()
	w.order = t.open[:0] // the stack's storage, kept for the next document
	return w.document(!t.spoil && len(t.open) == 0)
}
