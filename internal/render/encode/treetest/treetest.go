// Package treetest holds a Document's tree (encode.Document) to its JSON
// encoding: documents of its type filled at random by reflection, every
// exported field reached, written both ways. The tests of the packages
// whose documents build their own trees call it.
package treetest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/render/encode"
)

// MatchesJSON fills 3,000 documents of each of protos' types at random (half
// of them of plain strings and integers, which the direct writer always
// writes itself) and fails t where YAML or the tree (encode.Built) writes
// anything but what the document's JSON encoding gives (encode.ViaJSON),
// where a plain document is not built, where fewer than half are, or
// where a field is never set.
func MatchesJSON(t *testing.T, protos ...encode.Document) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, proto := range protos {
		typ := reflect.TypeOf(proto).Elem()
		t.Run(typ.Name(), func(t *testing.T) {
			f := filler{rnd: rnd, t: t, set: map[string]bool{}}
			built := 0
			for i := 0; i < 3000; i++ {
				doc := reflect.New(typ)
				f.clean = i%2 == 0
				f.fill(doc.Elem(), typ.Name())
				d := doc.Interface().(encode.Document)
				want, err := encode.ViaJSON(d)
				if err != nil {
					t.Fatalf("%s: %v", typ.Name(), err)
				}
				if got, err := encode.YAML(d); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("YAML wrote\n%s\nnot what its JSON gives (err %v)", got, err)
				}
				got, ok := encode.Built(d)
				if !ok {
					if f.clean {
						j, _ := json.Marshal(d)
						t.Fatalf("a document of plain strings and integers was not built:\n%s", j)
					}
					continue
				}
				built++
				if !bytes.Equal(got, want) {
					j, _ := json.Marshal(d)
					t.Fatalf("the tree of %s wrote\n%s\nits JSON gives\n%s\nJSON: %s", typ.Name(), got, want, j)
				}
			}
			if built < 1500 {
				t.Errorf("only %d of 3,000 documents were built by their trees", built)
			}
			for _, field := range f.fields(typ, typ.Name()) {
				if !f.set[field] {
					t.Errorf("%s was never set: the filler does not reach it", field)
				}
			}
		})
	}
}

// filler sets a value's every exported field at random; clean keeps to
// what the direct writer writes itself (plainStrings, integers).
type filler struct {
	rnd   *rand.Rand
	t     *testing.T
	clean bool
	set   map[string]bool // the fields given a value other than their zero
}

var treeStrings = []string{
	"", "a", "mc01", "argoproj.io/v1alpha1", "https://kubernetes.default.svc", "on", "No", "~", "null",
	"1.30", "0x1F", "1e3", "-", "- a", "a: b", "a:b", "#x", "x #y", "'q'", `"d"`, "a\nb", "a\tb", " lead",
	"trail ", "é", "日本", "a b c", "CreateNamespace=true", "{x}", "[y]", "@at", "`tick`", "%p", "!bang", "&a", "*a",
	strings.Repeat("word ", 20), strings.Repeat("w", 130), "The platform components of staging/x/mc01: this cluster only.",
}

// plainStrings are strings the direct writer writes itself, as keys and
// values: a document of these and integers is always built.
var plainStrings = []string{
	"", "a", "mc01", "argoproj.io/v1alpha1", "https://kubernetes.default.svc", "on", "No", "~", "null",
	"1.30", "1e3", "a:b", "x #y", "'q'", "é", "a b c", "CreateNamespace=true", "@at", "%p",
	strings.TrimSpace(strings.Repeat("word ", 20)),
}

// plainKeys are the keys of clean documents: plainStrings the writer
// takes as simple keys.
var plainKeys = []string{"a", "mc01", "argoproj.io/v1alpha1", "on", "No", "1.30", "a:b", "x #y", "'q'", "CreateNamespace=true"}

func (f *filler) key() string {
	if f.clean {
		return plainKeys[f.rnd.IntN(len(plainKeys))]
	}
	return f.str()
}

func (f *filler) str() string {
	switch {
	case f.clean:
		return plainStrings[f.rnd.IntN(len(plainStrings))]
	case f.rnd.IntN(20) == 0:
		return "bad\xffutf8"
	}
	return treeStrings[f.rnd.IntN(len(treeStrings))]
}

// value is a component's values: nested maps and lists of scalars.
func (f *filler) value(depth int) any {
	switch k := f.rnd.IntN(10); {
	case depth < 3 && k == 0:
		return f.object(depth + 1)
	case depth < 3 && k == 1:
		l := make([]any, f.rnd.IntN(3))
		for i := range l {
			l[i] = f.value(depth + 1)
		}
		return l
	case k == 2:
		return f.rnd.Int64N(2000) - 1000
	case k == 3:
		return f.rnd.IntN(2) == 0
	case k == 4:
		return nil
	case k == 5 && !f.clean:
		return 1.5
	case k == 6:
		return json.Number("42")
	default:
		return f.str()
	}
}

func (f *filler) object(depth int) map[string]any {
	m := map[string]any{}
	for range f.rnd.IntN(4) {
		m[f.key()] = f.value(depth)
	}
	return m
}

func (f *filler) fill(v reflect.Value, at string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.str())
	case reflect.Bool:
		v.SetBool(f.rnd.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt(f.rnd.Int64N(200) - 100)
	case reflect.Pointer:
		if f.rnd.IntN(3) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), at)
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() {
				continue
			}
			f.fill(v.Field(i), at+"."+sf.Name)
			if !v.Field(i).IsZero() {
				f.set[at+"."+sf.Name] = true
			}
		}
	case reflect.Slice:
		switch f.rnd.IntN(4) {
		case 0:
			return // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := 1 + f.rnd.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			f.fill(v.Index(i), at)
		}
	case reflect.Map:
		switch f.rnd.IntN(4) {
		case 0:
			return // nil
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
			return
		}
		if v.Type() == reflect.TypeOf(map[string]any{}) {
			v.Set(reflect.ValueOf(f.object(0)))
			return
		}
		if v.Type() != reflect.TypeOf(map[string]string{}) {
			f.t.Fatalf("%s: the filler knows no %s", at, v.Type())
		}
		m := map[string]string{}
		for range 1 + f.rnd.IntN(4) {
			m[f.key()] = f.str()
		}
		v.Set(reflect.ValueOf(m))
	default:
		f.t.Fatalf("%s: the filler knows no %s", at, v.Type())
	}
}

// fields are the exported fields reachable from typ, named as fill names
// them.
func (f *filler) fields(typ reflect.Type, at string) []string {
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice:
		return f.fields(typ.Elem(), at)
	case reflect.Struct:
		var out []string
		for i := range typ.NumField() {
			sf := typ.Field(i)
			if sf.IsExported() {
				out = append(out, at+"."+sf.Name)
				out = append(out, f.fields(sf.Type, at+"."+sf.Name)...)
			}
		}
		return out
	}
	return nil
}
