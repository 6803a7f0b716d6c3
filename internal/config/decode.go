package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/secrets"
)

const (
	// MaxFileSize is the largest layer file regionctl reads.
	MaxFileSize = 10 << 20
	// maxNodes bounds the values one file may expand to, aliases included,
	// so that an alias bomb fails fast instead of exhausting memory.
	maxNodes = 200_000
	maxDepth = 64
)

// Decode parses one YAML layer file into a Value whose every node carries its
// origin. It returns nil and diagnostics when the file cannot be read as a
// single YAML mapping; an empty file (or one holding only comments) decodes to
// nil with an error, since a layer file that sets nothing is a mistake.
func Decode(file string, layer Layer, data []byte) (v *Value, diags diag.Diagnostics) {
	return DecodeWith(file, layer, data, DecodeOptions{})
}

// DecodeOptions tune Decode with what only the schema knows.
type DecodeOptions struct {
	// StringTyped reports whether the schema types the value at path (map
	// keys; "0" for a list item) in a file of layer as a string. A plain
	// scalar there that YAML reads as a number is the string it spells
	// (012345678901 stays "012345678901"), quoted or not.
	StringTyped func(layer Layer, path []string) bool
}

// DecodeWith is Decode with options.
func DecodeWith(file string, layer Layer, data []byte, opts DecodeOptions) (v *Value, diags diag.Diagnostics) {
	at := diag.Pos{File: file}
	if len(data) > MaxFileSize {
		return nil, diag.Diagnostics{diag.Errorf(at,
			fmt.Sprintf("The file is %d bytes; layer files may be at most %d bytes. Split it or move bulk data out of config/.", len(data), MaxFileSize),
			"file too large")}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 || !utf8.Valid(data) {
		return nil, diag.Diagnostics{diag.Errorf(lineOf(data, i, file),
			"Layer files must be UTF-8 YAML text; this one holds binary data. Check that the right file was committed.",
			"file is not UTF-8 text")}
	}
	defer func() {
		if r := recover(); r != nil {
			v, diags = nil, diag.Diagnostics{diag.Errorf(at, fmt.Sprint(r), "YAML parser failed on this file")}
		}
	}()
	// Most layer files are read by fastYAML; any other by yaml.v3.
	root, fast := fastYAML(data)
	if !fast {
		var ds diag.Diagnostics
		if root, ds = yamlRoot(file, data); root == nil {
			return nil, ds
		}
	}
	d := &decoder{file: file, layer: layer, stringTyped: opts.StringTyped}
	if root.Kind != yaml.MappingNode {
		return nil, diag.Diagnostics{diag.Errorf(d.pos(root), "The top level of a layer file is a mapping of keys to values.", "layer file is a %s, not a mapping", kindName(root))}
	}
	v = d.node(root, 0)
	return v, d.diags
}

// yamlRoot reads data's one YAML document with yaml.v3 and returns its
// root node, or nil and why not.
func yamlRoot(file string, data []byte) (*yaml.Node, diag.Diagnostics) {
	at := diag.Pos{File: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, diag.Diagnostics{diag.Errorf(at, "A layer file must set at least one key; delete the file if it has nothing to say.", "empty layer file")}
		}
		return nil, diag.Diagnostics{yamlError(file, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Pos{File: file, Line: extra.Line, Col: extra.Column},
			"A layer file holds exactly one YAML document; remove the '---' separator or split the file.",
			"more than one YAML document")}
	} else if !errors.Is(err, io.EOF) {
		return nil, diag.Diagnostics{yamlError(file, err)}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, diag.Diagnostics{diag.Errorf(at, "A layer file must set at least one key; delete the file if it has nothing to say.", "empty layer file")}
		}
		root = root.Content[0]
	}
	return root, nil
}

type decoder struct {
	file  string
	layer Layer
	// path is where the node being decoded sits; stringTyped asks the
	// schema about it.
	path        []string
	stringTyped func(Layer, []string) bool
	nodes       int
	aliasAt     *yaml.Node // the outermost alias being expanded, if any
	diags       diag.Diagnostics
}

func (d *decoder) pos(n *yaml.Node) diag.Pos {
	return diag.Pos{File: d.file, Line: n.Line, Col: n.Column}
}

func (d *decoder) errorf(n *yaml.Node, detail, summary string, args ...any) {
	d.diags = append(d.diags, diag.Errorf(d.pos(n), detail, summary, args...))
}

func (d *decoder) node(n *yaml.Node, depth int) *Value {
	d.nodes++
	if d.nodes > maxNodes {
		if d.nodes == maxNodes+1 {
			at := n
			if d.aliasAt != nil {
				at = d.aliasAt
			}
			d.errorf(at, fmt.Sprintf("The file expands to more than %d values (YAML aliases included). Aliases that reference other aliases multiply; write the values out.", maxNodes), "document too large after alias expansion")
		}
		return nil
	}
	if depth > maxDepth {
		d.errorf(n, fmt.Sprintf("Values may nest at most %d levels deep.", maxDepth), "value nested too deeply")
		return nil
	}
	origin := Origin{Layer: d.layer, Pos: d.pos(n)}
	switch n.Kind {
	case yaml.AliasNode:
		if d.aliasAt == nil {
			d.aliasAt = n
			defer func() { d.aliasAt = nil }()
		}
		v := d.node(n.Alias, depth+1)
		if v == nil {
			return nil
		}
		return retarget(v, origin)
	case yaml.MappingNode:
		fields := make([]Field, 0, len(n.Content)/2)
		seen := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool" && k.Tag != "!!float") {
				if k.Tag == "!!merge" {
					d.errorf(k, "YAML merge keys are not supported; express shared values in a lower layer instead.", "merge key '<<' is not supported")
				} else {
					d.errorf(k, "Map keys are plain strings.", "map key is a %s, not a string", kindName(k))
				}
				continue
			}
			if !d.visible(k, k.Value) {
				continue
			}
			if prev, dup := seen[k.Value]; dup {
				dg := diag.Errorf(d.pos(k), fmt.Sprintf("Remove one of the two; %q is first set at %s.", k.Value, d.pos(prev)), "duplicate key %q", k.Value)
				dg.Related = []diag.Related{{Pos: d.pos(prev), Message: "first set here"}}
				d.diags = append(d.diags, dg)
				continue
			}
			seen[k.Value] = k
			d.path = append(d.path, k.Value)
			cv := d.node(val, depth+1)
			d.path = d.path[:len(d.path)-1]
			if cv == nil {
				continue
			}
			d.secret(k.Value, val, cv)
			fields = append(fields, Field{Key: k.Value, KeyPos: d.pos(k), Value: cv})
		}
		return NewMap(origin, fields)
	case yaml.SequenceNode:
		items := make([]*Value, 0, len(n.Content))
		d.path = append(d.path, "0")
		defer func() { d.path = d.path[:len(d.path)-1] }()
		for _, c := range n.Content {
			if cv := d.node(c, depth+1); cv != nil {
				d.secret("", c, cv)
				items = append(items, cv)
			}
		}
		return &Value{Kind: List, Items: items, Origin: origin}
	case yaml.ScalarNode:
		return d.scalar(n, origin)
	}
	d.errorf(n, "", "unsupported YAML node")
	return nil
}

// secret refuses a string that holds secret material as text, unless its
// line says it is not one. The message never quotes the value.
func (d *decoder) secret(key string, n *yaml.Node, v *Value) {
	if v.Kind != String || n.Kind != yaml.ScalarNode || strings.Contains(n.LineComment, secrets.AllowMarker) {
		return
	}
	if what := secrets.Find(key, v.Str); what != "" {
		d.errorf(n, "Secrets never go in config/ or deploy/ as text: store it in AWS Secrets Manager or SSM Parameter Store and set a reference "+
			"(ssm:///path or arn:aws:secretsmanager:...), in a field marked @secret() when the schema has one. "+
			"If it is not a secret, end the line with # "+secrets.AllowMarker+".", "this value looks like %s", what)
	}
}

// Plain (unquoted) number forms that YAML readers disagree on, or that no
// output format can carry: each is refused with what to write instead.
var (
	leadingZero = regexp.MustCompile(`^[-+]?0[0-9_]+$`)
	baseNumber  = regexp.MustCompile(`^[-+]?0[xXoObB]`)
	notFinite   = regexp.MustCompile(`^[-+]?\.(inf|Inf|INF|nan|NaN|NAN)$`)
	allDigits   = regexp.MustCompile(`^[-+]?[0-9_]+$`)
	zeroTail    = regexp.MustCompile(`^[-+]?[0-9_]*\.[0-9_]*0$`)
)

// maxExact is the largest integer every reader of the outputs keeps exact:
// Helm and JSON readers hold numbers as float64.
const maxExact = 1 << 53

// number refuses a plain scalar that YAML resolved to a number when the
// number is not what every reader of deploy/ would take from its text. It
// returns false after reporting.
func (d *decoder) number(n *yaml.Node) bool {
	text := n.Value
	quote := fmt.Sprintf("quote it (%q) if it is a string, such as an id or a version", text)
	switch {
	case leadingZero.MatchString(text):
		d.errorf(n, "YAML readers disagree on a number with a leading zero: octal in YAML 1.1, decimal in 1.2, a string to Helm when it holds an 8 or 9. "+
			"Write the number without the leading zero, or "+quote+".", "%s is ambiguous: a number with a leading zero", text)
	case baseNumber.MatchString(text):
		d.errorf(n, "Hexadecimal, octal and binary numbers mean different things to different YAML readers. Write the number in decimal, or "+quote+".",
			"%s is ambiguous: a number in base 16, 8 or 2", text)
	case notFinite.MatchString(text):
		d.errorf(n, "Terraform variables, JSON and Helm values cannot hold infinity or NaN. Write a finite number, or "+quote+".",
			"%s is not a finite number", text)
	case allDigits.MatchString(text) && n.ShortTag() == "!!float":
		d.errorf(n, "Integers must fit in 64 bits; this one does not. "+strings.ToUpper(quote[:1])+quote[1:]+".", "integer %s out of range", text)
	case n.ShortTag() == "!!int":
		if i, err := strconv.ParseInt(strings.ReplaceAll(text, "_", ""), 10, 64); err == nil && (i > maxExact || i < -maxExact) {
			d.errorf(n, fmt.Sprintf("Helm, JSON and many other readers keep numbers as 64-bit floats, exact only up to %d. ", int64(maxExact))+
				strings.ToUpper(quote[:1])+quote[1:]+".", "integer %s is too large to stay exact", text)
		} else {
			return true
		}
	case zeroTail.MatchString(text):
		f, _ := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
		d.errorf(n, fmt.Sprintf("Every reader takes %s as the number %s and drops the trailing zero. Write %s, or %s.",
			text, strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'g', -1, 64), quote), "%s is the number %s", text, strconv.FormatFloat(f, 'g', -1, 64))
	default:
		return true
	}
	return false
}

func (d *decoder) scalar(n *yaml.Node, origin Origin) *Value {
	if n.Style == 0 && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") && d.stringTyped != nil && d.stringTyped(d.layer, d.path) {
		return &Value{Kind: String, Str: n.Value, Origin: origin}
	}
	if n.Style == 0 && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") && !d.number(n) {
		return nil
	}
	switch n.ShortTag() {
	case "!!null":
		return &Value{Kind: Null, Origin: origin}
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err == nil {
			return &Value{Kind: Bool, Bool: b, Origin: origin}
		}
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return &Value{Kind: Int, Int: i, Origin: origin}
		}
		d.errorf(n, "Integers must fit in 64 bits.", "integer %s out of range", n.Value)
		return nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err == nil {
			return NewFloat(f, origin)
		}
	case "!!str", "!!timestamp":
		if !d.visible(n, n.Value) {
			return nil
		}
		return &Value{Kind: String, Str: n.Value, Origin: origin}
	case "!!binary":
		d.errorf(n, "regionctl carries strings, not YAML's binary type: the tag would be lost on the way to deploy/. Remove !!binary and keep the base64 text as a string (a Helm value or a Secret's data takes it so).",
			"unsupported YAML tag !!binary")
		return nil
	default:
		d.errorf(n, "Remove the tag; layer files use plain YAML values.", "unsupported YAML tag %s", n.Tag)
		return nil
	}
	if !d.visible(n, n.Value) {
		return nil
	}
	return &Value{Kind: String, Str: n.Value, Origin: origin}
}

// visible refuses text holding a character that changes how it reads
// without being seen: the bidirectional controls (a "Trojan Source" value
// reads in review unlike what it is) and the zero-width ones (two names
// that look the same and differ). It returns false after reporting.
func (d *decoder) visible(n *yaml.Node, text string) bool {
	for i, r := range text {
		if Invisible(r) {
			d.errorf(n, "Values reach deploy/, Terraform, Kubernetes and pull request comments, where such a character makes them read unlike what they are. Remove it (an editor shows it with a visible-whitespace mode; grep -P '[\\x{200B}-\\x{200F}\\x{202A}-\\x{202E}\\x{2060}-\\x{2069}\\x{FEFF}]' finds it).",
				"invisible character %U at byte %d of this value", r, i)
			return false
		}
	}
	return true
}

// Invisible reports a bidirectional control or zero-width character: one
// that changes how text reads without being seen.
func Invisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2069, r == 0xFEFF, r == 0x061C, r == 0x180E:
		return true
	}
	return false
}

// retarget copies an aliased value so that its origins point at the alias.
func retarget(v *Value, o Origin) *Value {
	out := *v
	out.Origin = o
	if v.Kind == Map {
		out.Fields = make([]Field, len(v.Fields))
		for i, f := range v.Fields {
			out.Fields[i] = Field{Key: f.Key, KeyPos: o.Pos, Value: retarget(f.Value, o)}
		}
	}
	if v.Kind == List {
		out.Items = make([]*Value, len(v.Items))
		for i, it := range v.Items {
			out.Items[i] = retarget(it, o)
		}
	}
	return &out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	switch n.ShortTag() {
	case "!!str":
		return "string"
	case "!!int":
		return "integer"
	case "!!bool":
		return "boolean"
	case "!!float":
		return "number"
	case "!!null":
		return "null"
	}
	return "scalar"
}

var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlError turns a YAML syntax error into a diagnostic at its line.
// parserError are the messages of the YAML library's parser (libyaml's
// parserc), whose line numbers it reports from 0.
var parserError = map[string]bool{
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected key":              true,
	"did not find expected '-' indicator":    true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
}

func yamlError(file string, err error) diag.Diagnostic {
	msg := err.Error()
	pos := diag.Pos{File: file}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		msg = m[2]
		if m[1] != "" {
			pos.Line, _ = strconv.Atoi(m[1])
		}
		// The YAML library counts the lines of its parser's errors (not its
		// scanner's) from 0, and leaves out line 0: one line above the
		// offending one.
		if parserError[msg] {
			pos.Line++
		}
	}
	detail := "Fix the YAML syntax: " + msg + "."
	if bytes.Contains([]byte(msg), []byte("cannot start any token")) {
		detail = "YAML does not allow tab characters for indentation; indent with spaces."
	}
	return diag.Errorf(pos, detail, "invalid YAML: %s", msg)
}

// lineOf returns the position of byte offset i (or the file when i < 0).
func lineOf(data []byte, i int, file string) diag.Pos {
	if i < 0 {
		return diag.Pos{File: file}
	}
	return diag.Pos{File: file, Line: 1 + bytes.Count(data[:i], []byte{'\n'})}
}
