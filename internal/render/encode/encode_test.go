package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestDecodersAreReusedOnlyAtADocumentsEnd: a decoder is kept for the next
// document only when it stopped exactly at the end of this one, so what is
// left of one document never becomes the start of another's.
func TestDecodersAreReusedOnlyAtADocumentsEnd(t *testing.T) {
	for i := 0; i < 3; i++ {
		if doc, err := decode([]byte(`{"a":1}{"b":2}`)); err == nil {
			t.Fatalf("two documents decoded as one: %v", doc)
		}
		doc, err := decode([]byte(`{"c":3}`))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]any{"c": json.Number("3")}; !reflect.DeepEqual(doc, want) {
			t.Fatalf("decoded %v, want %v", doc, want)
		}
	}
}

// TestDecodeIsAFreshDecode: documents decoded one after another, on every
// core, each decode as a new json.Decoder decodes it.
func TestDecodeIsAFreshDecode(t *testing.T) {
	var docs [][]byte
	for i := 0; i < 200; i++ {
		v := map[string]any{"n": i, "s": fmt.Sprint("x", i), "l": make([]int, i%17), "f": 1.5 * float64(i)}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, b := range docs {
				got, err := decode(b)
				if err != nil {
					t.Error(err)
					return
				}
				var want any
				dec := json.NewDecoder(bytes.NewReader(b))
				dec.UseNumber()
				if err := dec.Decode(&want); err != nil {
					t.Error(err)
					return
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("decode(%s) = %v, want %v", b, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// marshaled is a type with its own JSON encoding, as tfvars' are.
type marshaled struct{ s string }

func (m marshaled) MarshalJSON() ([]byte, error) { return json.Marshal("m:" + m.s) }

// TestYAMLIsMarshalsText: YAML writes what the library writes for
// json.Marshal's text of a value (the judge: encoding/json and
// go.yaml.in/yaml/v2), documents of every size one after another on every
// core, its reused buffer never carrying one document into the next; a
// value json.Marshal refuses is refused.
func TestYAMLIsMarshalsText(t *testing.T) {
	var values []any
	for i := 0; i < 120; i++ {
		values = append(values, map[string]any{
			"html":   "<a href=\"x\">&amp;</a>" + strings.Repeat("é\u2028", i%5),
			"n":      json.Number(fmt.Sprint(i, ".50")),
			"list":   make([]int, (i*37)%200),
			"nested": map[string]any{"m": marshaled{fmt.Sprint(i)}, "empty": map[string]any{}},
			"big":    strings.Repeat("y", (i%7)*(i%7)*4000),
		})
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Go(func() {
			for i := range values {
				v := values[(i*(w+3))%len(values)]
				got, err := YAML(v)
				if err != nil {
					t.Error(err)
					return
				}
				j, err := json.Marshal(v)
				if err != nil {
					t.Error(err)
					return
				}
				doc, err := decode(j)
				if err != nil {
					t.Error(err)
					return
				}
				want, err := library(doc)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, want) {
					t.Errorf("YAML of value %d:\n%s\nthe library of json.Marshal's text:\n%s", i, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := YAML(map[string]any{"f": func() {}}); err == nil {
		t.Error("YAML encoded a func")
	}
	if got, err := YAML(map[string]any{"a": 1}); err != nil || string(got) != Marker+"a: 1\n" {
		t.Errorf("after a refusal: %q, %v", got, err)
	}
}

// built is a Document of a function, for the tree's own tests.
type built func(t *Tree)

func (b built) BuildYAML(t *Tree) { b(t) }

// TestTreeDeclinesWhatItCannotMirror: a tree holding anything whose JSON
// text the direct writer does not read back as it was (a float, a string
// that is not UTF-8, a type of its own encoding) or left unbalanced is
// not written, and YAML encodes the document by its JSON.
func TestTreeDeclinesWhatItCannotMirror(t *testing.T) {
	for name, b := range map[string]built{
		"float":           func(t *Tree) { t.Value("x", 1.5) },
		"float in a list": func(t *Tree) { t.Value("x", []any{"a", 2.0}) },
		"not UTF-8":       func(t *Tree) { t.Str("x", "a\xff") },
		"not UTF-8 value": func(t *Tree) { t.Value("x", map[string]any{"k": "a\xff"}) },
		"a float Number":  func(t *Tree) { t.Value("x", json.Number("1.5")) },
		"other type":      func(t *Tree) { t.Value("x", struct{ A int }{1}) },
		"left open":       func(t *Tree) { t.Map("x") },
		"closed twice":    func(t *Tree) { t.End(); t.End() },
	} {
		if out, ok := Built(b); ok {
			t.Errorf("%s: built\n%s", name, out)
		}
	}
	for name, b := range map[string]built{
		"scalars": func(t *Tree) {
			t.Str("s", "x")
			t.Int("i", -3)
			t.Bool("b", true)
			t.Null("n")
			t.Value("v", map[string]any{"z": []any{json.Number("7"), nil, false}, "a": map[string]string{"k": "on"}})
			t.Strs("l", nil)
			t.Strs("e", []string{})
			t.StrMap("m", map[string]string{})
		},
		"empty": func(t *Tree) {},
	} {
		want, err := ViaJSON(b.asJSON(t))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Built(b)
		if !ok || string(got) != string(want) {
			t.Errorf("%s: built (%v)\n%s\nits JSON gives\n%s", name, ok, got, want)
		}
	}
}

// asJSON is what b built, as generic values for its JSON encoding.
func (b built) asJSON(t *testing.T) any {
	m := map[string]any{}
	var tr Tree
	tr.w = &writer{}
	tr.Map("")
	b(&tr)
	tr.End()
	if tr.spoil {
		t.Fatal("spoiled")
	}
	var val func(at int32) any
	val = func(at int32) any {
		n := tr.w.nodes[at]
		switch n.kind {
		case '{':
			out := map[string]any{}
			for c := at + 1; c < n.end; c = tr.w.nodes[c].end {
				out[tr.w.nodes[c].key] = val(c)
			}
			return out
		case '[':
			out := []any{}
			for c := at + 1; c < n.end; c = tr.w.nodes[c].end {
				out = append(out, val(c))
			}
			return out
		case '"':
			return n.text
		case '0':
			return json.Number(n.text)
		case 't':
			return true
		case 'f':
			return false
		}
		return nil
	}
	for k, v := range val(0).(map[string]any) {
		m[k] = v
	}
	return m
}

// docPointer is a Document that is a pointer, for the nil case.
type docPointer struct{ A string }

func (d *docPointer) BuildYAML(t *Tree) { t.Str("A", d.A) }

// TestNilDocumentIsNull: a nil pointer that is a Document is encoded by its
// JSON (null), not asked for its tree.
func TestNilDocumentIsNull(t *testing.T) {
	var d *docPointer
	got, err := YAML(d)
	want, werr := ViaJSON(d)
	if err != nil || werr != nil || string(got) != string(want) {
		t.Errorf("YAML of a nil Document: %q (%v), its JSON gives %q (%v)", got, err, want, werr)
	}
}
