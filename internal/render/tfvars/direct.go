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
	d.out = d.out[:0]
	ok := d.value(v, 0)
	var out []byte
	if ok {
		out = append(append(make([]byte, 0, len(d.out)+1), d.out...), '\n')
	}
	if cap(d.out) <= 1<<20 {
		directs.Put(d)
	}
	return out, ok
}

var directs = sync.Pool{New: func() any { return &directWriter{out: make([]byte, 0, 4096)} }}

type directWriter struct {
	out  []byte
	keys []string
}

func (d *directWriter) newline(depth int) {
	d.out = append(d.out, '\n')
	for range depth {
		d.out = append(d.out, ' ', ' ')
	}
}

func (d *directWriter) value(v any, depth int) bool {
	switch x := v.(type) {
	case nil:
		d.out = append(d.out, "null"...)
	case string:
		return d.str(x)
	case bool:
		d.out = strconv.AppendBool(d.out, x)
	case int:
		d.out = strconv.AppendInt(d.out, int64(x), 10)
	case int64:
		d.out = strconv.AppendInt(d.out, x, 10)
	case map[string]any:
		if x == nil {
			d.out = append(d.out, "null"...)
			return true
		}
		if len(x) == 0 {
			d.out = append(d.out, "{}"...)
			return true
		}
		lo := len(d.keys)
		for k := range x {
			d.keys = append(d.keys, k)
		}
		keys := d.keys[lo:]
		slices.Sort(keys)
		defer func() { d.keys = d.keys[:lo] }()
		d.out = append(d.out, '{')
		for i, k := range keys {
			if i > 0 {
				d.out = append(d.out, ',')
			}
			d.newline(depth + 1)
			if !d.str(k) {
				return false
			}
			d.out = append(d.out, ':', ' ')
			if !d.value(x[k], depth+1) {
				return false
			}
		}
		d.newline(depth)
		d.out = append(d.out, '}')
	case []any:
		return list(d, x, depth)
	case []string:
		return list(d, x, depth)
	case iampolicy.Document:
		return d.policy(x, depth)
	default:
		return false
	}
	return true
}

// list writes a list as the encoder does.
func list[T any](d *directWriter, l []T, depth int) bool {
	switch {
	case l == nil:
		d.out = append(d.out, "null"...)
		return true
	case len(l) == 0:
		d.out = append(d.out, "[]"...)
		return true
	}
	d.out = append(d.out, '[')
	for i, e := range l {
		if i > 0 {
			d.out = append(d.out, ',')
		}
		d.newline(depth + 1)
		if !d.value(e, depth+1) {
			return false
		}
	}
	d.newline(depth)
	d.out = append(d.out, ']')
	return true
}

// policy writes an IAM policy document as the encoder writes the struct:
// its fields in their order under their JSON names, an omitempty one left
// out when empty, a Principal as its MarshalJSON writes it. That method
// writes by json.Marshal, which escapes <, > and & where the encoder
// here does not: a principal holding one is left to the encoder.
func (d *directWriter) policy(doc iampolicy.Document, depth int) bool {
	d.out = append(d.out, '{')
	d.field(depth, "Version", true)
	d.str(doc.Version)
	if doc.ID != "" {
		d.field(depth, "Id", false)
		d.str(doc.ID)
	}
	d.field(depth, "Statement", false)
	switch {
	case doc.Statement == nil:
		d.out = append(d.out, "null"...)
	case len(doc.Statement) == 0:
		d.out = append(d.out, "[]"...)
	default:
		d.out = append(d.out, '[')
		for i, st := range doc.Statement {
			if i > 0 {
				d.out = append(d.out, ',')
			}
			d.newline(depth + 2)
			if !d.statement(st, depth+2) {
				return false
			}
		}
		d.newline(depth + 1)
		d.out = append(d.out, ']')
	}
	d.newline(depth)
	d.out = append(d.out, '}')
	return true
}

func (d *directWriter) statement(st iampolicy.Statement, depth int) bool {
	d.out = append(d.out, '{')
	first := true
	if st.Sid != "" {
		d.field(depth, "Sid", first)
		d.str(st.Sid)
		first = false
	}
	d.field(depth, "Effect", first)
	d.str(st.Effect)
	if p := st.Principal; p != nil {
		d.field(depth, "Principal", false)
		if !d.principal(*p, depth+1) {
			return false
		}
	}
	for _, f := range [...]struct {
		key  string
		list iampolicy.Strings
	}{{"Action", st.Action}, {"NotAction", st.NotAction}, {"Resource", st.Resource}, {"NotResource", st.NotResource}} {
		if len(f.list) > 0 {
			d.field(depth, f.key, false)
			list(d, []string(f.list), depth+1)
		}
	}
	if len(st.Condition) > 0 {
		d.field(depth, "Condition", false)
		d.conditions(st.Condition, depth+1)
	}
	d.newline(depth)
	d.out = append(d.out, '}')
	return true
}

func (d *directWriter) principal(p iampolicy.Principal, depth int) bool {
	if p.Any {
		d.out = append(d.out, `"*"`...)
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
			d.out = append(d.out, '{')
		}
		d.field(depth, f.key, first)
		list(d, []string(f.list), depth+1)
		first = false
	}
	if first {
		d.out = append(d.out, "{}"...)
		return true
	}
	d.newline(depth)
	d.out = append(d.out, '}')
	return true
}

// conditions writes a statement's Condition, a map of maps of lists.
func (d *directWriter) conditions(c map[string]map[string]iampolicy.Strings, depth int) {
	d.out = append(d.out, '{')
	for i, op := range slices.Sorted(maps.Keys(c)) {
		d.field(depth, op, i == 0)
		keys := c[op]
		switch {
		case keys == nil:
			d.out = append(d.out, "null"...)
			continue
		case len(keys) == 0:
			d.out = append(d.out, "{}"...)
			continue
		}
		d.out = append(d.out, '{')
		for j, k := range slices.Sorted(maps.Keys(keys)) {
			d.field(depth+1, k, j == 0)
			list(d, []string(keys[k]), depth+2)
		}
		d.newline(depth + 1)
		d.out = append(d.out, '}')
	}
	d.newline(depth)
	d.out = append(d.out, '}')
}

// field starts a member of the object at depth: a comma unless it is the
// first, its line, its key.
func (d *directWriter) field(depth int, key string, first bool) {
	if !first {
		d.out = append(d.out, ',')
	}
	d.newline(depth + 1)
	d.str(key)
	d.out = append(d.out, ':', ' ')
}

// str writes a string as the encoder does.
func (d *directWriter) str(s string) bool {
	d.out = AppendString(d.out, s)
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
