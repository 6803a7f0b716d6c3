package cli

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// TestRemovalOutsideGitTakesEveryStep: a fleet outside a git repository
// has no merge base; the last render's deploy/index.json holds each
// cluster's deletion phase instead, so that a cluster file removed after
// only delete: true (its pipeline never checked the destroy) is refused.
func TestRemovalOutsideGitTakesEveryStep(t *testing.T) {
	r := testrepo.Golden(t, "uneven-sectors")
	if err := os.RemoveAll(filepath.Join(r.Dir, ".git")); err != nil {
		t.Fatal(err)
	}
	render := func() (int, string) {
		var out strings.Builder
		code := Run([]string{"--root", r.Dir, "--no-cache", "render"}, io.Discard, &out)
		return code, out.String()
	}
	if code, out := render(); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	file := "config/clusters/eu-west-1/mc01.yaml"
	r.Write(file, "type: management\ndelete: true\n")
	if code, out := render(); code != 0 {
		t.Fatalf("render with delete: true: exit %d\n%s", code, out)
	}
	r.Remove(file)
	code, out := render()
	if code != ExitInput || !strings.Contains(out, "cluster eu-west-1/mc01 removed before a rendered delete_pipeline: true") || !strings.Contains(out, "config/clusters/eu-west-1/mc01.yaml") {
		t.Fatalf("removal after delete: true alone: exit %d\n%s", code, out)
	}
	// delete_pipeline: true straight after delete: false is refused too.
	r.Write(file, "type: management\ndelete: true\n")
	if code, out := render(); code != 0 {
		t.Fatalf("render with delete: true again: exit %d\n%s", code, out)
	}
	r.Write("config/clusters/eu-west-1/mc02.yaml", strings.Replace(r.Read("config/clusters/eu-west-1/mc02.yaml"), "type: management", "type: management\ndelete_pipeline: true", 1))
	if code, out := render(); code != ExitInput || !strings.Contains(out, "delete_pipeline: true for eu-west-1/mc02 before a rendered delete: true") {
		t.Fatalf("delete_pipeline: true before delete: true: exit %d\n%s", code, out)
	}
	// Each step in its own render: accepted.
	r.Write("config/clusters/eu-west-1/mc02.yaml", strings.Replace(r.Read("config/clusters/eu-west-1/mc02.yaml"), "delete_pipeline: true", "delete: true", 1))
	r.Write(file, "type: management\ndelete: true\ndelete_pipeline: true\n")
	if code, out := render(); code != 0 {
		t.Fatalf("delete_pipeline after delete: exit %d\n%s", code, out)
	}
	r.Remove(file)
	if code, out := render(); code != 0 {
		t.Fatalf("removal after delete_pipeline: exit %d\n%s", code, out)
	}
}

// TestFleetInASubdirectory: a fleet in a directory of its repository
// (--root fleet) is reviewed as that directory sees every commit: an
// unchanged review affects nothing and starts nothing; one changed cluster
// is one.
func TestFleetInASubdirectory(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := testrepo.New(t, map[string]string{
		filepath.Join(root, "golden", "uneven-sectors", "config"): "fleet/config",
		filepath.Join(root, "golden", "uneven-sectors", "charts"): "fleet/charts",
		filepath.Join(root, "pipelines", "tekton"):                "fleet/pipelines/tekton",
	})
	r.Write("README.md", "the platform's repository: the fleet is in fleet/\n")
	fleetDir := filepath.Join(r.Dir, "fleet")
	run := func(args ...string) (int, string) {
		var out strings.Builder
		code := Run(append([]string{"--root", fleetDir, "--no-cache"}, args...), &out, &out)
		return code, out.String()
	}
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	r.Commit("fleet")
	if code, out := run("affected", "-o", "json"); code != 0 || strings.Contains(out, `"id"`) {
		t.Errorf("an unchanged review: exit %d\n%s", code, out)
	}
	if code, out := run("affected", "-o", "pipelineruns"); code != 0 || strings.Contains(out, "PipelineRun") {
		t.Errorf("an unchanged review emits PipelineRuns: exit %d\n%s", code, out)
	}
	r.Edit("fleet/config/clusters/eu-west-1/mc01.yaml", "type: management", "type: management\neks:\n  node_max: 9")
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	if code, out := run("affected", "-o", "json"); code != 0 || strings.Count(out, `"id"`) != 1 || !strings.Contains(out, `"eu-west-1/mc01"`) {
		t.Errorf("one changed cluster: exit %d\n%s", code, out)
	}
	if code, out := run("render", "--check"); code != 0 {
		t.Errorf("render --check: exit %d\n%s", code, out)
	}
}

// TestCheckComparesBytes: render --check, the gate CI runs, compares
// deploy/ byte for byte: an edit that keeps a file's size and time (which
// a plain render may trust to skip work) is still found stale.
func TestCheckComparesBytes(t *testing.T) {
	r := testrepo.Golden(t, "minimal")
	run := func(args ...string) (int, string) {
		var out strings.Builder
		code := Run(append([]string{"--root", r.Dir}, args...), &out, &out)
		return code, out.String()
	}
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	// Files an hour old are past the racy window: the next render records
	// a state that a later one may trust.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	if code, out := run("render"); code != 0 || !strings.Contains(out, "by size and time") {
		t.Fatalf("the second render did not trust size and time: exit %d\n%s", code, out)
	}
	file := filepath.Join(r.Dir, "deploy", "index.json")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	i := strings.Index(string(b), `"generator": "regionctl`)
	if i < 0 {
		t.Fatalf("no generator in %s", b)
	}
	b[i+len(`"generator": "`)] = 'R' // same size
	if err := os.WriteFile(file, b, fi.Mode()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if code, out := run("render", "--check"); code != ExitInput || !strings.Contains(out, "index.json") {
		t.Errorf("render --check after an edit of the same size and time: exit %d\n%s", code, out)
	}
}

// agedGolden is the minimal golden fleet with its files an hour old
// (copied then, not while a render ran), and regionctl run in it.
func agedGolden(t *testing.T) (*testrepo.Repo, func(args ...string) (int, string)) {
	r := testrepo.Golden(t, "minimal")
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	return r, func(args ...string) (int, string) {
		var out strings.Builder
		code := Run(append([]string{"--root", r.Dir}, args...), &out, &out)
		return code, out.String()
	}
}

// TestRenderAfterAWritingRenderOnlyLooks: the render right after one that
// wrote deploy/ finds nothing to do by size and time, the files written
// within a clock tick of the record held to their recorded contents; a
// same-size edit of one of them, keeping its time, is rendered over.
func TestRenderAfterAWritingRenderOnlyLooks(t *testing.T) {
	r, run := agedGolden(t)
	if code, out := run("render"); code != 0 || !strings.Contains(out, "added") {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	if code, out := run("render"); code != 0 || !strings.Contains(out, "by size and time") {
		t.Fatalf("the render right after a writing one rendered again: exit %d\n%s", code, out)
	}
	file := filepath.Join(r.Dir, "deploy", "index.json")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	b[strings.Index(string(b), `"generator": "regionctl`)+len(`"generator": "`)] = 'R' // same size
	os.WriteFile(file, b, fi.Mode())
	os.Chtimes(file, fi.ModTime(), fi.ModTime())
	if code, out := run("render"); code != 0 || strings.Contains(out, "by size and time") || !strings.Contains(out, "changed index.json") {
		t.Errorf("a same-size, same-time edit of a just-written file was trusted: exit %d\n%s", code, out)
	}
	// render --check, which reads every file, records them as it read
	// them when they are clean: the render after it only looks.
	if err := os.Remove(filepath.Join(r.Dir, ".regionctl", "render-state.json")); err != nil {
		t.Fatal(err)
	}
	if code, out := run("render", "--check"); code != 0 {
		t.Fatalf("render --check: exit %d\n%s", code, out)
	}
	if code, out := run("render"); code != 0 || !strings.Contains(out, "by size and time") {
		t.Errorf("the render right after a clean render --check rendered again: exit %d\n%s", code, out)
	}
}

// TestInputEditedDuringTheRenderIsRendered: the inputs are stat'ed beside
// the render (before, during or after its reads); an edit of one after
// the render read it, before its record is taken, is never taken for the
// recorded state by the render after: the stat came before the edit and
// differs from the file, or after it and is too recent to prove anything
// (Record refuses it; the render after holds a recent input to nothing).
func TestInputEditedDuringTheRenderIsRendered(t *testing.T) {
	r, run := agedGolden(t)
	global := filepath.Join(r.Dir, "config", "global", "defaults.yaml")
	beforeRecord = func() {
		b, err := os.ReadFile(global)
		if err == nil {
			err = os.WriteFile(global, append(b, "# edited while the render ran\n"...), 0o644)
		}
		if err != nil {
			t.Error(err)
		}
	}
	defer func() { beforeRecord = nil }()
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	beforeRecord = nil
	if code, out := run("render"); code != 0 || strings.Contains(out, "by size and time") {
		t.Errorf("an input edited during the render was taken for the one recorded: exit %d\n%s", code, out)
	}
}

// TestOutputEditedBeforeTheRecordIsRendered: a render's record holds the
// files it wrote, too recent to prove anything by their time, to the sums
// it took of them as it rendered them (every cluster's and region's, and
// the fleet-wide files'), not to what it reads back: a same-size edit of a
// just-written cluster file that keeps its time, made before the record
// is taken, is never vouched for, and the render after renders over it.
func TestOutputEditedBeforeTheRecordIsRendered(t *testing.T) {
	for _, rel := range []string{"production/us-east-1/effective/mc01.yaml", "production/us-east-1/iam/minting-role-policy.json", "index.json"} {
		t.Run(rel, func(t *testing.T) {
			r, run := agedGolden(t)
			file := filepath.Join(r.Dir, "deploy", filepath.FromSlash(rel))
			beforeRecord = func() {
				fi, err := os.Stat(file)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(file)
				if i := strings.Index(string(b), "regionctl"); i >= 0 {
					b[i] = 'R' // same size, in a comment or a string
				} else {
					b[len(b)-2] ^= 0x20
				}
				if err := os.WriteFile(file, b, fi.Mode()); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			}
			defer func() { beforeRecord = nil }()
			if code, out := run("render"); code != 0 || !strings.Contains(out, "added") {
				t.Fatalf("render: exit %d\n%s", code, out)
			}
			beforeRecord = nil
			if code, out := run("render"); code != 0 || strings.Contains(out, "by size and time") || !strings.Contains(out, "changed "+rel) {
				t.Errorf("a file edited after the render wrote it, before its record, was trusted: exit %d\n%s", code, out)
			}
		})
	}
}

// TestPipelinesRefuseDrift: a pipeline applies only what the config of its
// commit renders: with a file of deploy/ edited by hand, it refuses before
// any step, naming the file, and reaches for no cloud at all.
func TestPipelinesRefuseDrift(t *testing.T) {
	r := testrepo.Golden(t, "minimal")
	run := func(args ...string) (int, string) {
		var out strings.Builder
		code := Run(append([]string{"--root", r.Dir, "--no-cache"}, args...), &out, &out)
		return code, out.String()
	}
	if code, out := run("render"); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	r.Commit("fleet")
	tfvars := "deploy/production/us-east-1/terraform/mc01.tfvars.json"
	r.Edit(tfvars, `"node_max": 6`, `"node_max": 60`)
	// No credentials and an endpoint that cannot answer: a step that ran
	// would fail otherwise, and differently.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	for _, args := range [][]string{
		{"pipeline", "regional", "--region", "us-east-1", "--api-endpoint", "https://api.example.com"},
		{"pipeline", "central", "--region", "us-east-1"},
	} {
		code, out := run(args...)
		if code != ExitInput || !strings.Contains(out, "refusing to run") || !strings.Contains(out, "mc01.tfvars.json") {
			t.Errorf("%v with a hand-edited %s: exit %d\n%s", args, tfvars, code, out)
		}
	}
}

// TestCacheKeysNameTheBuild: the schema checker's cache keys, the render
// cache's salt and the render state name this build's renderer; a build of
// modified sources adds the executable's stamp, so that a rebuilt one never
// trusts what an older build cached, while builds of committed sources
// share their renderer's cache.
func TestCacheKeysNameTheBuild(t *testing.T) {
	keys := func() (string, string, string) {
		a := &app{root: t.TempDir(), noCache: true}
		checker, err := a.checker()
		if err != nil {
			t.Fatal(err)
		}
		return checker.Identity(), a.renderOptions().CacheSalt, buildIdentity()
	}
	id := renderer().ID
	withRenderer(t, render.Renderer{ID: id})
	if c, salt, st := keys(); c != id+"+" || salt != "" || st != id+"+" {
		t.Fatalf("a build of committed sources: keys %q, salt %q, state %q; renderer %q", c, salt, st, id)
	}
	withRenderer(t, render.Renderer{ID: id, Modified: true})
	before := binaryStamp()
	checker, salt, st := keys()
	if checker != id+"+"+before || salt != before || st != id+"+"+before {
		t.Fatalf("a build of modified sources: keys %q, salt %q, state %q; stamp %q", checker, salt, st, before)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(exe, later, later); err != nil {
		t.Skipf("cannot touch the test binary: %v", err)
	}
	defer os.Chtimes(exe, fi.ModTime(), fi.ModTime())
	if binaryStamp() == before {
		t.Error("the stamp did not change with the executable")
	}
	if c2, _, _ := keys(); c2 == checker {
		t.Error("a rebuilt binary's checker keys its cache as the old one did")
	}
}

// TestCommandsLeaveTheProcessGC: a render turns the collector's GOGC
// collections off for its end and a review sets its own GOGC, for the
// command alone: the process (here, the tests') has its own back when the
// command returns, or a process running many commands would run on with
// no collection at all.
func TestCommandsLeaveTheProcessGC(t *testing.T) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		os.Unsetenv("GOGC")
		defer os.Setenv("GOGC", v)
	}
	old := debug.SetGCPercent(137)
	defer debug.SetGCPercent(old)
	r, run := agedGolden(t)
	for _, args := range [][]string{{"render"}, {"render", "--check"}, {"--no-cache", "render"}} {
		if code, out := run(args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		if got := debug.SetGCPercent(137); got != 137 {
			t.Errorf("after %v GOGC is %d, want the process's 137", args, got)
		}
	}
	r.Commit("fleet")
	r.Edit("config/global/defaults.yaml", "", "")
	if code, out := run("render", "--diff", "--base", "HEAD"); code != 0 {
		t.Fatalf("render --diff: exit %d\n%s", code, out)
	}
	if got := debug.SetGCPercent(137); got != 137 {
		t.Errorf("after render --diff GOGC is %d, want the process's 137", got)
	}
}

// TestRenderHistoryRulesReportAsTheyRan: the rules a render holds the
// fleet to against the merge base and the calendar run beside the render
// (startHistoryBeside), and say what they did as they did after it: each
// rule that could not run once, the deletion phases' before the waves',
// before the render's summary; on CI the render stops there and writes
// nothing. Outside a git repository neither rule has a base; without
// deploy/ the deletion phases have no index either.
func TestRenderHistoryRulesReportAsTheyRan(t *testing.T) {
	t.Setenv("CI", "")
	r, run := agedGolden(t)
	if err := os.RemoveAll(filepath.Join(r.Dir, ".git")); err != nil {
		t.Fatal(err)
	}
	const phases = "warning: the deletion-phase check did not run: "
	const waves = "warning: the rollout-wave check did not run: "
	code, out := run("render")
	i, j, k := strings.Index(out, phases), strings.Index(out, waves), strings.Index(out, "added")
	if code != 0 || i < 0 || j < i || k < j || strings.Count(out, phases) != 1 || strings.Count(out, waves) != 1 {
		t.Fatalf("render outside git: exit %d; want one deletion-phase warning, then one rollout-wave warning, then the summary:\n%s", code, out)
	}
	// deploy/index.json now remembers each cluster's phase.
	code, out = run("render", "--check")
	if code != 0 || strings.Contains(out, phases) || strings.Count(out, waves) != 1 || strings.Index(out, waves) > strings.Index(out, "up to date") {
		t.Fatalf("render --check outside git: exit %d; want one rollout-wave warning before the verdict:\n%s", code, out)
	}
	if err := os.RemoveAll(filepath.Join(r.Dir, "deploy")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "true")
	code, out = run("render")
	if code != ExitInput || !strings.Contains(out, "cannot run") || strings.Contains(out, "added") {
		t.Fatalf("render outside git on CI: exit %d, want %d and the rule that cannot run:\n%s", code, ExitInput, out)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "deploy")); !os.IsNotExist(err) {
		t.Errorf("a render refused on CI left deploy/ (stat: %v)", err)
	}
}
