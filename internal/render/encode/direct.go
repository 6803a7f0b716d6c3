package encode

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	yamlv2 "go.yaml.in/yaml/v2"
)

// direct writes the bytes that go.yaml.in/yaml/v2 writes for a document
// decoded from JSON into generic values (map[string]any, []any, string,
// json.Number, bool, nil), without the library's reflection and event
// emitter: the render's largest cost per cluster. It knows the library's
// layout (block mappings with keys in its natural order, sequences in
// mappings not indented, empty collections as {} and []) and writes itself
// only the scalars whose form it can decide exactly: plain strings of a
// known-safe alphabet, integers, booleans and null. Any other string takes
// its form from the library itself (memoised), and a document holding
// anything it cannot place exactly (a float, a literal block, a string the
// library would break in a way it does not, a key too long to be a simple
// key) is reported as not handled, for the library to encode. The
// differential tests hold the two equal.
func direct(doc any) ([]byte, bool) {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	scratch := scratches.Get().(*[]byte)
	w := writer{out: append((*scratch)[:0], Marker...)}
	ok = true
	if len(root) == 0 {
		w.out = append(w.out, "{}\n"...)
	} else {
		ok = w.mapping(root, 0)
	}
	var out []byte
	if ok {
		out = bytes.Clone(w.out) // a buffer of the file's size
	}
	if cap(w.out) <= 1<<20 {
		*scratch = w.out
		scratches.Put(scratch)
	}
	return out, ok
}

// scratches are the buffers documents are written in before they are
// copied out at their size.
var scratches = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// writer appends the YAML. Its methods return false where the document
// has something only the library can place.
type writer struct{ out []byte }

const (
	bestWidth    = 80  // the library's line width: it breaks longer scalars at spaces
	maxSimpleKey = 120 // under the library's 128-character simple key limit
)

func (w *writer) indent(n int) {
	for ; n > 0; n-- {
		w.out = append(w.out, ' ')
	}
}

// mapping writes a non-empty object's entries at column col, the first
// one where the writer stands (after a sequence's "- ", or indented by
// the caller).
func (w *writer) mapping(m map[string]any, col int) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	for i, key := range keys {
		kf := scalarForm(key)
		k := kf.text
		if kf.style == 0 || k == "" || len(k) > maxSimpleKey || !printableASCII(key) {
			return false
		}
		if i > 0 {
			w.indent(col)
		}
		w.out = append(w.out, k...)
		w.out = append(w.out, ':')
		switch v := m[key].(type) {
		case map[string]any:
			if len(v) > 0 {
				w.out = append(w.out, '\n')
				w.indent(col + 2)
				if !w.mapping(v, col+2) {
					return false
				}
				continue
			}
		case []any:
			if len(v) > 0 {
				w.out = append(w.out, '\n')
				w.indent(col)
				if !w.sequence(v, col) {
					return false
				}
				continue
			}
		}
		w.out = append(w.out, ' ')
		if !w.scalar(m[key], col+len(k)+2, col+2) {
			return false
		}
	}
	return true
}

// sequence writes a non-empty array's items at column col, the first
// where the writer stands.
func (w *writer) sequence(items []any, col int) bool {
	for i, v := range items {
		if i > 0 {
			w.indent(col)
		}
		w.out = append(w.out, '-', ' ')
		var ok bool
		switch c := v.(type) {
		case map[string]any:
			if len(c) > 0 {
				ok = w.mapping(c, col+2)
				break
			}
			ok = w.scalar(v, col+2, col+2)
		case []any:
			if len(c) > 0 {
				ok = w.sequence(c, col+2)
				break
			}
			ok = w.scalar(v, col+2, col+2)
		default:
			ok = w.scalar(v, col+2, col+2)
		}
		if !ok {
			return false
		}
	}
	return true
}

// scalar writes a scalar (or an empty collection) starting at column col,
// and its line's end; indent is where the library continues a string it
// breaks at a space.
func (w *writer) scalar(v any, col, indent int) bool {
	switch v := v.(type) {
	case map[string]any: // empty
		w.out = append(w.out, "{}"...)
	case []any: // empty
		w.out = append(w.out, "[]"...)
	case bool:
		w.out = strconv.AppendBool(w.out, v)
	case nil:
		w.out = append(w.out, "null"...)
	case json.Number:
		// The library writes a JSON number that is an int64 as that
		// integer; other numbers (floats) are left to it.
		i, err := v.Int64()
		if err != nil {
			return false
		}
		w.out = strconv.AppendInt(w.out, i, 10)
	case string:
		f := scalarForm(v)
		switch {
		case f.style == 0:
			return false
		case f.text != "" && (col+len(f.text) <= bestWidth || strings.IndexByte(f.text, ' ') < 0):
			// One line wherever it stands: the library breaks only at
			// a space past its width.
			w.out = append(w.out, f.text...)
		case f.style == stylePlain || f.style == styleSingle:
			if !w.broken(v, f.style, col, indent) {
				return false
			}
		default:
			return false
		}
	default:
		return false
	}
	w.out = append(w.out, '\n')
	return true
}

// broken writes an ASCII string in plain or single-quoted style as the
// library does past its width: at the first space once the column is
// beyond it (a single space, not the first or last character of a quoted
// string), a line break and the indentation take the space's place.
func (w *writer) broken(s string, style byte, col, indent int) bool {
	if !printableASCII(s) {
		return false
	}
	column := col
	if style == styleSingle {
		w.out = append(w.out, '\'')
		column++
	}
	spaces := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			quotedFirst := style == styleSingle && i == 0
			if !spaces && column > bestWidth && !quotedFirst && i+1 < len(s) && s[i+1] != ' ' {
				w.out = append(w.out, '\n')
				w.indent(indent)
				column = indent
			} else {
				w.out = append(w.out, ' ')
				column++
			}
			spaces = true
			continue
		}
		w.out = append(w.out, c)
		column++
		if style == styleSingle && c == '\'' {
			w.out = append(w.out, c)
			column++
		}
		spaces = false
	}
	if style == styleSingle {
		w.out = append(w.out, '\'')
	}
	return true
}

// printableASCII reports strings of printable ASCII characters only: a
// key with a line break in it is not a simple key to the library, and
// broken lines are counted in bytes.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// The library's styles of a string scalar.
const (
	stylePlain  = 'p'
	styleSingle = 's'
	styleDouble = 'd'
)

// form is how the library writes a string: its style (0: a form the
// direct writer does not write, such as a literal block), and its text
// when that is one line at column 0.
type form struct {
	style byte
	text  string
}

// scalarForm is the library's form of string s.
func scalarForm(s string) form {
	if plainSafe(s) {
		return form{stylePlain, s}
	}
	if v, ok := forms.Load(s); ok {
		return v.(form)
	}
	f := libraryForm(s)
	forms.Store(s, f)
	return f
}

// forms memoises the library's form of the strings that are not plainly
// safe (versions such as "1.30", words such as "on", quoted text): few
// and repeated across clusters.
var forms sync.Map

// libraryForm asks the library for the form of s alone as a document. A
// scalar's style does not depend on where it stands in block context; only
// its line breaking does, which the writer checks or does where it writes.
func libraryForm(s string) form {
	b, err := yamlv2.Marshal(s)
	if err != nil || len(b) < 2 || b[len(b)-1] != '\n' {
		return form{}
	}
	var f form
	switch b[0] {
	case '|', '>', '!', '&', '*':
		return form{}
	case '\'':
		f.style = styleSingle
	case '"':
		f.style = styleDouble
	default:
		f.style = stylePlain
	}
	if t := b[:len(b)-1]; bytes.IndexByte(t, '\n') < 0 {
		f.text = string(t)
	}
	return f
}

// plainSafe reports strings the library writes as they are: not empty;
// not starting with a character that could make them a number, boolean,
// null or float in YAML 1.1 (the library's resolver looks at the first
// character first) or an indicator; made of letters, digits and a few
// punctuation marks that are indicators nowhere but at the start; a colon
// only before something other than a space, and a space never last.
func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		switch c {
		case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O':
			return false
		}
	case c == '/' || c == '_':
	default:
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		case strings.IndexByte("_./-=+@,()*", c) >= 0:
		case c == ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return false
			}
		case c == ' ':
			if i+1 == len(s) || s[i+1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// keyLess is the library's order of mapping keys that are strings: rune
// by rune; a letter after any other character; runs of digits compared
// as numbers (a run's leading zeros count as digits after a non-zero
// digit before it), then by length.
func keyLess(a, b string) bool {
	if isASCIIWord(a) && isASCIIWord(b) && !hasDigit(a) && !hasDigit(b) {
		return a < b // letters only: rune order
	}
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		ai, bi := i, i
		for ; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for ; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// isASCIIWord reports strings of ASCII letters only.
func isASCIIWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }
