package tfvars

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/regionctl/regionctl/internal/iampolicy"
)

// direct writes what MarshalJSON writes for a generic value (maps of
// strings to values, lists, strings, booleans, integers, nil): the
// encoder's layout (two-space indent, keys sorted, {} and [] for empty
// collections, null for nil ones), without its reflection. A scalar's
// JSON does not depend on where it stands, so anything but a plain string
// (printable ASCII without a quote or backslash) or an integer is written
// by the encoder itself, alone; a value of another type (a struct, a
// float in a list) is reported as not handled, for the encoder to write
// whole. An IAM policy document (iampolicy.Document) is written as the
// encoder writes its struct (policy). TestDirectIsTheEncoders and
// TestDirectPolicyIsTheEncoders hold the two equal.
func direct(v any) ([]byte, bool) {
	d := directs.Get().(*directWriter)
	d.Out = d.Out[:0]
	ok := d.value(v, 0)
	var out []byte
	if ok {
		out = append(append(make([]byte, 0, len(d.Out)+1), d.Out...), '\n')
	}
	if cap(d.Out) <= 1<<20 {
		directs.Put(d)
	}
	return out, ok
}

var directs = sync.Pool{New: func() any { return &directWriter{JSONWriter: JSONWriter{Out: make([]byte, 0, 4096)}} }}

type directWriter struct {
	JSONWriter
	keys []string
}

func (d *directWriter) value(v any, depth int) bool {
	switch x := v.(type) {
	case nil:
		d.Out = append(d.Out, "null"...)
	case string:
		d.String(x)
	case bool:
		d.Out = strconv.AppendBool(d.Out, x)
	case int:
		d.Out = strconv.AppendInt(d.Out, int64(x), 10)
	case int64:
		d.Out = strconv.AppendInt(d.Out, x, 10)
	case map[string]any:
		if x == nil {
			d.Out = append(d.Out, "null"...)
			return true
		}
		if len(x) == 0 {
			d.Out = append(d.Out, "{}"...)
			return true
		}
		lo := len(d.keys)
		for k := range x {
			d.keys = append(d.keys, k)
		}
		keys := d.keys[lo:]
		slices.Sort(keys)
		defer func() { d.keys = d.keys[:lo] }()
		d.Out = append(d.Out, '{')
		for i, k := range keys {
			d.Field(depth, k, i == 0)
			if !d.value(x[k], depth+1) {
				return false
			}
		}
		d.Newline(depth)
		d.Out = append(d.Out, '}')
	case []any:
		return d.list(x, depth)
	case []string:
		d.Strings(x, depth)
	case iampolicy.Document:
		return d.policy(x, depth)
	default:
		return false
	}
	return true
}

// list writes a list as the encoder does.
func (d *directWriter) list(l []any, depth int) bool {
	return List(&d.JSONWriter, l, depth, func(e any) bool { return d.value(e, depth+1) })
}

// policy writes an IAM policy document as the encoder writes the struct:
// its fields in their order under their JSON names, an omitempty one left
// out when empty, a Principal as its MarshalJSON writes it. That method
// writes by json.Marshal, which escapes <, > and & where the encoder
// here does not: a principal holding one is left to the encoder.
func (d *directWriter) policy(doc iampolicy.Document, depth int) bool {
	d.Out = append(d.Out, '{')
	d.Field(depth, "Version", true)
	d.String(doc.Version)
	if doc.ID != "" {
		d.Field(depth, "Id", false)
		d.String(doc.ID)
	}
	d.Field(depth, "Statement", false)
	switch {
	case doc.Statement == nil:
		d.Out = append(d.Out, "null"...)
	case len(doc.Statement) == 0:
		d.Out = append(d.Out, "[]"...)
	default:
		d.Out = append(d.Out, '[')
		for i, st := range doc.Statement {
			if i > 0 {
				d.Out = append(d.Out, ',')
			}
			d.Newline(depth + 2)
			if !d.statement(st, depth+2) {
				return false
			}
		}
		d.Newline(depth + 1)
		d.Out = append(d.Out, ']')
	}
	d.Newline(depth)
	d.Out = append(d.Out, '}')
	return true
}

func (d *directWriter) statement(st iampolicy.Statement, depth int) bool {
	d.Out = append(d.Out, '{')
	first := true
	if st.Sid != "" {
		d.Field(depth, "Sid", first)
		d.String(st.Sid)
		first = false
	}
	d.Field(depth, "Effect", first)
	d.String(st.Effect)
	if p := st.Principal; p != nil {
		d.Field(depth, "Principal", false)
		if !d.principal(*p, depth+1) {
			return false
		}
	}
	for _, f := range [...]struct {
		key  string
		list iampolicy.Strings
	}{{"Action", st.Action}, {"NotAction", st.NotAction}, {"Resource", st.Resource}, {"NotResource", st.NotResource}} {
		if len(f.list) > 0 {
			d.Field(depth, f.key, false)
			d.Strings(f.list, depth+1)
		}
	}
	if len(st.Condition) > 0 {
		d.Field(depth, "Condition", false)
		d.conditions(st.Condition, depth+1)
	}
	d.Newline(depth)
	d.Out = append(d.Out, '}')
	return true
}

func (d *directWriter) principal(p iampolicy.Principal, depth int) bool {
	if p.Any {
		d.Out = append(d.Out, `"*"`...)
		return true
	}
	first := true
	for _, f := range [...]struct {
		key  string
		list iampolicy.Strings
	}{{"AWS", p.AWS}, {"Service", p.Service}, {"Federated", p.Federated}} {
		if len(f.list) == 0 {
			continue
		}
		for _, s := range f.list {
			if strings.ContainsAny(s, "<>&") {
				return false
			}
		}
		if first {
			d.Out = append(d.Out, '{')
		}
		d.Field(depth, f.key, first)
		d.Strings(f.list, depth+1)
		first = false
	}
	if first {
		d.Out = append(d.Out, "{}"...)
		return true
	}
	d.Newline(depth)
	d.Out = append(d.Out, '}')
	return true
}

// conditions writes a statement's Condition, a map of maps of lists.
func (d *directWriter) conditions(c map[string]map[string]iampolicy.Strings, depth int) {
	d.Out = append(d.Out, '{')
	for i, op := range slices.Sorted(maps.Keys(c)) {
		d.Field(depth, op, i == 0)
		keys := c[op]
		switch {
		case keys == nil:
			d.Out = append(d.Out, "null"...)
			continue
		case len(keys) == 0:
			d.Out = append(d.Out, "{}"...)
			continue
		}
		d.Out = append(d.Out, '{')
		for j, k := range slices.Sorted(maps.Keys(keys)) {
			d.Field(depth+1, k, j == 0)
			d.Strings(keys[k], depth+2)
		}
		d.Newline(depth + 1)
		d.Out = append(d.Out, '}')
	}
	d.Newline(depth)
	d.Out = append(d.Out, '}')
}

// JSONWriter appends JSON in the layout of every JSON file of deploy/
// (MarshalJSON's: two spaces a level, ": " after a key, {} and [] for
// empty collections, null for nil ones): the pieces that the writers which
// bypass the encoder share (direct, and index.json's in package render).
type JSONWriter struct{ Out []byte }

// Newline ends a line and indents the next to depth.
func (w *JSONWriter) Newline(depth int) {
	w.Out = append(w.Out, '\n')
	for range depth {
		w.Out = append(w.Out, ' ', ' ')
	}
}

// Field starts a member of the object at depth: a comma unless it is the
// first, its line, its key.
func (w *JSONWriter) Field(depth int, key string, first bool) {
	if !first {
		w.Out = append(w.Out, ',')
	}
	w.Newline(depth + 1)
	w.String(key)
	w.Out = append(w.Out, ':', ' ')
}

// String writes s (AppendString).
func (w *JSONWriter) String(s string) { w.Out = AppendString(w.Out, s) }

// Strings writes the list l standing at depth.
func (w *JSONWriter) Strings(l []string, depth int) {
	List(w, l, depth, func(e string) bool { w.String(e); return true })
}

// List writes the list l standing at depth, each item by item on its own
// line (false: it could not, and List stops): null when l is nil, []
// when empty.
func List[T any](w *JSONWriter, l []T, depth int, item func(T) bool) bool {
	switch {
	case l == nil:
		w.Out = append(w.Out, "null"...)
		return true
	case len(l) == 0:
		w.Out = append(w.Out, "[]"...)
		return true
	}
	w.Out = append(w.Out, '[')
	for i, e := range l {
		if i > 0 {
			w.Out = append(w.Out, ',')
		}
		w.Newline(depth + 1)
		if !item(e) {
			return false
		}
	}
	w.Newline(depth)
	w.Out = append(w.Out, ']')
	return true
}

// AppendString appends s as every JSON file of deploy/ writes a string
// (MarshalJSON): a plain one (printable ASCII without a quote or a
// backslash, as paths, names and hashes are) in quotes, any other as the
// encoder writes it alone, which a string's JSON, wherever it stands, is.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			out, _ := encoders.Encode(s, func(j []byte) ([]byte, error) { return append(b, j[:len(j)-1]...), nil })
			return out // a string always encodes
		}
	}
	return append(append(append(b, '"'), s...), '"')
}
