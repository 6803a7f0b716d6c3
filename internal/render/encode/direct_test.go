package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// The direct writer must write what the library writes, byte for byte,
// whenever it says it handled a document.
func TestDirectWritesWhatTheLibraryWrites(t *testing.T) {
	docs := []string{
		`{}`,
		`{"a":[]}`,
		`{"a":{}}`,
		`{"a":[{},[],"x",{"b":1,"c":[]},[["y","z"],{"q":"r","p":{}}]]}`,
		`{"b":true,"a":false,"c":null,"d":-0,"e":9223372036854775807,"f":1.5,"g":1e3}`,
		`{"a10":1,"a9":2,"a09":3,"a009":4,"a1":5,"A":6,"_":7,"a_b":8,"a-b":9,"a.b":10,"0":11,"10":12,"9":13,"x0y":14,"x00y":15,"x10y":16}`,
		`{"k":"1.30","l":"yes","m":"on","n":"No","o":"~","p":"","q":"<<","r":"null","s":"0x1F","t":"1:20","u":"+1","v":".5","w":"-","x":"1_000"}`,
		`{"k":"a b","l":"- a","m":"x:","n":"x: y","o":"#a","p":"a #b","q":"a#b","r":"'q","s":"a\tb","t":"é","u":"a\nb","v":"---x","w":"a ","x":" a","y":"a  b","z":"\u003chtml\u003e \u0026"}`,
		`{"arn":"arn:aws:iam::123456789012:role/x-*","url":"https://example.com/a?b=c\u0026d=e","path":"/a/b","img":"quay.io/argoproj/argocd@sha256:0123","sel":"app.kubernetes.io/name=x,y in (a,b)"}`,
		`{"long":"` + strings.Repeat("word ", 20) + `","longer":{"inner":"` + strings.Repeat("w ", 38) + `"},"nospace":"` + strings.Repeat("x", 200) + `"}`,
		`{"` + strings.Repeat("k", 130) + `":1}`,
		`{"` + strings.Repeat("k", 90) + `":" starts past the width"}`,
		`{"105":1,"17":2,"a105":3,"a17":4,"x1005":5,"x105":6}`,
		`{"list":["` + strings.Repeat("a b ", 19) + `", "short"]}`,
		`{"emoji":"\ud83d\ude00 ok","ctl":"\u0007","dq":"say \"hi\"","bs":"a\\b"}`,
	}
	handled := 0
	for _, d := range docs {
		want, err := fromJSON([]byte(d), library)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		got, ok := directJSON([]byte(d))
		if !ok {
			continue
		}
		handled++
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\ndirect:\n%s\nlibrary:\n%s", d, got, want)
		}
	}
	if handled < len(docs)-4 {
		t.Errorf("the direct writer handled %d of %d documents; it should leave only floats, long broken scalars and long keys to the library", handled, len(docs))
	}
}

// TestDirectWritesLiteralBlocks: strings of lines the library writes as
// literal blocks are written directly, as the library writes them, where
// they stand (a mapping's value, a sequence's item, nested); the blocks
// the writer does not place exactly are left to the library.
func TestDirectWritesLiteralBlocks(t *testing.T) {
	for _, d := range []string{
		`{"patch":"$patch: delete\napiVersion: v1\nkind: Task\n","strip":"a\nb","gap":"a\n\n  b\n","deep":{"er":{"s":"x: 'y'\n- \"z\" #c\n"}},"list":["one\ntwo\n",{"k":"p\nq"},["r\ns"]],"long":"` + strings.Repeat("word ", 30) + `end\nend"}`,
		`{"only":"a\n"}`,
		`{"l":[{"m":[{"n":"deep\nlines\n"}]}]}`,
	} {
		want, err := fromJSON([]byte(d), library)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(want, []byte(": |")) {
			t.Fatalf("%s: the library wrote no literal block:\n%s", d, want)
		}
		got, ok := directJSON([]byte(d))
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%s:\ndirect (%v):\n%s\nlibrary:\n%s", d, ok, got, want)
		}
	}
	// An indentation hint and kept line breaks (|2-, |+) are the
	// library's alone; a line ending in a space, a tab or a line that is
	// not ASCII the library writes double-quoted.
	for _, d := range []string{`{"a":" lead\nx"}`, `{"a":"x\n\n"}`, `{"a":"x \ny"}`, `{"a":"x\ty\nz"}`, `{"a":"é\nx"}`} {
		want, err := fromJSON([]byte(d), library)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := directJSON([]byte(d))
		if ok && (!bytes.Equal(got, want) || bytes.Contains(want, []byte(": |"))) {
			t.Errorf("%s: written directly:\n%s\nlibrary:\n%s", d, got, want)
		}
	}
}

// The direct writer reads the JSON text itself: whatever it handles reads
// as encoding/json decodes it (escapes, bytes that are not UTF-8, spaces,
// a key given twice), and what is not one JSON document it leaves alone.
func TestDirectReadsJSONAsTheDecoderDoes(t *testing.T) {
	for _, d := range []string{
		`{"a":"x","a":"y"}`,
		`{"a":{"b":1,"b":{"c":2}}}`,
		"{\"k\":\"a\xffb\",\"l\":\"\xe2\x82\"}",
		"{\"\xff\":1}",
		`{"esc":"\u0041\n\"q\"\/\\","\u006b":"v","u":"\ud83d\ude00"}`,
		" {\n\t\"a\" : [ 1 , { \"b\" : null } ] ,\r\"c\":\"d\" }",
		`{"n":[-0,0,-9223372036854775808,9223372036854775807,-1]}`,
		`{"n":-9223372036854775809}`,
		`{"n":9223372036854775808}`,
		`{"n":12345678901234567890}`,
		`{"n":1.0}`,
		`{"n":1e2}`,
	} {
		want, err := fromJSON([]byte(d), library)
		if err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		if got, ok := directJSON([]byte(d)); ok && !bytes.Equal(got, want) {
			t.Errorf("%q:\ndirect:\n%s\nlibrary:\n%s", d, got, want)
		}
	}
	for _, d := range []string{``, `[1]`, `"s"`, `{"a":1}{"b":2}`, `{"a":1,}`, `{"a" 1}`, `{"a":tru}`, `{"a":"b}`, "{\"a\":\"\x01\"}", `{"a":1-2}`, `{"a":--1}`, `{"a":01}`, `{a:1}`} {
		if got, ok := directJSON([]byte(d)); ok {
			t.Errorf("%q is not one JSON object, yet the direct writer wrote:\n%s", d, got)
		}
	}
}

// Every document regionctl writes with this package into the repository's
// own deploy/ is written the same by both paths, and nearly all of them
// without the library: the speed of a render depends on it.
func TestDirectOnTheRenderedFleet(t *testing.T) {
	root := filepath.Join("..", "..", "..", "deploy")
	var ours, handled int
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		j, err := yaml.YAMLToJSON(bytes.TrimPrefix(b, []byte(Marker)))
		if err != nil {
			return nil
		}
		want, err := fromJSON(j, library)
		if err != nil || !bytes.Equal(want, b) {
			return nil // not a file this package wrote (effective configs have comments)
		}
		ours++
		got, ok := directJSON(j)
		if !ok {
			return nil
		}
		handled++
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the direct writer differs from the library:\n%s", p, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ours < 100 {
		t.Fatalf("only %d files of %s are this package's; the test reads the wrong tree", ours, root)
	}
	if handled*100 < ours*95 {
		t.Errorf("the direct writer handled %d of %d documents; under 95%% and renders slow down", handled, ours)
	}
	t.Logf("%d of %d documents written directly", handled, ours)
}

// FuzzDirect builds documents from the fuzzer's bytes (keys and strings
// drawn from an alphabet of the characters that change YAML's forms) and
// holds the direct writer to the library wherever it answers.
func FuzzDirect(f *testing.F) {
	for _, s := range []string{"", "a", "k1:v 2", "0x-y\n#", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccc"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := gen{data: data}
		v := g.object(0)
		j, err := json.Marshal(v)
		if err != nil {
			t.Skip()
		}
		want, err := fromJSON(j, library)
		if err != nil {
			t.Skip()
		}
		if got, ok := directJSON(j); ok && !bytes.Equal(got, want) {
			t.Fatalf("%s:\ndirect:\n%s\nlibrary:\n%s", j, got, want)
		}
	})
}

// FuzzDirectReadsJSON gives the direct writer any text: what is not one
// JSON document it leaves alone, and what it writes is what the library
// writes for the text decoded.
func FuzzDirectReadsJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c d"}],"e":null}`, ` {"a" : true}`, `{"a":"\u00e9\n"}`, `{"a":1}{}`, `{"a":-0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := directJSON(data)
		want, err := fromJSON(data, library)
		if err != nil {
			if ok {
				t.Fatalf("%q does not decode (%v), yet the direct writer wrote:\n%s", data, err, got)
			}
			return
		}
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("%q:\ndirect:\n%s\nlibrary:\n%s", data, got, want)
		}
	})
}

// fromJSON decodes j as YAML does and encodes it with enc.
func fromJSON(j []byte, enc func(any) ([]byte, error)) ([]byte, error) {
	doc, err := decode(j)
	if err != nil {
		return nil, err
	}
	return enc(doc)
}

// directJSON is the direct writer's answer for the JSON document j.
func directJSON(j []byte) ([]byte, bool) { return direct(j) }

const alphabet = "aby0019 :-#'\"\n\t.,*/_@=+{}[]&!|>%?~é<"

type gen struct {
	data []byte
	i    int
}

func (g *gen) next() int {
	if g.i >= len(g.data) {
		return 0
	}
	g.i++
	return int(g.data[g.i-1])
}

func (g *gen) str() string {
	n := g.next() % 12
	if g.next()%8 == 0 {
		n = g.next() % 100
	}
	var b strings.Builder
	words := g.next()%3 == 0 // prose, which the library breaks past its width
	for i := 0; i < n; i++ {
		if words && g.next()%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(alphabet[g.next()%len(alphabet)])
	}
	return strings.ToValidUTF8(b.String(), "x")
}

func (g *gen) value(depth int) any {
	switch k := g.next() % 9; {
	case depth < 4 && k == 0:
		return g.object(depth + 1)
	case depth < 4 && k == 1:
		n := g.next() % 4
		l := make([]any, n)
		for i := range l {
			l[i] = g.value(depth + 1)
		}
		return l
	case k == 2:
		return json.Number(strings.TrimPrefix(g.str(), "+"))
	case k == 3:
		return g.next()%2 == 0
	case k == 4:
		return nil
	case k == 5:
		return g.next() - 128
	default:
		return g.str()
	}
}

func (g *gen) object(depth int) map[string]any {
	n := g.next() % 5
	m := map[string]any{}
	for i := 0; i < n; i++ {
		m[g.str()] = g.value(depth)
	}
	return m
}

// TestCyclicKeysAreWrittenOneWay: the library compares these keys in a
// cycle ("001\"" < "0x'" < "1/" < "001\""), so it wrote them in the order
// the map happened to iterate; both writers now give them one order.
func TestCyclicKeysAreWrittenOneWay(t *testing.T) {
	doc := map[string]any{`"`: nil, `001"`: map[string]any{}, `0x'`: "a", `1/`: "b"}
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	first, err := fromJSON(j, library)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if again, _ := fromJSON(j, library); !bytes.Equal(again, first) {
			t.Fatalf("the library writer wrote the same document two ways:\n%s\n%s", first, again)
		}
	}
	if got, ok := directJSON(j); ok && !bytes.Equal(got, first) {
		t.Fatalf("direct:\n%s\nlibrary:\n%s", got, first)
	}
}

// keyCompare is judged by the library's own order: yamlv2 sorting a plain
// map's keys itself (its keyList), not through sortKeys. Every pair of
// keys the rendered fleet writes, and of keys made to meet at each kind of
// character, must come out in the order keyCompare gives, wherever the
// library gives the pair one order (it has cycles; sortKeys settles those
// by bytes).
func TestKeyOrderIsTheLibrarys(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range []string{"a", "A", "b", "B", "z", "Z", "_", "-", ".", "/", "~", " ", "a-b", "a_b", "a.b", "a/b", "ab", "aB", "a", "a-", "a_", "Ab", "_a", "-a",
		"a1", "a9", "a10", "a09", "a009", "0", "9", "10", "x0y", "x00y", "x10y", "é", "aé", "ä", "a-1", "a_1", "apiVersion", "api", "api_version",
		"argocd.argoproj.io/sync-wave", "argocd.argoproj.io/sync-options", "app.kubernetes.io/name", "cluster_name", "clusterName", "cluster-name", "clusters"} {
		seen[k] = true
	}
	root := filepath.Join("..", "..", "..", "deploy")
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") || files >= 400 {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var doc any
		if yaml.Unmarshal(b, &doc) == nil {
			collectKeys(doc, seen)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 150 {
		t.Fatalf("only %d keys: the test reads the wrong tree", len(seen))
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	judged, plain := 0, 0
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			first, ok := libraryFirst(t, a, b)
			if !ok {
				continue
			}
			judged++
			if _, isPlain := plainKeyCompare(a, b); isPlain {
				plain++
			}
			want := -1
			if first == b {
				want = 1
			}
			if got := keyCompare(a, b); got != want {
				t.Errorf("keyCompare(%q, %q) = %d; the library writes %q first", a, b, got, first)
			}
			if got := keyCompare(b, a); got != -want {
				t.Errorf("keyCompare(%q, %q) = %d; the library writes %q first", b, a, got, first)
			}
		}
	}
	if plain*2 < judged {
		t.Errorf("%d of %d pairs took the one-pass comparison; the corpus misses what renders write", plain, judged)
	}
	t.Logf("%d keys, %d pairs judged, %d by the one-pass comparison", len(keys), judged, plain)
}

// libraryFirst is the key the library writes first of a map holding a and
// b, and whether it wrote the same one each of three times (a map's
// iteration order differs from one marshal to the next).
func libraryFirst(t *testing.T, a, b string) (string, bool) {
	ab, err := yamlv2.Marshal(yamlv2.MapSlice{{Key: a, Value: 0}, {Key: b, Value: 0}})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for n := 0; n < 3; n++ {
		out, err := yamlv2.Marshal(map[string]any{a: 0, b: 0})
		if err != nil {
			t.Fatal(err)
		}
		k := b
		if bytes.Equal(out, ab) {
			k = a
		}
		if n > 0 && k != first {
			return "", false
		}
		first = k
	}
	return first, true
}

// collectKeys adds every mapping key of a decoded document to seen.
func collectKeys(v any, seen map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			seen[k] = true
			collectKeys(e, seen)
		}
	case []any:
		for _, e := range x {
			collectKeys(e, seen)
		}
	}
}

// TestValueTreeMatchesJSON: a generic mapping's own tree (Tree.Value, the
// path YAML takes for a map[string]any) writes what its JSON encoding
// gives, or declines: over 20,000 random documents of every kind of value
// Value knows (and floats, which it declines), each at random in the
// typed forms Value takes too ([]string, map[string]string,
// []map[string]any, []map[string]string).
func TestValueTreeMatchesJSON(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	built := 0
	for i := 0; i < 20000; i++ {
		data := make([]byte, 64+rnd.IntN(256))
		for j := range data {
			data[j] = byte(rnd.IntN(256))
		}
		g := gen{data: data}
		v := retypeMembers(g.object(0), rnd)
		if i%10 == 0 {
			v["f"] = 2.5
		}
		if ok, err := treeMatches(v); err != nil {
			t.Fatal(err)
		} else if ok {
			built++
		}
	}
	if built < 5000 { // a third: numbers of random text and strings the writer leaves to the library are declined
		t.Errorf("only %d of 20,000 documents were built by their trees", built)
	}
}

// FuzzValueTree is TestValueTreeMatchesJSON on the fuzzer's documents.
func FuzzValueTree(f *testing.F) {
	f.Add([]byte("k1:v 2"), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		g := gen{data: data}
		v := retypeMembers(g.object(0), rand.New(rand.NewPCG(seed, 0)))
		if _, err := treeMatches(v); err != nil {
			t.Fatal(err)
		}
	})
}

// treeMatches says whether v's tree was built, and fails when what YAML
// or the tree writes is not what v's JSON encoding gives.
func treeMatches(v map[string]any) (bool, error) {
	want, jerr := ViaJSON(v)
	got, err := YAML(v)
	if (err == nil) != (jerr == nil) || !bytes.Equal(got, want) {
		return false, fmt.Errorf("YAML of %#v:\n%s (%v)\nits JSON gives:\n%s (%v)", v, got, err, want, jerr)
	}
	b, ok := Built(members(v))
	if ok && (jerr != nil || !bytes.Equal(b, want)) {
		return false, fmt.Errorf("the tree of %#v wrote:\n%s\nits JSON gives:\n%s (%v)", v, b, want, jerr)
	}
	return ok, nil
}

// retypeMembers is m with its members retyped.
func retypeMembers(m map[string]any, rnd *rand.Rand) map[string]any {
	for k, e := range m {
		m[k] = retype(e, rnd)
	}
	return m
}

// retype gives some of v's lists and mappings the typed forms Value takes.
func retype(v any, rnd *rand.Rand) any {
	switch x := v.(type) {
	case map[string]any:
		strs := map[string]string{}
		for k, e := range x {
			x[k] = retype(e, rnd)
			if s, ok := x[k].(string); ok {
				strs[k] = s
			}
		}
		if len(strs) == len(x) && rnd.IntN(2) == 0 {
			return strs
		}
	case []any:
		var strs []string
		var maps []map[string]any
		for i, e := range x {
			x[i] = retype(e, rnd)
			if s, ok := x[i].(string); ok {
				strs = append(strs, s)
			}
			if m, ok := x[i].(map[string]any); ok {
				maps = append(maps, m)
			}
		}
		switch {
		case len(x) > 0 && len(strs) == len(x) && rnd.IntN(2) == 0:
			return strs
		case len(x) > 0 && len(maps) == len(x) && rnd.IntN(2) == 0:
			return maps
		case len(x) > 0 && len(maps) == len(x) && rnd.IntN(2) == 0:
			var sm []map[string]string
			for _, m := range maps {
				s := map[string]string{}
				for k, e := range m {
					if str, ok := e.(string); ok {
						s[k] = str
					}
				}
				sm = append(sm, s)
			}
			return sm
		}
	}
	return v
}

// TestQuotedSafeIsTheLibrarys: the form quotedSafe's strings are given
// without the library is the library's, over 50,000 random strings of
// words and punctuation with ": " in them, short and past the line's
// width, and each cluster's AppProject description.
func TestQuotedSafeIsTheLibrarys(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	const letters, others = "abcnoTtyYNfFO019_./-=+@,()*:", "#'\"?&!\t é"
	strs := []string{"The platform components of staging/eu-west-1/mc01: this cluster only, their namespaces only, their chart sources only."}
	for range 50000 {
		var b strings.Builder
		b.WriteByte("aTyonFZ"[rnd.IntN(7)])
		for n := rnd.IntN(120); n > 0; n-- {
			switch rnd.IntN(10) {
			case 0:
				b.WriteString(": ")
			case 1:
				b.WriteByte(' ')
			case 2:
				if rnd.IntN(50) == 0 {
					b.WriteString(string([]rune(others)[rnd.IntN(len([]rune(others)))]))
				}
			default:
				b.WriteByte(letters[rnd.IntN(len(letters))])
			}
		}
		strs = append(strs, b.String())
	}
	safe := 0
	for _, s := range strs {
		if !quotedSafe(s) {
			continue
		}
		safe++
		if got, want := singleForm(s), libraryForm(s); got != want {
			t.Fatalf("%q: %+v, the library's %+v", s, got, want)
		}
	}
	if safe < 5000 {
		t.Errorf("only %d of %d strings were quotedSafe", safe, len(strs))
	}
}
