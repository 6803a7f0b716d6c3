package fleet_test

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/schema"
)

func newChecker(t testing.TB) *schema.Checker {
	t.Helper()
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// overlay reads a txtar archive's files over base.
func overlay(t testing.TB, base fstest.MapFS, archive string) (fstest.MapFS, *txtar.Archive) {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for k, v := range base {
		out[k] = v
	}
	for _, f := range a.Files {
		out[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	return out, a
}

func baseFleet(t testing.TB) fstest.MapFS {
	fsys, _ := overlay(t, fstest.MapFS{}, "testdata/base.txtar")
	return fsys
}

// expectation is one diagnostic a case must produce.
type expectation struct{ File, Line, Summary string }

var marker = regexp.MustCompile(`#\s*ERROR:\s*(.+?)\s*$`)

// expected collects `# ERROR: summary` markers from the files of fsys and
// `ERROR file: summary` lines (for problems about a whole file) from the
// archive's comment.
func expected(t *testing.T, fsys fstest.MapFS, comment []byte) []expectation {
	var out []expectation
	for name, f := range fsys {
		for i, line := range strings.Split(string(f.Data), "\n") {
			if m := marker.FindStringSubmatch(line); m != nil {
				out = append(out, expectation{name, fmt.Sprint(i + 1), m[1]})
			}
		}
	}
	for _, line := range strings.Split(string(comment), "\n") {
		if rest, ok := strings.CutPrefix(line, "ERROR "); ok {
			file, summary, _ := strings.Cut(rest, ": ")
			out = append(out, expectation{file, "", summary})
		}
	}
	return out
}

func got(diags diag.Diagnostics) []expectation {
	var out []expectation
	for _, d := range diags {
		if d.Severity != diag.Error {
			continue
		}
		line := ""
		if d.Pos.Line > 0 {
			line = fmt.Sprint(d.Pos.Line)
		}
		out = append(out, expectation{d.Pos.File, line, d.Summary})
	}
	return out
}

func sorted(es []expectation) []expectation {
	sort.Slice(es, func(i, j int) bool { return fmt.Sprint(es[i]) < fmt.Sprint(es[j]) })
	return es
}

func TestBaseFleetIsValid(t *testing.T) {
	_, diags := fleet.Load(baseFleet(t), "config", newChecker(t))
	if len(diags) > 0 {
		t.Fatalf("base fleet: %v", diags)
	}
}

func TestRepositoryFleetIsValid(t *testing.T) {
	f, diags := fleet.Load(os.DirFS("../.."), "config", newChecker(t))
	if len(diags) > 0 {
		t.Fatalf("config/: %v", diags)
	}
	if len(f.Sectors) < 3 || len(f.Regions) < 6 {
		t.Errorf("example fleet has %d sectors and %d regions; the README promises at least 3 and 6", len(f.Sectors), len(f.Regions))
	}
	envs := map[string]bool{}
	for _, s := range f.Sectors {
		envs[s.Environment] = true
	}
	if len(envs) < 2 {
		t.Errorf("example fleet spans %d environments, want 2", len(envs))
	}
}

// TestInvalidFleets runs every case under testdata/invalid: the errors it
// produces must be exactly the ones its files mark.
func TestInvalidFleets(t *testing.T) {
	cases, _ := filepath.Glob("testdata/invalid/*.txtar")
	if len(cases) < 30 {
		t.Fatalf("only %d invalid cases", len(cases))
	}
	checker := newChecker(t)
	for _, path := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			fsys, a := overlay(t, baseFleet(t), path)
			want := expected(t, fsys, a.Comment)
			if len(want) == 0 {
				t.Fatal("case marks no expected error")
			}
			_, diags := fleet.Load(fsys, "config", checker)
			if d := cmp.Diff(sorted(want), sorted(got(diags))); d != "" {
				t.Errorf("diagnostics (-want +got):\n%s\nall: %s", d, diags)
			}
			for _, d := range diags {
				if d.Severity == diag.Error && d.Detail == "" {
					t.Errorf("%s: no detail telling what to change", d)
				}
				// No raw CUE reaches a user: no let bindings, path comments
				// or hidden definitions in what they read.
				if m := rawCUE.FindString(d.Summary + " " + d.Detail); m != "" {
					t.Errorf("%s: raw CUE (%q) in the message: %s", d.Pos, m, d.Detail)
				}
			}
		})
	}
}

// rawCUE is what CUE prints of its own internals: never for a user.
var rawCUE = regexp.MustCompile(`\blet\b [A-Z_]+|//cue:|\.#[a-z]\b|_\|_|\{ \(\*|\(\*[0-9"]|#(Settings|Cluster|Global|Sector|Region|ClusterFile)\b|\bNODE_MIN\b`)

// TestGeneratedInvalidFleets covers inputs a text fixture cannot hold.
func TestGeneratedInvalidFleets(t *testing.T) {
	checker := newChecker(t)
	// Their VPCs may overlap: the count is what this case is about.
	manyClusters := fstest.MapFS{"config/regions/us-east-1.yaml": {Data: []byte("sector: prod\nnetwork:\n  allow_overlap: true\n")}}
	for i := 1; i <= 21; i++ {
		manyClusters[fmt.Sprintf("config/clusters/us-east-1/mc%02d.yaml", i)] = &fstest.MapFile{Data: []byte("type: management\n")}
	}
	manyTags := "type: management\ntags:\n"
	for i := 1; i <= 48; i++ {
		manyTags += fmt.Sprintf("  t%02d: v\n", i)
	}
	cases := []struct {
		name  string
		files fstest.MapFS
		want  []expectation
	}{
		{"48 tags", fstest.MapFS{"config/clusters/us-east-1/mc01.yaml": {Data: []byte(manyTags)}},
			[]expectation{{"config/clusters/us-east-1/mc01.yaml", "3", "48 tags, at most 47"}}},
		{"binary junk", fstest.MapFS{"config/regions/us-east-1.yaml": {Data: []byte("sector: prod\n\x00\x01\xff\xfe")}},
			[]expectation{{"config/regions/us-east-1.yaml", "2", "file is not UTF-8 text"}}},
		{"invalid utf-8", fstest.MapFS{"config/sectors/prod.yaml": {Data: []byte("order: 1\nenvironment: \xc3\x28\n")}},
			[]expectation{{"config/sectors/prod.yaml", "", "file is not UTF-8 text"}}},
		{"over 10 MiB", fstest.MapFS{"config/global/huge.yaml": {Data: append([]byte("tags:\n  note: "), bytes.Repeat([]byte("x"), config.MaxFileSize)...)}},
			[]expectation{{"config/global/huge.yaml", "", "file too large"}}},
		{"21 management clusters", manyClusters,
			[]expectation{{"config/regions/us-east-1.yaml", "", "region us-east-1 has 21 management clusters, needs 1 to 20"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := baseFleet(t)
			for k, v := range tc.files {
				fsys[k] = v
			}
			_, diags := fleet.Load(fsys, "config", checker)
			if d := cmp.Diff(sorted(tc.want), sorted(got(diags))); d != "" {
				t.Errorf("diagnostics (-want +got):\n%s\nall: %s", d, diags)
			}
		})
	}
}

var _ fs.FS = fstest.MapFS{}

// TestUndelegatedPlatformAPIZoneWarns holds validate to the rule of issue
// 36: a region whose platform API zone the parent domain does not delegate
// yet is told so, at the domain's file and line, with what to do; the
// cluster still renders (its first apply makes the zone to delegate).
func TestUndelegatedPlatformAPIZoneWarns(t *testing.T) {
	checker := newChecker(t)
	for _, tc := range []struct {
		name, global string
		warned       bool
	}{
		{"delegated", "  zone_delegated: true\n", false},
		{"not yet", "  zone_delegated: false\n", true},
		{"unset", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := baseFleet(t)
			f := fsys["config/global/defaults.yaml"]
			data := strings.Replace(string(f.Data), "  zone_delegated: true\n", tc.global, 1)
			fsys["config/global/defaults.yaml"] = &fstest.MapFile{Data: []byte(data)}
			fl, diags := fleet.Load(fsys, "config", checker)
			if diags.HasErrors() {
				t.Fatalf("errors: %v", diags)
			}
			var warned []string
			for _, d := range diags {
				if d.Severity == diag.Warning && strings.Contains(d.Summary, "is not delegated yet") {
					warned = append(warned, d.Pos.String()+" "+d.Summary)
					if !strings.Contains(d.Detail, "platform_api_delegation") || !strings.Contains(d.Detail, "zone_delegated: true") {
						t.Errorf("the warning does not say what to do: %s", d.Detail)
					}
				}
			}
			regionals := 0
			for _, c := range fl.Clusters {
				if c.Type == "regional" {
					regionals++
					if c.Partial {
						t.Errorf("%s is partial: a warning must not keep it from rendering", c.ID())
					}
				}
			}
			if !tc.warned {
				if len(warned) > 0 {
					t.Errorf("warned of a delegated zone: %v", warned)
				}
				return
			}
			if len(warned) != regionals || regionals == 0 {
				t.Fatalf("%d warnings for %d regional clusters: %v", len(warned), regionals, warned)
			}
			for _, w := range warned {
				if !strings.HasPrefix(w, "config/global/defaults.yaml:") {
					t.Errorf("warning not at the domain's line: %s", w)
				}
			}
		})
	}
	// A management cluster's public zone, where hosted clusters' names go.
	for _, tc := range []struct {
		name, file string
		warned     bool
	}{
		{"public zone delegated", "type: management\nhypershift:\n  public_zone: mc01.example.com\n  public_zone_delegated: true\n", false},
		{"public zone not yet", "type: management\nhypershift:\n  public_zone: mc01.example.com\n", true},
		{"no public zone", "type: management\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := baseFleet(t)
			fsys["config/clusters/us-east-1/mc01.yaml"] = &fstest.MapFile{Data: []byte(tc.file)}
			_, diags := fleet.Load(fsys, "config", checker)
			var warned []string
			for _, d := range diags {
				if d.Severity == diag.Warning && strings.Contains(d.Summary, "mc01.example.com is not delegated yet") {
					warned = append(warned, d.Pos.String())
					if !strings.Contains(d.Detail, "public_zone_name_servers") || !strings.Contains(d.Detail, "hypershift.public_zone_delegated: true") {
						t.Errorf("the warning does not say what to do: %s", d.Detail)
					}
				}
			}
			if diags.HasErrors() || (len(warned) == 1) != tc.warned || (tc.warned && warned[0] != "config/clusters/us-east-1/mc01.yaml:3:16") {
				t.Errorf("warned at %v (want a warning: %v); all: %v", warned, tc.warned, diags)
			}
		})
	}
}

func TestDelegatedZonesAreWhatTheLayersSay(t *testing.T) {
	fsys := baseFleet(t)
	fsys["config/clusters/us-east-1/mc01.yaml"] = &fstest.MapFile{Data: []byte("type: management\nhypershift:\n  public_zone: mc01.example.com\n  public_zone_delegated: true\n")}
	fsys["config/clusters/us-west-2/mc01.yaml"] = &fstest.MapFile{Data: []byte("type: management\nhypershift:\n  public_zone: mc01.us-west-2.example.com\n")}
	fsys["config/regions/us-west-2.yaml"] = &fstest.MapFile{Data: append(append([]byte(nil), fsys["config/regions/us-west-2.yaml"].Data...), "platform_api:\n  zone_delegated: false\n"...)}
	f, diags := fleet.Load(fsys, "config", newChecker(t))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := fleet.DelegatedZones(f)
	want := map[string]bool{"api.us-east-1.example.com": true, "mc01.example.com": true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delegated zones (-want +got):\n%s", d)
	}
}

func TestDelegatedZonesOfTheExampleFleet(t *testing.T) {
	zones, err := fleet.DelegatedZonesOf(os.DirFS("../.."))
	if err != nil {
		t.Fatal(err)
	}
	if !zones["api.eu-west-1.stage.hcp.example.com"] || !zones["mc01.eu-west-1.hcp.platform.example.com"] {
		t.Errorf("the example fleet's delegated zones: %v", zones)
	}
	if _, err := fleet.DelegatedZonesOf(fstest.MapFS{"config/global/x.yaml": {Data: []byte("nonsense: [\n")}}); err == nil {
		t.Error("a fleet that does not load gave zones")
	}
}

// TestLoadBesideIsLoad holds LoadBeside, which checks only what differs
// from a fleet loaded beside it, to Load: for the valid base fleet beside
// itself (then it is that fleet), for every invalid case beside the valid
// fleet and beside itself, the same diagnostics, word for word.
func TestLoadBesideIsLoad(t *testing.T) {
	checker := newChecker(t)
	head, headDiags := fleet.Load(baseFleet(t), "config", checker)
	if len(headDiags) > 0 {
		t.Fatal(headDiags)
	}
	for _, bc := range besideCases(t) {
		path, fsys := bc.path, bc.fsys
		f, beside := fleet.LoadBeside(blobFS{fsys}, "config", checker, head, headDiags)
		_, whole := fleet.Load(fsys, "config", newChecker(t))
		if d := cmp.Diff(fmt.Sprint(whole), fmt.Sprint(beside)); d != "" {
			t.Errorf("%s: LoadBeside's diagnostics (-Load +LoadBeside):\n%s", path, d)
		}
		if path == "" && f != head {
			t.Error("the same files beside a fleet that passed every check: a second fleet was built")
		}
		if path == "" {
			continue
		}
		// The same files beside a fleet of them that failed a check: that
		// fleet is no answer, and its checks run again.
		failed, failedDiags := fleet.Load(fsys, "config", checker)
		again, diags := fleet.LoadBeside(blobFS{fsys}, "config", checker, failed, failedDiags)
		if again == failed || fmt.Sprint(diags) != fmt.Sprint(whole) {
			t.Errorf("%s beside itself: the failed fleet taken (%v), or diagnostics %v, want %v", path, again == failed, diags, whole)
		}
	}
}

// besideCase is a fleet the loaders that take a fleet beside them are
// held to their plain loaders on: an invalid case of testdata/invalid over
// the valid fleet, or (path "") the valid fleet itself.
type besideCase struct {
	path string
	fsys fstest.MapFS
}

func besideCases(t *testing.T) []besideCase {
	paths, _ := filepath.Glob("testdata/invalid/*.txtar")
	out := []besideCase{}
	for _, path := range append(paths, "") {
		fsys := baseFleet(t)
		if path != "" {
			fsys, _ = overlay(t, fsys, path)
		}
		out = append(out, besideCase{path, fsys})
	}
	return out
}

// blobFS is a MapFS that tells its files' git blob hashes, as a commit's
// tree does (config.BlobHasher).
type blobFS struct{ fstest.MapFS }

func (b blobFS) BlobHash(name string) ([20]byte, bool) {
	f := b.MapFS[name]
	if f == nil {
		return [20]byte{}, false
	}
	return sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(f.Data))), f.Data...)), true
}

// TestLoadLayersBesideIsLoadLayers holds LoadLayersBeside to LoadLayers:
// the same diagnostics, word for word, and the same deletion phase of
// every cluster, for the valid fleet beside itself (then it is that
// fleet) and for every invalid case beside the valid fleet and beside
// itself (a failed fleet is no answer).
func TestLoadLayersBesideIsLoadLayers(t *testing.T) {
	checker := newChecker(t)
	head, headDiags := fleet.Load(baseFleet(t), "config", checker)
	if len(headDiags) > 0 {
		t.Fatal(headDiags)
	}
	phases := func(f *config.Fleet) string {
		var b strings.Builder
		for _, c := range f.Clusters {
			fmt.Fprintf(&b, "%s %s %v %v\n", c.ID(), c.Doc.File, c.Deleting(), c.Bool("delete_pipeline"))
		}
		return b.String()
	}
	for _, bc := range besideCases(t) {
		path, fsys := bc.path, bc.fsys
		beside, besideDiags := []*config.Fleet{head}, []diag.Diagnostics{headDiags}
		if path != "" {
			failed, failedDiags := fleet.Load(fsys, "config", checker)
			beside, besideDiags = append(beside, failed), append(besideDiags, failedDiags)
		}
		want, wantDiags := fleet.LoadLayers(fsys, "config", newChecker(t), nil)
		for i, b := range beside {
			f, diags := fleet.LoadLayersBeside(blobFS{fsys}, "config", checker, b, besideDiags[i])
			if d := cmp.Diff(fmt.Sprint(wantDiags), fmt.Sprint(diags)); d != "" {
				t.Errorf("%s beside fleet %d: diagnostics (-LoadLayers +LoadLayersBeside):\n%s", path, i, d)
			}
			if d := cmp.Diff(phases(want), phases(f)); d != "" {
				t.Errorf("%s beside fleet %d: phases (-LoadLayers +LoadLayersBeside):\n%s", path, i, d)
			}
			if path == "" && f != head {
				t.Error("the same files beside a fleet that passed every check: a second fleet was built")
			}
			if i == 1 && f == b {
				t.Errorf("%s beside itself: the failed fleet was taken", path)
			}
		}
	}
}

// TestCheckAWSAndFleetsIsOneAfterAnother holds CheckAWSAndFleets, which
// runs AWS's rules of each fleet beside the fleet rules, to CheckAWS and
// CheckFleet called one after another: the same diagnostics for each
// fleet, word for word (in diag's order: CheckAWS gives a region's
// overlapping VPCs in map order), and the same clusters marked Partial,
// for each invalid case (and the valid fleet) paired with the next, with
// and without clusters skipped; one fleet given twice panics.
func TestCheckAWSAndFleetsIsOneAfterAnother(t *testing.T) {
	checker := newChecker(t)
	cases := besideCases(t)
	load := func(fsys fs.FS) *config.Fleet {
		f, _ := fleet.LoadLayers(fsys, "config", checker, nil)
		checker.CheckClusters(f)
		return f
	}
	partial := func(f *config.Fleet) string {
		var b strings.Builder
		for _, c := range f.Clusters {
			fmt.Fprintf(&b, "%s %v\n", c.ID(), c.Partial)
		}
		return b.String()
	}
	skips := map[string]func(*config.Cluster) bool{
		"none":                    nil,
		"management of us-east-1": func(c *config.Cluster) bool { return c.Type == "management" && c.Region.Name == "us-east-1" },
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("one fleet given twice: no panic, two goroutines would check its clusters")
			}
		}()
		f := load(cases[0].fsys)
		checker.CheckAWSAndFleets(nil, f, f)
	}()
	for i, bc := range cases {
		next := cases[(i+1)%len(cases)]
		for name, skip := range skips {
			one, two := load(bc.fsys), load(next.fsys)
			want := []diag.Diagnostics{
				append(checker.CheckAWS(one, skip), checker.CheckFleet(one)...),
				append(checker.CheckAWS(two, skip), checker.CheckFleet(two)...),
			}
			again, other := load(bc.fsys), load(next.fsys)
			got := checker.CheckAWSAndFleets(skip, again, other)
			for j, f := range [][2]*config.Fleet{{one, again}, {two, other}} {
				if d := cmp.Diff(fmt.Sprint(want[j].Sorted()), fmt.Sprint(got[j].Sorted())); d != "" {
					t.Errorf("%s and %s, skipping %s: fleet %d's diagnostics (-one after another +CheckAWSAndFleets):\n%s", bc.path, next.path, name, j, d)
				}
				if d := cmp.Diff(partial(f[0]), partial(f[1])); d != "" {
					t.Errorf("%s and %s, skipping %s: fleet %d's partial clusters (-one after another +CheckAWSAndFleets):\n%s", bc.path, next.path, name, j, d)
				}
			}
		}
	}
}

// TestLettingGoOfMergedKeepsTheDigest: once loaded and checked, a cluster
// that the schema's defaults gave a config of its own has let go of the
// config the layers made (config.Fleet.LetGoOfMerged), and keeps its
// digest: that of the config config.Build makes of the same files, by
// Load and by both loaders of a pair. A fleet built beside one that let go
// does not take its configs, which hold the defaults, for the layers'.
func TestLettingGoOfMergedKeepsTheDigest(t *testing.T) {
	fsys := baseFleet(t)
	docs, diags := config.Parse(fsys, "config")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	built, diags := config.Build(docs)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := map[string][32]byte{}
	for _, c := range built.Clusters {
		want[c.ID()] = config.HashWithOrigins(c.Effective)
	}
	check := func(how string, f *config.Fleet) {
		t.Helper()
		letGo := 0
		for _, c := range f.Clusters {
			if c.Merged == nil {
				letGo++
			}
			if got := c.MergedDigest(config.HashWithOrigins); got != want[c.ID()] {
				t.Errorf("%s: cluster %s's digest is not that of the layers' config", how, c.ID())
			}
		}
		if letGo == 0 {
			t.Errorf("%s: no cluster let go of its layers' config", how)
		}
	}
	checker := newChecker(t)
	loaded, diags := fleet.Load(fsys, "config", checker)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	check("Load", loaded)
	for _, identity := range []fleet.Identity{nil, func(int, *config.Fleet) func(*config.Cluster) string {
		return func(c *config.Cluster) string { return fmt.Sprintf("%x", c.MergedDigest(config.HashWithOrigins)) }
	}} {
		how := "LoadPairWhole"
		var p *fleet.Pair
		if identity == nil {
			p = fleet.LoadPairWhole(fsys, fleet.Parse(fsys, "config", checker), "config", checker)
		} else {
			how = "LoadPair"
			p = fleet.LoadPair(fsys, fleet.Parse(fsys, "config", checker), "config", checker, identity)
		}
		check(how+" (base)", p.Base)
		check(how+" (head)", p.Head)
	}
	beside, diags := config.BuildBeside(loaded.Docs, loaded)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, c := range beside.Clusters {
		if config.HashWithOrigins(c.Effective) != want[c.ID()] {
			t.Errorf("built beside a fleet that let go: cluster %s's config is not the layers'", c.ID())
		}
	}
}

// TestCheckBesideIsCheckingAlone holds checkBeside, where a head cluster
// made of the very config of a base cluster that passed its check takes
// the base's checked config, to checking each side's clusters on its own
// (CheckClustersExcept): the same diagnostics on each side,
// word for word, the same clusters failed and the same checked configs
// (the schema's defaults in). Each invalid case is paired after the valid
// fleet, before it, and before itself with one cluster file changed (so
// that the head shares the base's failed clusters), with no cluster
// skipped and with the management clusters skipped.
func TestCheckBesideIsCheckingAlone(t *testing.T) {
	load := func(checker *schema.Checker, baseFS, headFS fstest.MapFS) (base, head *config.Fleet) {
		t.Helper()
		headDocs, _ := config.Parse(headFS, "config")
		baseDocs, _ := config.ParseReusing(blobFS{baseFS}, "config", checker.DecodeOptions(), headDocs)
		checker.CheckLayers(headDocs)
		checker.CheckLayers(baseDocs)
		head, _ = config.Build(headDocs)
		base, _ = config.BuildBeside(baseDocs, head)
		return base, head
	}
	state := func(f *config.Fleet) string {
		var b strings.Builder
		for _, c := range f.Clusters {
			fmt.Fprintf(&b, "%s failed %v", c.ID(), c.Partial)
			if c.Effective != nil {
				fmt.Fprintf(&b, " %x", config.HashWithOrigins(c.Effective))
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	checker := newChecker(t)
	skips := map[string]func(*config.Cluster) bool{"none": nil, "management": func(c *config.Cluster) bool { return c.Type == "management" }}
	taken := 0
	for _, bc := range besideCases(t) {
		if bc.path == "" {
			continue
		}
		touched := fstest.MapFS{}
		var first string
		for name, f := range bc.fsys {
			touched[name] = f
			if strings.HasPrefix(name, "config/clusters/") && (first == "" || name < first) {
				first = name
			}
		}
		touched[first] = &fstest.MapFile{Data: append(append([]byte(nil), bc.fsys[first].Data...), "\n# touched\n"...)}
		for _, pair := range []struct {
			name       string
			base, head fstest.MapFS
		}{{"after the valid fleet", baseFleet(t), bc.fsys}, {"before the valid fleet", bc.fsys, baseFleet(t)}, {"after itself", bc.fsys, touched}} {
			for skipName, skip := range skips {
				how := fmt.Sprintf("%s %s, skipping %s", bc.path, pair.name, skipName)
				base, head := load(checker, pair.base, pair.head)
				bd, hd := fleet.CheckBeside(checker, base, head, skip, nil, nil)
				for _, c := range head.Clusters {
					for _, b := range base.Clusters {
						if c.Effective != nil && c.Effective == b.Effective {
							taken++
						}
					}
				}
				// The checker's results are a function of each config
				// alone: one checker serves every check.
				base2, head2 := load(checker, pair.base, pair.head)
				bd2 := checker.CheckClustersExcept(base2, skip)
				hd2 := checker.CheckClustersExcept(head2, skip)
				for _, s := range []struct {
					what      string
					got, want string
				}{
					{"base diagnostics", fmt.Sprint(bd.Sorted()), fmt.Sprint(bd2.Sorted())},
					{"head diagnostics", fmt.Sprint(hd.Sorted()), fmt.Sprint(hd2.Sorted())},
					{"base clusters", state(base), state(base2)},
					{"head clusters", state(head), state(head2)},
				} {
					if d := cmp.Diff(s.want, s.got); d != "" {
						t.Errorf("%s: %s (-alone +beside):\n%s", how, s.what, d)
					}
				}
			}
		}
	}
	if taken == 0 {
		t.Error("no head cluster took its base's checked config")
	}
}
