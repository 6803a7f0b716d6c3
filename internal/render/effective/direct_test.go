package effective

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	yaml2 "go.yaml.in/yaml/v2"

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

// TestYAML11ReadersKeepStrings: every string of tricky, as a key, a value
// and an item, is read back as that same string by a YAML 1.1 reader
// (go.yaml.in/yaml/v2, the resolver of Helm's and sigs.k8s.io/yaml's
// lineage), whichever writer wrote it: Yes:, y:, 1:20 and 1_000 are
// strings in effective/ for every reader, not booleans and numbers.
func TestYAML11ReadersKeepStrings(t *testing.T) {
	at := config.Origin{Layer: config.LayerGlobal, Pos: diag.Pos{File: "config/global/a.yaml"}}
	for _, s := range append(tricky, "1:20", "190:20:30", "Yes", "YES", "=", "1_000.5", "0b1_0", "0x_1F") {
		if strings.ContainsAny(s, "\n\u2028") || !utf8.ValidString(s) || strings.ContainsRune(s, 0x7f) || strings.Contains(s, "a\u00a0b") {
			continue
		}
		str := &config.Value{Kind: config.String, Str: s, Origin: at}
		v := &config.Value{Kind: config.Map, Fields: []config.Field{
			{Key: s, Value: str},
			{Key: "list", Value: &config.Value{Kind: config.List, Items: []*config.Value{str}, Origin: at}},
		}}
		out, ok := direct(nil, v)
		if !ok {
			out = viaLibrary(t, v)
		}
		var back yaml2.MapSlice
		if err := yaml2.Unmarshal(out, &back); err != nil {
			t.Errorf("%q: a YAML 1.1 reader refuses\n%s: %v", s, out, err)
			continue
		}
		if len(back) != 2 || back[0].Key != s || back[0].Value != s {
			t.Errorf("%q: a YAML 1.1 reader reads the entry as %#v: %#v\n%s", s, back[0].Key, back[0].Value, out)
		}
		if items, ok := back[1].Value.([]any); !ok || len(items) != 1 || items[0] != s {
			t.Errorf("%q: a YAML 1.1 reader reads the list as %#v\n%s", s, back[1].Value, out)
		}
	}
}

// TestPyYAMLKeepsStrings: PyYAML, a full YAML 1.1 resolver (base-60
// numbers, digit separators, the boolean words), reads every string of
// tricky back as that string, as key and as value. It is a second judge
// the project did not write; a machine without python3 and PyYAML skips,
// and CI (REGIONCTL_REQUIRE_JUDGES=1) fails instead.
func TestPyYAMLKeepsStrings(t *testing.T) {
	const script = `import json, sys, yaml
docs = json.load(sys.stdin)
print(json.dumps([yaml.safe_load(d) for d in docs]))`
	if err := exec.Command("python3", "-c", "import yaml").Run(); err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("REGIONCTL_REQUIRE_JUDGES") == "1" {
			t.Fatalf("PyYAML, a second judge, is missing: %v (pip install pyyaml)", err)
		}
		t.Skip("PyYAML is not installed: pip install pyyaml")
	}
	at := config.Origin{Layer: config.LayerGlobal, Pos: diag.Pos{File: "config/global/a.yaml"}}
	var cases []string
	var docs []string
	for _, s := range append(tricky, "1:20", "190:20:30", "-1:30.5", "Yes", "YES", "=", "1_000", "1_000.5", "0b1_0", "0x_1F") {
		if strings.ContainsAny(s, "\n\u2028\x7f\u00a0") || !utf8.ValidString(s) {
			continue
		}
		str := &config.Value{Kind: config.String, Str: s, Origin: at}
		v := &config.Value{Kind: config.Map, Fields: []config.Field{{Key: s, Value: str}}}
		out, ok := direct(nil, v)
		if !ok {
			out = viaLibrary(t, v)
		}
		cases, docs = append(cases, s), append(docs, string(out))
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command("python3", "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, s := range cases {
		if len(back[i]) != 1 || back[i][s] != s {
			t.Errorf("%q: PyYAML reads %v from\n%s", s, back[i], docs[i])
		}
	}
}
