package config

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The layer files of a fleet are nearly all written in a small part of
// YAML: block mappings of plain keys, plain and simply quoted scalars, block
// sequences of scalars and one-line flow sequences, full-line and trailing
// comments, ASCII text. fastYAML reads a file written only in that part
// into the node tree yaml.v3 would build of it (the fields decode reads:
// kind, style, tag, value, line, column, line comment, content) at a
// quarter of yaml.v3's cost on the small files a fleet holds thousands
// of; for any other file it reports false and yaml.v3 reads it. A plain
// scalar's tag is yaml.v3's own resolution of its text (Node.ShortTag).
// TestFastYAMLIsYAMLv3 and FuzzFastYAML hold every tree it builds to
// yaml.v3's.

// fastLine is one line of a file that holds more than a comment.
type fastLine struct {
	no     int    // 1-based
	indent int    // leading spaces
	text   string // the line from its first non-space byte, trailing spaces cut
	raw    string // the line from its first non-space byte
}

type fastParser struct {
	lines []fastLine
	i     int
}

// fastYAML returns the root mapping of data, or false when data is not
// written in the part of YAML it reads.
func fastYAML(data []byte) (*yaml.Node, bool) {
	if len(data) == 0 || len(data) > 64<<10 {
		return nil, false
	}
	for _, c := range data {
		if c >= 0x80 || c == '\t' || c == '\r' || (c < ' ' && c != '\n') || c == 0x7f {
			return nil, false
		}
	}
	var p fastParser
	no := 0
	for len(data) > 0 {
		no++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		raw := string(line[indent:])
		text := strings.TrimRight(raw, " ")
		if text == "" || text[0] == '#' {
			continue
		}
		p.lines = append(p.lines, fastLine{no: no, indent: indent, text: text, raw: raw})
	}
	if len(p.lines) == 0 || p.lines[0].indent != 0 {
		return nil, false
	}
	root, ok := p.mapping(0)
	if !ok || p.i != len(p.lines) {
		return nil, false
	}
	return root, true
}

// mapping reads the block mapping whose keys stand at indent.
func (p *fastParser) mapping(indent int) (*yaml.Node, bool) {
	first := p.lines[p.i]
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: first.no, Column: indent + 1}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent || !keyStart(l.text[0]) {
			return nil, false
		}
		colon := strings.IndexByte(l.text, ':')
		if colon < 0 || colon > 512 || !plainKey(l.text[:colon]) {
			return nil, false
		}
		key := scalarNode(l.text[:colon], 0, l.no, indent+1)
		rest := l.text[colon+1:]
		p.i++
		var val *yaml.Node
		var ok bool
		switch {
		case rest == "":
			val, ok = p.block(indent)
		case rest[0] != ' ':
			return nil, false
		default:
			off := colon + 1 + len(rest) - len(strings.TrimLeft(rest, " "))
			val, ok = p.inline(l, off)
		}
		if !ok {
			return nil, false
		}
		m.Content = append(m.Content, key, val)
	}
	return m, true
}

// block reads the value of a key (at indent) that ends its line: a mapping
// indented deeper, or a sequence indented deeper or as deep.
func (p *fastParser) block(indent int) (*yaml.Node, bool) {
	if p.i == len(p.lines) {
		return nil, false
	}
	l := p.lines[p.i]
	isItem := l.text == "-" || strings.HasPrefix(l.text, "- ")
	switch {
	case isItem && l.indent >= indent:
		return p.sequence(l.indent)
	case l.indent > indent:
		return p.mapping(l.indent)
	}
	return nil, false
}

// sequence reads the block sequence whose dashes stand at indent.
func (p *fastParser) sequence(indent int) (*yaml.Node, bool) {
	first := p.lines[p.i]
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: first.no, Column: indent + 1}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent != indent || !strings.HasPrefix(l.text, "- ") {
			if l.indent > indent || (l.indent == indent && l.text == "-") {
				return nil, false
			}
			break
		}
		p.i++
		off := 1 + len(l.text[1:]) - len(strings.TrimLeft(l.text[1:], " "))
		item, ok := p.inline(l, off)
		if !ok {
			return nil, false
		}
		s.Content = append(s.Content, item)
	}
	return s, true
}

// inline reads the value that starts at byte off of line l's text and ends
// the line: a plain or quoted scalar or a flow sequence, and a comment. (A
// line indented deeper after it, which would continue the value, ends the
// mapping or sequence that holds it, and with it the fast reading.)
func (p *fastParser) inline(l fastLine, off int) (*yaml.Node, bool) {
	text, col := l.text[off:], l.indent+off+1
	var n *yaml.Node
	var rest string
	switch text[0] {
	case '[':
		var ok bool
		if n, rest, ok = flowSequence(text, l.no, col); !ok {
			return nil, false
		}
	case '"', '\'':
		end := strings.IndexByte(text[1:], text[0]) + 1
		if end == 0 || (text[0] == '"' && strings.IndexByte(text[1:end], '\\') >= 0) || strings.HasPrefix(text[end+1:], "'") {
			return nil, false
		}
		style := yaml.DoubleQuotedStyle
		if text[0] == '\'' {
			style = yaml.SingleQuotedStyle
		}
		n = &yaml.Node{Kind: yaml.ScalarNode, Style: style, Tag: "!!str", Value: text[1:end], Line: l.no, Column: col}
		rest = text[end+1:]
	default:
		value := text
		if i := strings.Index(text, " #"); i >= 0 {
			value, rest = strings.TrimRight(text[:i], " "), text[i:]
		}
		if !plainValue(value, false) {
			return nil, false
		}
		n = scalarNode(value, 0, l.no, col)
	}
	comment := strings.TrimLeft(rest, " ")
	if len(comment) > 0 {
		if comment[0] != '#' || comment == rest {
			return nil, false
		}
		// yaml.v3 keeps a comment's trailing spaces.
		n.LineComment = l.raw[len(l.text)-len(comment):]
	}
	return n, true
}

// flowSequence reads a one-line flow sequence of plain and quoted scalars
// at the start of text, returning what follows it.
func flowSequence(text string, line, col int) (*yaml.Node, string, bool) {
	end := strings.IndexByte(text, ']')
	if end < 0 || strings.ContainsAny(text[1:end], "[{}\"'") {
		return nil, "", false
	}
	s := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Tag: "!!seq", Line: line, Column: col}
	inner := text[1:end]
	if strings.TrimLeft(inner, " ") != "" {
		at := 1
		for _, item := range strings.Split(inner, ",") {
			lead := len(item) - len(strings.TrimLeft(item, " "))
			value := strings.TrimSpace(item)
			if !plainValue(value, true) {
				return nil, "", false
			}
			s.Content = append(s.Content, scalarNode(value, 0, line, col+at+lead))
			at += len(item) + 1
		}
	}
	return s, text[end+1:], true
}

// scalarNode is a scalar with yaml.v3's tag for its style and text.
func scalarNode(value string, style yaml.Style, line, col int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Style: style, Value: value, Line: line, Column: col}
	n.Tag = n.ShortTag()
	return n
}

// keyStart says c may begin a key fastYAML reads.
func keyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// plainKey says s is a key of letters, digits and _ - . / alone.
func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !keyStart(c) && c != '-' && c != '.' && c != '/' {
			return false
		}
	}
	return true
}

// plainValue says s is a plain scalar fastYAML reads: it starts with none
// of YAML's indicators, holds no ": " (a mapping) and no " #" (a comment),
// does not end in ':', and in a flow sequence holds only letters, digits,
// spaces and . _ / - + ~ $.
func plainValue(s string, flow bool) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case keyStart(c), c == '~', c == '$', c == '/', c == '.', c == '+':
	case c == '-' && len(s) > 1 && s[1] != ' ':
	default:
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	if flow {
		for i := 0; i < len(s); i++ {
			if c := s[i]; !keyStart(c) && !strings.ContainsRune("._/-+~$ ", rune(c)) {
				return false
			}
		}
	}
	return true
}
