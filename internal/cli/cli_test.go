package cli_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/tools/txtar"

	"github.com/regionctl/regionctl/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script")

func TestMain(m *testing.M) {
	if name := filepath.Base(os.Args[0]); name != "regionctl" && name != "exits" {
		// The tests say when regionctl runs on CI (env CI=true in a
		// script): the CI variable of the machine running them is not the
		// fleet's, and would make rules that cannot run here fail.
		os.Unsetenv("CI")
		// The suite's date: fixtures' EKS versions are held to EKS's
		// support calendar at it, so the suite answers the same whenever
		// it runs (internal/ekscalendar tests the calendar at other dates).
		os.Setenv("SOURCE_DATE_EPOCH", suiteDate)
	}
	testscript.Main(m, map[string]func(){
		"regionctl": func() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) },
		// exits N args...: regionctl args..., succeeding only when it exits N
		// (the README's exit codes are part of the interface).
		"exits": func() {
			want, err := strconv.Atoi(os.Args[1])
			if err != nil {
				fmt.Fprintln(os.Stderr, "usage: exits N regionctl-args...")
				os.Exit(2)
			}
			if got := cli.Run(os.Args[2:], os.Stdout, os.Stderr); got != want {
				fmt.Fprintf(os.Stderr, "regionctl exited %d, want %d\n", got, want)
				os.Exit(1)
			}
			os.Exit(0)
		},
	})
}

// suiteDate is 2026-11-27T00:00:00Z, the date the tests hold EKS versions
// to the support calendar at.
const suiteDate = "1795737600"

// TestScripts runs testdata/script/*.txtar. Each starts in a directory
// holding the small valid fleet of internal/fleet/testdata/base.txtar, which
// the script's own files may overwrite.
func TestScripts(t *testing.T) {
	base, err := txtar.ParseFile("../fleet/testdata/base.txtar")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("REGIONCTL_CACHE_DIR", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("SOURCE_DATE_EPOCH", suiteDate)
			return writeBaseFleet(env.WorkDir, base)
		},
	})
}

// writeBaseFleet writes the small valid fleet of base (files dir already
// holds are kept: a script brings its own) and the Tekton Pipelines its
// PipelineRuns are checked against.
func writeBaseFleet(dir string, base *txtar.Archive) error {
	for _, f := range base.Files {
		p := filepath.Join(dir, f.Name)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	pipelines, _ := filepath.Glob("../../pipelines/tekton/pipeline-*.yaml")
	tekton := filepath.Join(dir, "pipelines", "tekton")
	if err := os.MkdirAll(tekton, 0o755); err != nil {
		return err
	}
	for _, p := range pipelines {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tekton, filepath.Base(p)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
