package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/encoding/jsonschema"

	"github.com/regionctl/regionctl/internal/config"
)

// LayerFiles names the layer schemas as their JSON Schema files are named
// (docs/schema/<name>.schema.json), with the files each one describes.
var LayerFiles = []struct {
	Name, Def, Glob string
	Layer           config.Layer
}{
	{"global", "#Global", "config/global/*.yaml", config.LayerGlobal},
	{"sector", "#Sector", "config/sectors/*.yaml", config.LayerSector},
	{"region", "#Region", "config/regions/*.yaml", config.LayerRegion},
	{"cluster", "#ClusterFile", "config/clusters/*/*.yaml", config.LayerCluster},
}

// JSONSchemas generates a JSON Schema (2020-12) per layer file from the
// embedded CUE with CUE's own generator, for editors (yaml-language-server)
// and other tools. They check one file's shape; what needs the merged
// fleet (required fields, cross-field rules, secrets, numbers every reader
// agrees on) only regionctl validate checks.
func JSONSchemas() (map[string][]byte, error) {
	c, err := compileEmbedded()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, l := range LayerFiles {
		expr, err := jsonschema.Generate(c.root.LookupPath(cue.ParsePath(l.Def)), nil)
		if err != nil {
			return nil, fmt.Errorf("generating the JSON Schema of %s: %w", l.Def, err)
		}
		v := c.ctx.BuildExpr(expr)
		v = v.FillPath(cue.ParsePath(`"$id"`), "https://regionctl.dev/schemas/"+l.Name+".schema.json")
		v = v.FillPath(cue.ParsePath("title"), fmt.Sprintf("regionctl %s layer file (%s), generated from schema/*.cue %s", l.Name, l.Glob, l.Def))
		raw, err := v.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding the JSON Schema of %s: %w", l.Def, err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		openEmbedded(doc)
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		out[l.Name] = append(b, '\n')
	}
	return out, nil
}

// Draft07 is a layer's JSON Schema (as JSONSchemas makes it) in draft-07,
// the draft VS Code's YAML extension (yaml-language-server) enforces:
// $defs become definitions, and the top level's $ref to the settings,
// closed by unevaluatedProperties (a 2020-12 keyword draft-07 consumers
// ignore, with every keyword beside a $ref), is inlined, so that
// additionalProperties: false refuses a mistyped top-level key there too.
func Draft07(name string, b []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	defs, _ := doc["$defs"].(map[string]any)
	delete(doc, "$defs")
	if ref, ok := doc["$ref"].(string); ok {
		def, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		if !ok || doc["unevaluatedProperties"] != false {
			return nil, fmt.Errorf("%s: a top-level $ref draft-07 cannot express: %s", name, ref)
		}
		props, _ := doc["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		defProps, _ := def["properties"].(map[string]any)
		for k, v := range defProps {
			if _, both := props[k]; both {
				return nil, fmt.Errorf("%s: %s is a key of both the file and %s", name, k, ref)
			}
			props[k] = v
		}
		doc["properties"] = props
		delete(doc, "$ref")
		delete(doc, "unevaluatedProperties")
		doc["additionalProperties"] = false
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch n := v.(type) {
		case map[string]any:
			for k, x := range n {
				switch k {
				case "unevaluatedProperties", "unevaluatedItems", "prefixItems", "dependentRequired", "dependentSchemas", "$defs":
					return fmt.Errorf("%s: %s has no draft-07 form", name, k)
				case "$ref":
					if r, ok := x.(string); ok {
						n[k] = strings.Replace(r, "#/$defs/", "#/definitions/", 1)
					}
				}
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range n {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if len(defs) > 0 {
		doc["definitions"] = defs
	}
	if err := walk(doc); err != nil {
		return nil, err
	}
	doc["$schema"] = "http://json-schema.org/draft-07/schema#"
	doc["$id"] = "https://regionctl.dev/schemas/" + name + ".draft-07.schema.json"
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// openEmbedded lets string constraints admit references (pending), and
// repairs two things CUE's generator (v0.17, experimental)
// gets wrong here. An open struct ({...}) becomes const {}: it is any
// object. And a closed definition that embeds another (#ClusterFile: {#Settings, type!: ...}):
// both schemas get additionalProperties: false, so that each refuses the
// other's keys and no file validates. The embedding schema closes with
// unevaluatedProperties: false instead, which sees the keys its $ref
// evaluates, and the embedded definition stays open at its top level.
func openEmbedded(doc map[string]any) {
	defs, _ := doc["$defs"].(map[string]any)
	var strs []map[string]any     // after the walk: pending adds nodes
	negated := map[uintptr]bool{} // done: pending would invert or repeat them
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			// A forbidden pattern (!~) admits a reference by admitting
			// the negation or the reference, not by negating both.
			if nt, ok := n["not"].(map[string]any); ok && nt["pattern"] != nil && !negated[reflect.ValueOf(nt).Pointer()] {
				delete(n, "not")
				ref := map[string]any{"type": "string", "pattern": pendingRef}
				negated[reflect.ValueOf(nt).Pointer()] = true
				negated[reflect.ValueOf(ref).Pointer()] = true
				n["allOf"] = append(asList(n["allOf"]), map[string]any{"anyOf": []any{map[string]any{"not": nt}, ref}})
			}
			if negated[reflect.ValueOf(n).Pointer()] {
				return
			}
			// An open struct ({...}: Helm values) comes out as const {},
			// which admits only the empty object.
			if c, ok := n["const"].(map[string]any); ok && len(c) == 0 {
				delete(n, "const")
				n["type"] = "object"
			}
			strs = append(strs, n)
			if ref, ok := n["$ref"].(string); ok && n["additionalProperties"] == false {
				if _, hasProps := n["properties"]; hasProps {
					delete(n, "additionalProperties")
					n["unevaluatedProperties"] = false
					if def, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any); ok {
						delete(def, "additionalProperties")
					}
				}
			}
			for _, c := range n {
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(doc)
	for _, n := range strs {
		pending(n)
	}
}

// pendingRef matches a string holding a ${...} reference, which layer files
// may use anywhere: regionctl checks such a string's final text once it is
// interpolated, per cluster (see toCUE), so a layer's schema takes it as any
// string, and so does its JSON Schema.
const pendingRef = `\$\{`

// pending lets a string constraint (a pattern, an enum of strings) also
// admit a string holding a reference.
func pending(n map[string]any) {
	var constraint map[string]any
	if p, ok := n["pattern"]; ok {
		delete(n, "pattern")
		constraint = map[string]any{"pattern": p}
	} else if e, ok := n["enum"].([]any); ok && len(e) > 0 {
		if _, isString := e[0].(string); !isString {
			return
		}
		delete(n, "enum")
		constraint = map[string]any{"enum": e}
	} else {
		return
	}
	either := []any{constraint, map[string]any{"type": "string", "pattern": pendingRef}}
	if prev, ok := n["anyOf"]; ok {
		n["allOf"] = append(asList(n["allOf"]), map[string]any{"anyOf": prev})
	}
	n["anyOf"] = either
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// Field is one key of the config as the reference documents it.
type Field struct {
	Path        string   // dotted; <name> stands for any key of a map
	Type        string   // what the schema allows, in words
	Default     string   // the effective default (#Cluster), if any
	Layers      []string // the layers whose files may set it
	Required    bool     // must be set once merged (#Cluster)
	Rollout     string   // "" or "unordered" / "semver": a versioned value
	Secret      bool     // references only
	Description string
}

// Reference lists every key a layer file may set, with what it allows,
// its default, the layers that may set it and its markers.
func Reference() ([]Field, error) {
	c, err := compileEmbedded()
	if err != nil {
		return nil, err
	}
	byPath := map[string]*Field{}
	var order []string
	for _, l := range LayerFiles {
		walkFields(c.root.LookupPath(cue.ParsePath(l.Def)), nil, func(p []string, v cue.Value) {
			key := strings.Join(p, ".")
			f, ok := byPath[key]
			if !ok {
				f = &Field{Path: key, Type: c.constraint(v), Description: strings.TrimSuffix(strings.TrimPrefix(docOf(v), " ("), ")")}
				if a := v.Attribute("rollout"); a.Err() == nil {
					f.Rollout = "unordered"
					if o, ok, _ := a.Lookup(0, "order"); ok && o != "" {
						f.Rollout = o
					}
				}
				if v.IncompleteKind() == cue.ListKind {
					if items := v.LookupPath(cue.MakePath(cue.AnyIndex)); items.Exists() {
						f.Type = "a list of " + c.constraint(items)
					}
				}
				f.Secret = isSecret(v)
				eff := lookup(c.cluster, cueSelectors(p))
				if d, ok := eff.Default(); ok && eff.Exists() {
					if k := d.Kind(); k != cue.StructKind && k != cue.ListKind && d.IsConcrete() {
						if b, err := d.MarshalJSON(); err == nil {
							f.Default = string(b)
						}
					}
				}
				f.Required = requiredIn(c.cluster, p)
				byPath[key] = f
				order = append(order, key)
			}
			f.Layers = append(f.Layers, l.Name)
		})
	}
	sort.Strings(order)
	out := make([]Field, 0, len(order))
	for _, k := range order {
		out = append(out, *byPath[k])
	}
	return out, nil
}

// walkFields calls fn for every field of the struct v, depth first; a
// pattern constraint ([#Name]: ...) is the field <name>.
func walkFields(v cue.Value, p []string, fn func([]string, cue.Value)) {
	it, err := v.Fields(cue.Optional(true), cue.Definitions(false))
	if err == nil {
		for it.Next() {
			sel := it.Selector()
			if sel.IsDefinition() || sel.PkgPath() != "" && strings.HasPrefix(sel.String(), "_") {
				continue
			}
			name := sel.Unquoted()
			if strings.HasPrefix(name, "_") {
				continue
			}
			child := append(append([]string{}, p...), name)
			fn(child, it.Value())
			if it.Value().IncompleteKind() == cue.StructKind {
				walkFields(it.Value(), child, fn)
			}
		}
	}
	// A map's keys: any name its pattern admits ("x" is one) stands for all.
	if pat := v.LookupPath(cue.MakePath(cue.Str("x").Optional())); pat.Exists() && len(p) > 0 && pat.IncompleteKind() != cue.TopKind {
		child := append(append([]string{}, p...), "<name>")
		fn(child, pat)
		if pat.IncompleteKind() == cue.StructKind {
			walkFields(pat, child, fn)
		}
	}
}

// cueSelectors maps reference path elements to lookup's: <name> is any key.
func cueSelectors(p []string) []string {
	out := make([]string, len(p))
	for i, s := range p {
		if s == "<name>" {
			s = "x"
		}
		out[i] = s
	}
	return out
}

// requiredIn reports whether #Cluster requires the field (name!: ...)
// inside fields that are themselves required.
func requiredIn(def cue.Value, p []string) bool {
	v := def
	for _, name := range p {
		it, err := v.Fields(cue.Optional(true))
		if err != nil {
			return false
		}
		found := false
		for it.Next() {
			if it.Selector().Unquoted() == name {
				if it.Selector().ConstraintType() != cue.RequiredConstraint {
					return false
				}
				v, found = it.Value(), true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ReferenceMarkdown is docs/schema/reference.md: every field, generated
// from schema/*.cue.
func ReferenceMarkdown(fields []Field) []byte {
	var b strings.Builder
	b.WriteString(referenceIntro)
	for _, f := range fields {
		var marks []string
		if f.Required {
			marks = append(marks, "required")
		}
		if f.Rollout != "" {
			m := "rollout"
			if f.Rollout != "unordered" {
				m += " (" + f.Rollout + ")"
			}
			marks = append(marks, m)
		}
		if f.Secret {
			marks = append(marks, "secret")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n",
			mdCode(f.Path), mdText(f.Type), mdCode(f.Default), strings.Join(f.Layers, ", "), strings.Join(marks, ", "), mdText(f.Description))
	}
	return []byte(b.String())
}

const referenceIntro = "<!-- Code generated by go test ./internal/schema -update. DO NOT EDIT. -->\n" + `# Config reference

Every key a layer file may set, generated from schema/*.cue (the schema regionctl embeds).

- **layers**: the files that may set the key: global (config/global/*.yaml), sector
  (config/sectors/<sector>.yaml), region (config/regions/<region>.yaml), cluster
  (config/clusters/<region>/<cluster>.yaml). A lower layer overrides a higher one.
- **default**: the value a cluster gets when no layer sets it.
- **required**: some layer must set it (once merged, for every cluster).
- **rollout**: a versioned value that rolls out sector by sector (regionctl rollout);
  *semver*: its values are ordered, and a move to an older one is a downgrade.
- **secret**: a reference to a secret, never the secret itself.
- <name> stands for any key of a map.

Editors check a file as it is typed with the JSON Schemas beside this page (global, sector,
region and cluster .schema.json; .vscode/settings.json maps them). They see one file at a time:
regionctl validate also checks the merged fleet (required keys, rules across fields, secrets,
numbers every reader agrees on), strings holding ${...} once interpolated, and tag keys (CUE's
JSON Schema generator drops the key pattern of tags).

| key | allows | default | layers | marks | description |
|---|---|---|---|---|---|
`

// mdCode is s as a code span in a table cell.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + strings.ReplaceAll(s, "|", `\|`) + " " + fence
}

// mdText is s as plain text in a table cell: one line, pipes and angle
// brackets escaped.
func mdText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}
