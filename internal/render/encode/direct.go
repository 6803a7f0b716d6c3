package encode

import (
	"bytes"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// direct writes, from the JSON encoding of a document, the bytes that
// go.yaml.in/yaml/v2 writes for the same document decoded into generic
// maps, without the generic maps or the library's event emitter: the
// render's largest cost per cluster. It knows the library's layout (block
// mappings with keys in its natural order, sequences in mappings not
// indented, empty collections as {} and []), and writes itself only the
// scalars whose form it can decide exactly: plain strings of a known-safe
// alphabet, integers, booleans and null. Any other string takes its form
// from the library itself (memoised; each is one line at any column
// wherever the library would write it on one line), and a document with
// anything it cannot place exactly (a string the library would break over
// lines, a float, a key too long to be a simple key) is reported as not
// handled, for YAML to encode through the library. The differential tests
// hold the two equal.
func direct(j []byte) ([]byte, bool) {
	p := parser{b: j}
	root, err := p.value()
	if err != nil || root.kind != kindObject {
		return nil, false
	}
	p.space()
	if p.i != len(p.b) {
		return nil, false
	}
	w := writer{out: make([]byte, 0, len(Marker)+len(j)+len(j)/4)}
	w.out = append(w.out, Marker...)
	if len(root.fields) == 0 {
		w.out = append(w.out, "{}\n"...)
		return w.out, true
	}
	if !w.mapping(root, 0) {
		return nil, false
	}
	return w.out, true
}

const (
	kindObject = iota
	kindArray
	kindString
	kindNumber
	kindTrue
	kindFalse
	kindNull
)

type node struct {
	kind   int
	text   string // a string's value, a number's JSON text
	items  []node
	fields []field
}

type field struct {
	key   string
	value node
}

var errJSON = errors.New("encode: unexpected JSON")

// parser reads the JSON that encoding/json has just written; anything it
// does not expect is an error, and the document goes the library's way.
type parser struct {
	b []byte
	i int
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (node, error) {
	p.space()
	if p.i >= len(p.b) {
		return node{}, errJSON
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		var n node
		n.kind = kindObject
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return n, nil
		}
		for {
			p.space()
			k, err := p.str()
			if err != nil {
				return node{}, err
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return node{}, errJSON
			}
			p.i++
			v, err := p.value()
			if err != nil {
				return node{}, err
			}
			n.fields = append(n.fields, field{k, v})
			if more, err := p.next('}'); err != nil || !more {
				return n, err
			}
		}
	case c == '[':
		p.i++
		var n node
		n.kind = kindArray
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return n, nil
		}
		for {
			v, err := p.value()
			if err != nil {
				return node{}, err
			}
			n.items = append(n.items, v)
			if more, err := p.next(']'); err != nil || !more {
				return n, err
			}
		}
	case c == '"':
		s, err := p.str()
		return node{kind: kindString, text: s}, err
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.b) && strings.IndexByte("+-0123456789.eE", p.b[p.i]) >= 0 {
			p.i++
		}
		return node{kind: kindNumber, text: string(p.b[start:p.i])}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return node{kind: kindTrue}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return node{kind: kindFalse}, nil
	case bytes.HasPrefix(p.b[p.i:], []byte("null")):
		p.i += 4
		return node{kind: kindNull}, nil
	}
	return node{}, errJSON
}

// next reads what follows a member of an object or array: a comma
// (more follow) or its closing bracket.
func (p *parser) next(closing byte) (more bool, err error) {
	p.space()
	switch {
	case p.i >= len(p.b):
		return false, errJSON
	case p.b[p.i] == ',':
		p.i++
		return true, nil
	case p.b[p.i] == closing:
		p.i++
		return false, nil
	}
	return false, errJSON
}

// str reads a JSON string. Strings without escapes (nearly all) are
// sliced, not built.
func (p *parser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", errJSON
	}
	p.i++
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, nil
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", errJSON
		default:
			p.i++
		}
	}
	return "", errJSON
}

func (p *parser) escaped(start int) (string, error) {
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(out) {
				return "", errJSON
			}
			return string(out), nil
		case c < 0x20:
			return "", errJSON
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", errJSON
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", errJSON
			}
			if utf16.IsSurrogate(r) {
				if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return "", errJSON
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok {
					return "", errJSON
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", errJSON
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", errJSON
		}
	}
	return "", errJSON
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

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
func (w *writer) mapping(n node, col int) bool {
	fields := n.fields
	sort.Slice(fields, func(i, j int) bool { return keyLess(fields[i].key, fields[j].key) })
	for i, f := range fields {
		if i > 0 && fields[i-1].key == f.key {
			return false // a duplicate key; the library keeps one
		}
		kf := scalarForm(f.key)
		k := kf.text
		if kf.style == 0 || k == "" || len(k) > maxSimpleKey || !printableASCII(f.key) {
			return false
		}
		if i > 0 {
			w.indent(col)
		}
		w.out = append(w.out, k...)
		w.out = append(w.out, ':')
		switch v := f.value; {
		case v.kind == kindObject && len(v.fields) > 0:
			w.out = append(w.out, '\n')
			w.indent(col + 2)
			if !w.mapping(v, col+2) {
				return false
			}
		case v.kind == kindArray && len(v.items) > 0:
			w.out = append(w.out, '\n')
			w.indent(col)
			if !w.sequence(v, col) {
				return false
			}
		default:
			w.out = append(w.out, ' ')
			if !w.scalar(v, col+len(k)+2, col+2) {
				return false
			}
		}
	}
	return true
}

// sequence writes a non-empty array's items at column col, the first
// where the writer stands.
func (w *writer) sequence(n node, col int) bool {
	for i, v := range n.items {
		if i > 0 {
			w.indent(col)
		}
		w.out = append(w.out, '-', ' ')
		var ok bool
		switch {
		case v.kind == kindObject && len(v.fields) > 0:
			ok = w.mapping(v, col+2)
		case v.kind == kindArray && len(v.items) > 0:
			ok = w.sequence(v, col+2)
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
func (w *writer) scalar(v node, col, indent int) bool {
	switch v.kind {
	case kindObject:
		w.out = append(w.out, "{}"...)
	case kindArray:
		w.out = append(w.out, "[]"...)
	case kindTrue:
		w.out = append(w.out, "true"...)
	case kindFalse:
		w.out = append(w.out, "false"...)
	case kindNull:
		w.out = append(w.out, "null"...)
	case kindNumber:
		// The library writes a JSON number that is an int64 as that
		// integer; other numbers (floats) are left to it.
		i, err := strconv.ParseInt(v.text, 10, 64)
		if err != nil {
			return false
		}
		w.out = strconv.AppendInt(w.out, i, 10)
	case kindString:
		f := scalarForm(v.text)
		switch {
		case f.style == 0:
			return false
		case f.text != "" && (col+len(f.text) <= bestWidth || strings.IndexByte(f.text, ' ') < 0):
			// One line wherever it stands: the library breaks only at
			// a space past its width.
			w.out = append(w.out, f.text...)
		case f.style == stylePlain || f.style == styleSingle:
			if !w.broken(v.text, f.style, col, indent) {
				return false
			}
		default:
			return false
		}
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
