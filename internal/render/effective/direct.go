package effective

import (
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/regionctl/regionctl/internal/config"
)

// direct appends to b the YAML go.yaml.in/yaml/v3 writes for node(v) with
// an indent of 2, without building the node tree or running the
// library's emitter (a third of rendering a cluster's files). It knows the
// library's layout for what an effective config holds: block mappings in
// the order given, every value but a mapping followed by its line comment,
// sequences of scalars in flow style, empty collections as {} and [], and
// no line width (the library's default). A string's form (plain, quoted)
// it decides itself only where that is certain; any other string takes its
// form from the library (memoised). It reports false for what it cannot
// place exactly (a float, a sequence holding a collection, a string over
// several lines, a long or quoted key, a comment that is not one printable
// line), for the library to encode; TestDirectIsTheLibrary holds the two
// equal.
func direct(b []byte, v *config.Value) ([]byte, bool) {
	if v == nil || v.Kind != config.Map {
		return nil, false
	}
	w := writer{out: b}
	if len(v.Fields) == 0 {
		w.out = append(w.out, "{}\n"...)
		return w.out, true
	}
	if !w.mapping(v, 0) {
		return nil, false
	}
	return w.out, true
}

type writer struct{ out []byte }

// mapping writes a non-empty map's entries at column col.
func (w *writer) mapping(v *config.Value, col int) bool {
	for _, f := range v.Fields {
		key, ok := keyForm(f.Key)
		if !ok {
			return false
		}
		for range col {
			w.out = append(w.out, ' ')
		}
		w.out = append(w.out, key...)
		w.out = append(w.out, ':')
		child := f.Value
		if child.Kind == config.Map {
			if len(child.Fields) == 0 {
				w.out = append(w.out, " {}\n"...)
				continue
			}
			w.out = append(w.out, '\n')
			if !w.mapping(child, col+2) {
				return false
			}
			continue
		}
		w.out = append(w.out, ' ')
		if child.Kind == config.List {
			if !w.sequence(child) {
				return false
			}
		} else if !w.scalar(child, false) {
			return false
		}
		if !w.comment(origin(child)) {
			return false
		}
	}
	return true
}

// sequence writes a list of scalars in flow style.
func (w *writer) sequence(v *config.Value) bool {
	w.out = append(w.out, '[')
	for i, it := range v.Items {
		if it.Kind == config.Map || it.Kind == config.List {
			return false // the library writes the list in block style
		}
		if i > 0 {
			w.out = append(w.out, ", "...)
		}
		if !w.scalar(it, true) {
			return false
		}
	}
	w.out = append(w.out, ']')
	return true
}

// scalar writes a scalar in block context, or as an item of a flow
// sequence.
func (w *writer) scalar(v *config.Value, flow bool) bool {
	switch v.Kind {
	case config.String:
		if oldBool(v.Str) {
			// node() asks for double quotes; these need no escape.
			w.out = append(append(append(w.out, '"'), v.Str...), '"')
			return true
		}
		s, ok := stringForm(v.Str, flow)
		if !ok {
			return false
		}
		w.out = append(w.out, s...)
	case config.Bool:
		w.out = strconv.AppendBool(w.out, v.Bool)
	case config.Int:
		w.out = strconv.AppendInt(w.out, v.Int, 10)
	case config.Null:
		w.out = append(w.out, "null"...)
	default:
		return false // a float: the library's own form
	}
	return true
}

// comment writes a line comment and the line's end as the library does:
// one space, and "# " unless the comment starts with '#'.
func (w *writer) comment(c string) bool {
	if c == "" || !printableASCII(c) {
		return false
	}
	if c[0] == '#' {
		w.out = append(w.out, ' ')
	} else {
		w.out = append(w.out, " # "...)
	}
	w.out = append(w.out, c...)
	w.out = append(w.out, '\n')
	return true
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// keyForm is how the library writes a mapping key: only a plain one is
// written here (a quoted key is rare and left to the library).
func keyForm(k string) (string, bool) {
	if len(k) > 120 || oldBool(k) {
		return "", false // near the library's limit of a simple key, or quoted
	}
	s, ok := stringForm(k, false)
	if !ok || s != k {
		return "", false
	}
	return s, true
}

// stringForm is the text the library writes for string s (tagged !!str,
// no style asked) in block context or in a flow sequence, and false when
// that is not one line.
func stringForm(s string, flow bool) (string, bool) {
	if plainCertain(s, flow) {
		return s, true
	}
	k := formKey{s, flow}
	if f, ok := forms.Load(k); ok {
		f := f.(libraryForm)
		return f.text, f.ok
	}
	f := askLibrary(s, flow)
	forms.Store(k, f)
	return f.text, f.ok
}

type formKey struct {
	s    string
	flow bool
}

type libraryForm struct {
	text string
	ok   bool
}

// forms memoises the library's forms of the strings plainCertain does not
// decide: versions such as "1.30" or "9.1.0", sizes such as "2xlarge",
// text with spaces; few, and repeated across clusters.
var forms sync.Map

// askLibrary encodes s alone as the library would in its place: a mapping
// value, or the item of a flow sequence that is one.
func askLibrary(s string, flow bool) libraryForm {
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if flow {
		val = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{val}}
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "k"}, val}}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return libraryForm{}
	}
	t, ok := strings.CutPrefix(string(b), "k: ")
	if !ok || !strings.HasSuffix(t, "\n") || strings.Count(t, "\n") != 1 {
		return libraryForm{}
	}
	t = strings.TrimSuffix(t, "\n")
	if flow {
		if !strings.HasPrefix(t, "[") || !strings.HasSuffix(t, "]") {
			return libraryForm{}
		}
		t = t[1 : len(t)-1]
	}
	return libraryForm{text: t, ok: true}
}

// plainCertain reports strings the library certainly writes as they are.
// Its resolver must read them back as strings: starting with a letter,
// they are not one of the words it takes for a boolean or null; starting
// with a digit, they hold a '/', which no number or timestamp does. And
// its emitter must allow them plain: letters, digits and "_./=+@-", with
// a ':' only inside a block mapping's value and never before a space or
// at the end; no space at all.
func plainCertain(s string, flow bool) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		switch s {
		case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
			return false
		}
	case c >= '0' && c <= '9':
		if strings.IndexByte(s, '/') < 0 {
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
		case strings.IndexByte("_./=+@-", c) >= 0:
		case c == ':':
			if flow || i+1 == len(s) || s[i+1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return true
}
