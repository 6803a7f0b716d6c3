package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/schema"
)

// judgeIndex holds what indexReader makes of b to encoding/json's
// Unmarshal: when the reader takes b, Unmarshal must take it too and make
// the same Index. It says whether the reader took b.
func judgeIndex(t *testing.T, name string, b []byte) bool {
	t.Helper()
	fast, ok := readIndexFast(b)
	if !ok {
		return false
	}
	var want Index
	if err := json.Unmarshal(b, &want); err != nil {
		t.Errorf("%s: read fast, and encoding/json refuses it: %v", name, err)
		return true
	}
	if !reflect.DeepEqual(*fast, want) {
		t.Errorf("%s: read fast as\n%+v\nencoding/json reads\n%+v", name, *fast, want)
	}
	return true
}

// TestIndexReaderIsUnmarshal holds indexReader to encoding/json on every
// index.json the renderer wrote here (the repository's, the golden trees',
// a generated fleet's, each of which it must read), on edge cases of
// JSON's grammar and of encoding/json's reading (escapes, null, numbers,
// duplicate and differently cased keys, invalid UTF-8), and on 5,000
// random edits of a rendered index.
func TestIndexReaderIsUnmarshal(t *testing.T) {
	written := map[string][]byte{}
	paths, _ := filepath.Glob("../../golden/*/deploy/index.json")
	for _, p := range append(paths, "../../deploy/index.json") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		written[p] = b
	}
	written["a generated fleet's"] = generatedIndex(t, fleetgen.Options{Sectors: 3, RegionsPerSector: 3, ClustersPerRegion: 3})
	if len(written) < 6 {
		t.Fatalf("only %d indexes", len(written))
	}
	for name, b := range written {
		if !judgeIndex(t, name, b) {
			t.Errorf("%s: the renderer's own index is not read fast", name)
		}
	}

	edge := []string{
		`{}`, ` {} `, "\t{\r\n}\n", `[]`, `null`, `{"renderer": null}`, `{"sectors": null}`, `{"sectors": []}`, `{"files": []}`,
		`{"files": ["a", "b"]}`, `{"files": ["a",]}`, `{"files": ["a" "b"]}`, `{"files": [1]}`, `{"renderer": "a\"b"}`,
		`{"renderer": "a\\b"}`, `{"renderer": "\u00e9"}`, `{"renderer": "é"}`, "{\"renderer\": \"\xff\"}", "{\"renderer\": \"a\tb\"}",
		"{\"renderer\": \"\xe2\x80\xa8\"}", `{"renderer": "x", "renderer": "y"}`, `{"Renderer": "x"}`, `{"RENDERER": "x"}`,
		`{"unknown": 1}`, `{"renderer": "x"} x`, `{"renderer": "x"}{}`, "\ufeff{}", `{"renderer": "x",}`, `{"renderer" "x"}`,
		`{"sectors": [{"order": 1}]}`, `{"sectors": [{"order": -1}]}`, `{"sectors": [{"order": -0}]}`, `{"sectors": [{"order": 01}]}`,
		`{"sectors": [{"order": 1.0}]}`, `{"sectors": [{"order": 1e2}]}`, `{"sectors": [{"order": 123456789}]}`,
		`{"sectors": [{"order": 1234567890}]}`, `{"sectors": [{"order": 99999999999999999999}]}`, `{"sectors": [{"order": "1"}]}`,
		`{"sectors": [{"order": -}]}`, `{"sectors": [{}]}`, `{"sectors": [{"regions": []}]}`, `{"sectors": [{"regions": null}]}`,
		`{"clusters": [{"delete": true, "delete_pipeline": false}]}`, `{"clusters": [{"delete": truex}]}`, `{"clusters": [{"delete": 1}]}`,
		`{"clusters": [{"delete": null}]}`, `{"clusters": [{"files": [], "files": ["a"]}]}`, `{"clusters": [{"id": "a"}, {"id": "b"}]}`,
		`{"regions": [{"name": "r", "files": ["x"]}], "regions": []}`, `{"files": ["a"], "files": ["b"]}`, `{"clusters": [{"ID": "a"}]}`, `{"clusters": [{"id": "a", "extra": 1}]}`,
		`{"renderer": "x"`, `{"renderer": "x`, `{"sectors": [`, `{`, ``, ` `, `{"renderer": "x"}` + "\x00",
	}
	for _, e := range edge {
		judgeIndex(t, "edge case "+e, []byte(e))
	}

	// Random edits of the generated fleet's index: a byte removed, put
	// in, or changed to one that matters to JSON.
	src := written["a generated fleet's"]
	rng := rand.New(rand.NewPCG(7, 11))
	const edits = 5000
	marks := []byte("{}[],:\"\\ \t\n0123456789-.eEtrufalsn\x00\x7f\x80\xff")
	fast := 0
	for i := range edits {
		b := bytes.Clone(src)
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b = append(b[:at], b[at+1:]...)
			case 1:
				b = append(b[:at], append([]byte{marks[rng.IntN(len(marks))]}, b[at:]...)...)
			default:
				b[at] = marks[rng.IntN(len(marks))]
			}
		}
		if judgeIndex(t, fmt.Sprintf("edit %d", i), b) {
			fast++
		}
	}
	if fast < edits/20 || fast > edits*19/20 {
		t.Errorf("%d of %d edited indexes read fast: the edits do not test both readers", fast, edits)
	}
	t.Logf("%d of %d edited indexes read fast", fast, edits)
}

// BenchmarkParseIndex reads a 500-cluster fleet's index.json: by
// indexReader, and by encoding/json alone.
func BenchmarkParseIndex(b *testing.B) {
	data := generatedIndex(b, fleetgen.Options{Sectors: 5, RegionsPerSector: 10, ClustersPerRegion: 10})
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, ok := readIndexFast(data); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var idx Index
			if err := json.Unmarshal(data, &idx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// generatedIndex is the index.json of a generated fleet's render.
func generatedIndex(tb testing.TB, o fleetgen.Options) []byte {
	tb.Helper()
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	f, diags := fleet.Load(fleetgen.Generate(o).FS(), "config", c)
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	out, diags := Render(f, Options{Renderer: "test", Charts: fleetgen.Charts})
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	return out.ByPath()[IndexPath]
}
