package encode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// direct writes the bytes that go.yaml.in/yaml/v2 writes for the JSON
// document j decoded into generic values (map[string]any, []any, string,
// json.Number, bool, nil), without building those values and without the
// library's reflection and event emitter: the render's largest cost per
// cluster. It reads j into a flat tree whose strings are pieces of one
// copy of j (parse), and knows the library's layout (block mappings with
// keys in its natural order, sequences in mappings not indented, empty
// collections as {} and []). It writes itself only the scalars whose form
// it can decide exactly: plain strings of a known-safe alphabet, integers,
// booleans and null. Any other string takes its form from the library
// itself (memoised), and a document holding anything it cannot place
// exactly (a float, a literal block, a string the library would break in
// a way it does not, a key too long to be a simple key, a key twice) is
// reported as not handled, for the library to encode. The differential
// tests hold the two equal.
func direct(j []byte) ([]byte, bool) {
	w := writers.Get().(*writer)
	return w.document(w.parse(j))
}

// document writes the tree w holds when built is true and the tree is a
// mapping, and returns a copy of its YAML, or false when the library must
// write it; and puts w back for the next document.
func (w *writer) document(built bool) ([]byte, bool) {
	w.out = append(w.out[:0], Marker...)
	ok := built && len(w.nodes) > 0 && w.nodes[0].kind == '{'
	if ok {
		if w.nodes[0].n == 0 {
			w.out = append(w.out, "{}\n"...)
		} else {
			ok = w.mapping(0, 0)
		}
	}
	var out []byte
	if ok {
		out = bytes.Clone(w.out) // a buffer of the file's size
	}
	if cap(w.out) <= 1<<20 && cap(w.nodes) <= 1<<16 {
		// The nodes' strings are pieces of this document's text, or the
		// values' own: a kept writer must not keep them alive.
		clear(w.nodes)
		w.nodes, w.order = w.nodes[:0], w.order[:0]
		writers.Put(w)
	}
	return out, ok
}

// writers hold the buffers a document is read and written in, its YAML
// copied out at its size.
var writers = sync.Pool{New: func() any { return &writer{out: make([]byte, 0, 16<<10)} }}

// writer appends the YAML of the tree it parsed. Its methods return false
// where the document has something only the library can place.
type writer struct {
	out   []byte
	nodes []node  // the document, in pre-order (parse)
	order []int32 // a stack of the members of the mappings being written, sorted
}

// node is a JSON value: kind is '{', '[', '"', '0' (a number), 't', 'f' or
// 'n' (null). A collection's n members follow it, each ending where the next
// begins, and the last where the collection ends (end).
type node struct {
	kind byte
	n    int32  // members of a collection
	end  int32  // the index past this node's subtree
	key  string // the member's key, in a mapping
	text string // a string's value, a number as written
}

const (
	bestWidth    = 80   // the library's line width: it breaks longer scalars at spaces
	maxSimpleKey = 120  // under the library's 128-character simple key limit
	maxDepth     = 1000 // nesting the parser follows; deeper documents go to the library
)

func (w *writer) indent(n int) {
	for ; n > 0; n-- {
		w.out = append(w.out, ' ')
	}
}

// parse reads the JSON document j into w.nodes; false when j is not one
// JSON value the writer reads (the library's path then says why).
func (w *writer) parse(j []byte) bool {
	p := parser{s: string(j), w: w}
	p.space()
	if !p.value("", 0) {
		return false
	}
	return p.i == len(p.s) // nothing after it, as decode holds too
}

// parser reads JSON text; strings without escapes are pieces of s.
type parser struct {
	s string
	i int
	w *writer
}

func (p *parser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// value reads one value, the member key of its mapping.
func (p *parser) value(key string, depth int) bool {
	if p.i >= len(p.s) || depth > maxDepth {
		return false
	}
	at := len(p.w.nodes)
	p.w.nodes = append(p.w.nodes, node{key: key})
	nd := func() *node { return &p.w.nodes[at] }
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		nd().kind = c
		n, ok := p.members(c, depth)
		if !ok {
			return false
		}
		nd().n = n
	case c == '"':
		s, ok := p.str()
		if !ok {
			return false
		}
		nd().kind, nd().text = '"', s
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[p.i]) >= 0 {
			p.i++
		}
		nd().kind, nd().text = '0', p.s[start:p.i]
	case strings.HasPrefix(p.s[p.i:], "true"):
		nd().kind = 't'
		p.i += 4
	case strings.HasPrefix(p.s[p.i:], "false"):
		nd().kind = 'f'
		p.i += 5
	case strings.HasPrefix(p.s[p.i:], "null"):
		nd().kind = 'n'
		p.i += 4
	default:
		return false
	}
	nd().end = int32(len(p.w.nodes))
	return true
}

// members reads the members of an object or array (open is '{' or '['),
// its opening already read, and gives how many there were.
func (p *parser) members(open byte, depth int) (int32, bool) {
	p.i++
	p.space()
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	var n int32
	if p.i < len(p.s) && p.s[p.i] == closer {
		p.i++
		return 0, true
	}
	for {
		var k string
		if open == '{' {
			var ok bool
			if k, ok = p.str(); !ok {
				return n, false
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return n, false
			}
			p.i++
			p.space()
		}
		if !p.value(k, depth+1) {
			return n, false
		}
		n++
		p.space()
		if p.i >= len(p.s) {
			return n, false
		}
		if p.s[p.i] == closer {
			p.i++
			return n, true
		}
		if p.s[p.i] != ',' {
			return n, false
		}
		p.i++
		p.space()
	}
}

// str reads a string: a piece of the text when it has no escapes and is
// UTF-8, else decoded as encoding/json decodes it.
func (p *parser) str() (string, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	start := p.i
	p.i++
	escaped, high := false, false
	for ; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			if piece := p.s[start+1 : p.i-1]; !escaped && (!high || utf8.ValidString(piece)) {
				return piece, true
			}
			var s string
			if json.Unmarshal([]byte(p.s[start:p.i]), &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			p.i++
		case c < 0x20:
			return "", false
		case c >= 0x80:
			high = true
		}
	}
	return "", false
}

// mapping writes the non-empty mapping at w.nodes[at] at column col, its
// first entry where the writer stands (after a sequence's "- ", or
// indented by the caller).
func (w *writer) mapping(at int32, col int) bool {
	lo := len(w.order)
	plain := true
	for m := at + 1; m < w.nodes[at].end; m = w.nodes[m].end {
		w.order = append(w.order, m)
		plain = plain && plainKey(w.nodes[m].key)
	}
	members := w.order[lo:]
	switch {
	case plain:
		if !w.inPlainOrder(members) {
			slices.SortFunc(members, func(a, b int32) int { return plainOrder(w.nodes[a].key, w.nodes[b].key) })
		}
	default:
		// keyOrder, as the library writer sorts: byte order, then stably
		// by keyLess.
		slices.SortFunc(members, func(a, b int32) int { return strings.Compare(w.nodes[a].key, w.nodes[b].key) })
		slices.SortStableFunc(members, func(a, b int32) int { return keyCompare(w.nodes[a].key, w.nodes[b].key) })
	}
	defer func() { w.order = w.order[:lo] }()
	for i, m := range members {
		key := w.nodes[m].key
		if i > 0 && key == w.nodes[members[i-1]].key {
			return false // a key twice: the library keeps the last
		}
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
		if v := w.nodes[m]; v.n > 0 {
			w.out = append(w.out, '\n')
			if v.kind == '{' {
				w.indent(col + 2)
				if !w.mapping(m, col+2) {
					return false
				}
			} else {
				w.indent(col)
				if !w.sequence(m, col) {
					return false
				}
			}
			continue
		}
		w.out = append(w.out, ' ')
		if !w.scalar(m, col+len(k)+2, col+2) {
			return false
		}
	}
	return true
}

// inPlainOrder reports members of plain keys (plainKey) that already
// stand in keyOrder, each before the next, which the sort would leave as
// they are. A struct's JSON fields come in the order its type declares
// them, and a Document's in the order it adds them: in this order, for
// the render's own types. A key twice fails it, and the sort places the
// two for the check that refuses them.
func (w *writer) inPlainOrder(members []int32) bool {
	for i := 1; i < len(members); i++ {
		if plainOrder(w.nodes[members[i-1]].key, w.nodes[members[i]].key) >= 0 {
			return false
		}
	}
	return true
}

// sequence writes the non-empty sequence at w.nodes[at] at column col, its
// first item where the writer stands.
func (w *writer) sequence(at int32, col int) bool {
	for i, m := 0, at+1; m < w.nodes[at].end; i, m = i+1, w.nodes[m].end {
		if i > 0 {
			w.indent(col)
		}
		w.out = append(w.out, '-', ' ')
		var ok bool
		switch v := w.nodes[m]; {
		case v.kind == '{' && v.n > 0:
			ok = w.mapping(m, col+2)
		case v.kind == '[' && v.n > 0:
			ok = w.sequence(m, col+2)
		default:
			ok = w.scalar(m, col+2, col+2)
		}
		if !ok {
			return false
		}
	}
	return true
}

// scalar writes the scalar (or empty collection) at w.nodes[at] starting at
// column col, and its line's end; indent is where the library continues a
// string it breaks at a space.
func (w *writer) scalar(at int32, col, indent int) bool {
	switch v := w.nodes[at]; v.kind {
	case '{': // empty
		w.out = append(w.out, "{}"...)
	case '[': // empty
		w.out = append(w.out, "[]"...)
	case 't':
		w.out = append(w.out, "true"...)
	case 'f':
		w.out = append(w.out, "false"...)
	case 'n':
		w.out = append(w.out, "null"...)
	case '0':
		// The library writes a JSON number that is an int64 as that
		// integer; other numbers (floats) are left to it.
		i, ok := int64Of(v.text)
		if !ok {
			return false
		}
		w.out = strconv.AppendInt(w.out, i, 10)
	case '"':
		f := scalarForm(v.text)
		switch {
		case f.style == 0:
			return false
		case f.style == styleLiteral:
			w.literal(v.text, f.text, indent)
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
	default:
		return false
	}
	w.out = append(w.out, '\n')
	return true
}

// int64Of is json.Number(s).Int64() for JSON integers: an optional minus
// and decimal digits without a leading zero, within int64; false for any
// other text (a float, an exponent), as Int64 fails on them.
func int64Of(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 19 || d[0] == '0' && len(d) > 1 {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
		u = u*10 + uint64(d[i]-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
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

// literal writes s as a literal block scalar under header ("|" or "|-",
// as libraryForm found the library writes it): each line on a line of its
// own at indent, an empty one without it, the last one's end left to the
// caller.
func (w *writer) literal(s, header string, indent int) {
	w.out = append(w.out, header...)
	if header == "|" {
		s = s[:len(s)-1] // the one line break the header keeps
	}
	for line := range strings.SplitSeq(s, "\n") {
		w.out = append(w.out, '\n')
		if line != "" {
			w.indent(indent)
			w.out = append(w.out, line...)
		}
	}
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
	// styleLiteral is a literal block ("|" or "|-", the form's text) of
	// printable ASCII lines.
	styleLiteral = 'l'
)

// form is how the library writes a string: its style (0: a form the
// direct writer does not write, such as a folded block), and its text
// when that is one line at column 0 (a literal block's: its header).
type form struct {
	style byte
	text  string
}

// scalarForm is the library's form of string s.
func scalarForm(s string) form {
	if plainSafe(s) {
		return form{stylePlain, s}
	}
	if quotedSafe(s) {
		return singleForm(s)
	}
	forms.mu.RLock()
	f, ok := forms.m[s]
	forms.mu.RUnlock()
	if ok {
		return f
	}
	f = libraryForm(s)
	forms.mu.Lock()
	// s may be a piece of a whole document's text (direct): the memo keeps
	// a copy of its own.
	forms.m[strings.Clone(s)] = f
	forms.mu.Unlock()
	return f
}

// forms memoises the library's form of the strings that are not plainly
// safe (versions such as "1.30", words such as "on", keys such as
// "targetRevision", quoted text): few and repeated across clusters. A map
// rather than a sync.Map, whose lookups box each string they are given.
var forms = struct {
	mu sync.RWMutex
	m  map[string]form
}{m: map[string]form{}}

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
	case '|':
		return literalForm(s, b)
	case '>', '!', '&', '*':
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

// literalForm is the form of s, which the library writes alone as the
// literal block b: styleLiteral when s is lines of printable ASCII and b
// is what literal writes of it at the library's indentation of a document's
// scalar (2), so that where s stands only its indentation differs; no form
// for a block whose header holds an indentation hint or keeps more than
// one line break (which ends a document differently).
func literalForm(s string, b []byte) form {
	header, _, _ := bytes.Cut(b, []byte{'\n'})
	if h := string(header); h != "|" && h != "|-" || !printableASCII(strings.ReplaceAll(s, "\n", "")) {
		return form{}
	}
	w := writer{}
	w.literal(s, string(header), 2)
	if !bytes.Equal(append(w.out, '\n'), b) {
		return form{}
	}
	return form{style: styleLiteral, text: string(header)}
}

// quotedSafe reports strings the library writes single-quoted for one
// reason only: a colon before a space (": "), which no plain scalar holds
// in block context, in text of plainSafe's alphabet that begins with a
// letter and does not end in a space (such a string is no boolean, null or number to
// the library's resolver, whatever its first letter, since none holds
// ": "). Prose such as each cluster's AppProject description, different
// in every cluster, so that memoising it asked the library once a cluster.
// TestQuotedSafeIsTheLibrarys holds it to libraryForm.
func quotedSafe(s string) bool {
	if s == "" || !asciiLetter(s[0]) || s[len(s)-1] == ' ' || !strings.Contains(s, ": ") {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		case strings.IndexByte("_./-=+@,()*: ", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// singleForm is the form of a quotedSafe string: single-quoted (it holds
// no quote to double), its text when the library writes it on one line
// from column 0 (broken, which places it as the library does, breaks it
// nowhere).
func singleForm(s string) form {
	w := writer{}
	w.broken(s, styleSingle, 0, 2)
	if bytes.IndexByte(w.out, '\n') >= 0 {
		return form{style: styleSingle}
	}
	return form{style: styleSingle, text: string(w.out)}
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

// keyCompare is keyLess as a three-way comparison. Keys of ASCII without
// digits, nearly all a render writes (apiVersion, cluster_name,
// argocd.argoproj.io/sync-wave), are compared in one pass; keyLess would
// convert both to runes, twice.
func keyCompare(a, b string) int {
	if c, ok := plainKeyCompare(a, b); ok {
		return c
	}
	switch {
	case keyLess(a, b):
		return -1
	case keyLess(b, a):
		return 1
	}
	return 0
}

// plainKeyCompare is keyLess's order of a and b when both are plain keys
// (plainKey; ok false otherwise).
func plainKeyCompare(a, b string) (int, bool) {
	if !plainKey(a) || !plainKey(b) {
		return 0, false
	}
	return plainOrder(a, b), true
}

// plainKey is a key of ASCII without digits: nearly every key a render
// writes (apiVersion, cluster_name, argocd.argoproj.io/sync-wave).
func plainKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c >= '0' && c <= '9' {
			return false
		}
	}
	return true
}

// plainOrder is keyLess's order of two plain keys: at the first byte they
// differ in, a letter comes after any other character and two letters, or
// two others, go by byte; a key comes after its prefixes. It is a total
// order (a lexicographic one, of a ranking of the bytes), equal only for
// equal keys: the library's two sorts give plain keys its one order, which
// one sort by it gives too.
func plainOrder(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmp.Compare(len(a), len(b))
	}
	al, bl := asciiLetter(a[i]), asciiLetter(b[i])
	if al != bl {
		if bl {
			return -1
		}
		return 1
	}
	return cmp.Compare(a[i], b[i])
}

func asciiLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// sortKeys puts keys in keyOrder: the library's order of mapping keys,
// made total. go.yaml.in/yaml/v2 compares some keys in a cycle ("001\"" <
// "0x'" < "1/" < "001\""), and then writes them in whatever order Go's map
// iteration handed them over; sorting by bytes first and then stably by
// keyLess gives every key set one order, the library's wherever it has
// one.
func sortKeys(keys []string) {
	slices.Sort(keys)
	slices.SortStableFunc(keys, keyCompare)
}

// keyLess is the library's order of mapping keys that are strings: rune
// by rune; a letter after any other character; runs of digits compared
// as numbers (a run's leading zeros count as digits after a non-zero
// digit before it), then by length.
func keyLess(a, b string) bool {
	if isASCIIWord(a) && isASCIIWord(b) {
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
