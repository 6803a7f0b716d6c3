package config

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/regionctl/regionctl/internal/fleetgen"
)

// The judge of fastYAML is yaml.v3: every tree fastYAML builds must be the
// one yaml.v3 builds of the same text, on the fields decode reads.

// v3Root is yaml.v3's root mapping of data, or an error.
func v3Root(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("not one document")
	}
	return doc.Content[0], nil
}

// nodeDiff names the first difference between two trees on the fields
// decode reads (Kind, Style, Tag, Value, Line, Column, LineComment and the
// content, in order), or "".
func nodeDiff(at string, got, want *yaml.Node) string {
	g := fmt.Sprintf("kind %d style %d tag %q value %q at %d:%d comment %q, %d children",
		got.Kind, got.Style, got.Tag, got.Value, got.Line, got.Column, got.LineComment, len(got.Content))
	w := fmt.Sprintf("kind %d style %d tag %q value %q at %d:%d comment %q, %d children",
		want.Kind, want.Style, want.Tag, want.Value, want.Line, want.Column, want.LineComment, len(want.Content))
	if g != w {
		return fmt.Sprintf("%s: fastYAML %s; yaml.v3 %s", at, g, w)
	}
	for i := range got.Content {
		if d := nodeDiff(fmt.Sprintf("%s/%d", at, i), got.Content[i], want.Content[i]); d != "" {
			return d
		}
	}
	return ""
}

// judgeFast holds fastYAML's reading of data to yaml.v3's, and reports
// whether fastYAML read it.
func judgeFast(t testing.TB, name string, data []byte) bool {
	t.Helper()
	got, ok := fastYAML(data)
	if !ok {
		return false
	}
	want, err := v3Root(data)
	if err != nil {
		t.Errorf("%s: fastYAML read a file yaml.v3 refuses (%v):\n%s", name, err, data)
		return true
	}
	if d := nodeDiff("", got, want); d != "" {
		t.Errorf("%s: %s\n%s", name, d, data)
	}
	return true
}

// fleetFiles are the layer files of the example fleet, the golden fleets
// and a generated one.
func fleetFiles(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, g := range []string{"../../config", "../../golden"} {
		err := filepath.WalkDir(g, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") || !strings.Contains(p, "config/") {
				return err
			}
			b, err := os.ReadFile(p)
			out[p] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for p, b := range fleetgen.Generate(fleetgen.Options{Sectors: 3, RegionsPerSector: 4, ClustersPerRegion: 11}) {
		if strings.HasPrefix(p, "config/") {
			out["generated/"+p] = b
		}
	}
	return out
}

// fastCases are texts at the edges of what fastYAML reads: each is held to
// yaml.v3, whether fastYAML reads it or leaves it to yaml.v3.
var fastCases = []string{
	"a: 1\n", "a: 1", "a:  1   \n", "a: b # c\n", "a: b #c\n", "a: b#c\n", "a: 'b' # c\n", "a: \"b\"  # c\n",
	"a: \"b\"#c\n", "a: 'it''s'\n", "a: \"x\\ny\"\n", "a: ''\n", "a: \"\"\n", "a: [x, y]\n", "a: []\n", "a: [ ]\n",
	"a: [x, y] # c\n", "a: [x,y]\n", "a: [ x , y ]\n", "a: [x, y,]\n", "a: [x y, z]\n", "a: [\"x\", y]\n", "a: [x: y]\n",
	"a: [[x]]\n", "a: [x\n", "a: [x, y]z\n", "a:\n  b: 1\n", "a:\n    b: 1\n    c: 2\nd: 3\n", "a:\n- x\n- y\nb: 1\n",
	"a:\n  - x\n  - y\n", "a:\n  - x # c\n  - 'y'\n", "a:\n  - x\n b: 1\n", "a:\n  b: 1\n c: 2\n", "a:\n  - x\n  b: 1\n",
	"a:\n- x\n-\n", "a:\n  -\n", "a:\n  - b: 1\n", "a:\n  - - x\n", "a:\nb: 1\n", "a:\n", "a: # c\n  b: 1\n",
	"# head\na: 1\n# foot\n", "a: 1\n\n\n# c\nb: 2\n", "a:\n  # c\n  b: 1\n", "a:\n  b: 1\n  # c\n", "a:\n  b: 1\n# c\nc: 2\n",
	"a: b\n  c\n", "a: b:\n", "a: b: c\n", "a: b:c\n", "a: http://x/y\n", "a: sha256:abcd\n", "a: ${b}-${c}\n",
	"a: ~\n", "a: null\n", "a: Null\n", "a: NULL\n", "a: true\n", "a: True\n", "a: TRUE\n", "a: yes\n", "a: on\n", "a: y\n",
	"a: 0\n", "a: 012\n", "a: 0x1F\n", "a: 0o17\n", "a: 0b11\n", "a: 1_000\n", "a: +1\n", "a: -1\n", "a: 1.0\n",
	"a: 1.50\n", "a: .5\n", "a: 1e3\n", "a: .inf\n", "a: -.inf\n", "a: .nan\n", "a: 99999999999999999999\n",
	"a: 2001-12-14\n", "a: 2001-12-14t21:59:43.10-05:00\n", "a: 10.0.0.0/16\n", "a: 72h\n", "a: 25%\n", "a: 2xlarge\n",
	"a: \"1.33\"\n", "a: -\n", "a: - x\n", "a: -x\n", "a: .\n", "a: <<\n", "<<: a\n", "a: =\n", "a: !!str 1\n", "a: &x 1\nb: *x\n",
	"a: |\n  x\n", "a: >\n  x\n", "a: {b: 1}\n", "a: @x\n", "a: `x\n", "a: %x\n", "a: ?x\n", "a: :x\n", "a: ,x\n", "a: ]x\n",
	"a : 1\n", "a:1\n", "\"a\": 1\n", "'a': 1\n", "-a: 1\n", "1: x\n", "true: x\n", "null: x\n", "a-b.c/d_e: 1\n", "a: 1\na: 2\n",
	"---\na: 1\n", "a: 1\n---\nb: 2\n", "a: 1\n...\n", "%YAML 1.2\n---\na: 1\n", " a: 1\n", "a: 1\n b: 2\n", "- a\n", "a\n", "a: 1\nb\n",
	"\n\na: 1\n", "# only\n", "", "a: x  y\n", "a: x #y #z\n", "a: 'x' y\n", "a: 'x\n", "a: \"x\n", "a: x'y\n", "a: x\"y\n",
	"a:\n  b:\n    c:\n      d: 1\n", "a:\n  b:\n  - x\n  c: 1\n", "a:\n  b: [1, 2]\n  c:\n    - 3\n", "a: [1, \"2\"]\n", "a: ['x']\n",
	"a: [x#y]\n", "a: [x #y]\n", "a: [x] #y\n", "a: [x]#y\n", "a: [-x]\n", "a: [- x]\n", "a: [~, null, true, 1.5, .inf]\n",
	"a: " + strings.Repeat("x", 2000) + "\n", strings.Repeat("k", 1100) + ": 1\n", strings.Repeat("k", 1000) + ": 1\n",
}

func TestFastYAMLIsYAMLv3(t *testing.T) {
	read := 0
	for i, c := range fastCases {
		if judgeFast(t, fmt.Sprintf("case %d", i), []byte(c)) {
			read++
		}
	}
	files := fleetFiles(t)
	fleet := 0
	for p, b := range files {
		switch {
		case judgeFast(t, p, b):
			fleet++
		case strings.HasPrefix(p, "generated/"):
			// The files of a fleet at scale are what fastYAML is for.
			t.Errorf("%s: fastYAML leaves a generated fleet's file to yaml.v3", p)
		}
	}
	// Alterations of the fleet's files: a character from YAML's syntax put
	// in, or one taken out, at random places.
	rng := rand.New(rand.NewPCG(41, 7))
	alphabet := []byte(" \n#:-'\"[],{}&*!|>%@?~.0a_/$")
	var names []string
	for p := range files {
		names = append(names, p)
	}
	altered := 0
	for i := 0; i < 20000; i++ {
		p := names[rng.IntN(len(names))]
		b := append([]byte(nil), files[p]...)
		for n := 1 + rng.IntN(3); n > 0 && len(b) > 0; n-- {
			at := rng.IntN(len(b))
			if rng.IntN(3) == 0 {
				b = append(b[:at], b[at+1:]...)
			} else {
				b = append(b[:at], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[at:]...)...)
			}
		}
		if judgeFast(t, fmt.Sprintf("%s altered (%d)", p, i), b) {
			altered++
		}
	}
	t.Logf("fastYAML read %d of %d edge cases, %d of %d fleet files and %d of 20000 altered ones, each as yaml.v3 does", read, len(fastCases), fleet, len(files), altered)
}

func FuzzFastYAML(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c))
	}
	for _, b := range fleetFiles(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		judgeFast(t, "input", data)
	})
}

// BenchmarkDecodeFleet decodes a generated fleet's layer files (2,200
// clusters' worth of shapes, 135 files): by fastYAML, and by yaml.v3 alone.
func BenchmarkDecodeFleet(b *testing.B) {
	files := fleetgen.Generate(fleetgen.Options{Sectors: 3, RegionsPerSector: 4, ClustersPerRegion: 11})
	var paths []string
	for _, p := range files.Paths() {
		if strings.HasPrefix(p, "config/") {
			paths = append(paths, p)
		}
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				if v, ds := Decode(p, LayerCluster, files[p]); v == nil || ds.HasErrors() {
					b.Fatal(p, ds)
				}
			}
		}
	})
	b.Run("yaml.v3", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				if root, ds := yamlRoot(p, files[p]); root == nil || ds.HasErrors() {
					b.Fatal(p, ds)
				}
			}
		}
	})
}

// BenchmarkHash digests a generated fleet's layer files' values, with
// their origins (a cluster's input identity) and without (checks).
func BenchmarkHash(b *testing.B) {
	files := fleetgen.Generate(fleetgen.Options{Sectors: 3, RegionsPerSector: 4, ClustersPerRegion: 11})
	var values []*Value
	for _, p := range files.Paths() {
		if strings.HasPrefix(p, "config/") {
			v, _ := Decode(p, LayerCluster, files[p])
			values = append(values, v)
		}
	}
	b.Run("origins", func(b *testing.B) {
		for b.Loop() {
			for _, v := range values {
				HashWithOrigins(v)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			for _, v := range values {
				Hash(v)
			}
		}
	})
}
