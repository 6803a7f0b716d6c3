package effective

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/schema"
)

// viaLibrary is v as go.yaml.in/yaml/v3 writes it, or nil when it refuses.
func viaLibrary(t *testing.T, v *config.Value) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := library(&b, v); err != nil {
		return nil
	}
	return b.Bytes()
}

// TestDirectIsTheLibrary: every cluster of a generated fleet (schema
// defaults and their origins included) is written by the direct writer,
// byte for byte as the library writes it.
func TestDirectIsTheLibrary(t *testing.T) {
	checker, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(fleetgen.Generate(fleetgen.Options{Sectors: 2, RegionsPerSector: 3, ClustersPerRegion: 4}).FS(), "config", checker)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, c := range f.Clusters {
		got, ok := direct(nil, c.Effective)
		if !ok {
			t.Errorf("%s: the direct writer left the cluster to the library", c.ID())
			continue
		}
		if want := viaLibrary(t, c.Effective); !bytes.Equal(got, want) {
			t.Errorf("%s: direct\n%s\nlibrary\n%s", c.ID(), got, want)
		}
	}
}

// tricky are strings whose form is the library's business: words its
// resolver takes for other types, indicators, spaces, non-ASCII, breaks.
var tricky = []string{"yes", "no", "on", "Off", "y", "1.30", "9.1.0", "2xlarge", "10.0.0.0/16", "1/2", "1:2", "0/0",
	"a: b", "a:b", "a:", "#x", "a #b", "a#b", "-x", "- x", "x,y", "[a]", "{a}", "", " a", "a ", "é", "0x10", "0o17", "1e3",
	"1_000", "2006-01-02", "2006-01-02T15:04:05Z", "null", "Null", "~", ".inf", "-.inf", ".nan", "true", "TRUE", "<<",
	"---x", "...", "a\nb", "x\ty", "@x", "x@y", "`x", "%x", "!x", "&x", "*x", "|x", ">x", "'x", "\"x", "?x", "? x", "x?",
	"_x", "/x", "ssm:///platform/x", "https://example.com/a", "aws+x@example.com", "a=b", "+1", "-1", "0", "007",
	strings.Repeat("long words ", 12), strings.Repeat("x", 130), "\u2028", "a\u00a0b", "\x7f", "\xff"}

// FuzzDirectIsTheLibrary: for any string as a key, a value, an item of a
// sequence or an origin, the direct writer writes what the library does
// or leaves the document to it.
func FuzzDirectIsTheLibrary(f *testing.F) {
	for i, s := range tricky {
		f.Add(s, tricky[(i+1)%len(tricky)], tricky[(i+7)%len(tricky)])
		f.Add("key", s, "config/global/a.yaml")
	}
	f.Add("key", "value", "config/global/a.yaml")
	f.Add("key", "value", "# already a comment")
	f.Fuzz(func(t *testing.T, key, value, file string) {
		at := config.Origin{Layer: config.LayerGlobal, Pos: diag.Pos{File: file}}
		def := config.Origin{Layer: config.LayerSchema, Pos: diag.Pos{File: "schema/cluster.cue"}}
		str := func(s string, o config.Origin) *config.Value {
			return &config.Value{Kind: config.String, Str: s, Origin: o}
		}
		field := func(k string, v *config.Value) config.Field { return config.Field{Key: k, Value: v} }
		v := &config.Value{Kind: config.Map, Fields: []config.Field{
			field("a", &config.Value{Kind: config.Map, Fields: []config.Field{
				field(key, str(value, at)),
				field("d", str(value, def)),
				field("e", &config.Value{Kind: config.Map}),
			}}),
			field("b", &config.Value{Kind: config.List, Items: []*config.Value{str(value, at), str(key, at), {Kind: config.Int, Int: -3}}, Origin: at}),
			field("c", &config.Value{Kind: config.List, Origin: at}),
			field("n", &config.Value{Kind: config.Int, Int: 42, Origin: at}),
			field("t", &config.Value{Kind: config.Bool, Bool: true, Origin: def}),
			field("z", &config.Value{Kind: config.Null, Origin: at}),
		}}
		got, ok := direct(nil, v)
		if !ok {
			return
		}
		want := viaLibrary(t, v)
		if !bytes.Equal(got, want) {
			t.Errorf("key %q value %q file %q: direct\n%s\nlibrary\n%s", key, value, file, got, want)
		}
	})
}

// TestDirectLeavesToTheLibrary: what the direct writer does not place
// (a float, a sequence holding a mapping) it leaves to the library rather
// than guess.
func TestDirectLeavesToTheLibrary(t *testing.T) {
	at := config.Origin{Layer: config.LayerGlobal, Pos: diag.Pos{File: "config/global/a.yaml"}}
	for name, v := range map[string]*config.Value{
		"float":           config.NewFloat(1.5, at),
		"list of mapping": {Kind: config.List, Items: []*config.Value{{Kind: config.Map}}, Origin: at},
		"multi-line":      {Kind: config.String, Str: "a\nb", Origin: at},
	} {
		doc := &config.Value{Kind: config.Map, Fields: []config.Field{{Key: "k", Value: v}}}
		if _, ok := direct(nil, doc); ok {
			t.Errorf("%s: written directly", name)
		}
	}
}
