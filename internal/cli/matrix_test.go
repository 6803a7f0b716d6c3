package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"

	"github.com/regionctl/regionctl/internal/diff"
)

// jobMatrix holds every run, in order, in at most maxJobs jobs: one run
// per job up to the limit, consecutive batches of equal size past it.
func TestJobMatrixFitsGitHubsLimit(t *testing.T) {
	for _, tt := range []struct{ runs, jobs, per int }{{0, 0, 0}, {1, 1, 1}, {256, 256, 1}, {257, 129, 2}, {480, 240, 2}, {2200, 245, 9}} {
		var as []diff.AffectedCluster
		for i := range tt.runs {
			as = append(as, diff.AffectedCluster{ID: fmt.Sprintf("r/c%d", i), Cluster: fmt.Sprintf("c%d", i), Region: "r", Pipeline: "regional"})
		}
		jobs := jobMatrix(as, maxJobs)["include"]
		if len(jobs) != tt.jobs {
			t.Errorf("%d runs: %d jobs, want %d", tt.runs, len(jobs), tt.jobs)
		}
		n := 0
		for i, j := range jobs {
			if len(j.Runs) > tt.per || len(j.Runs) == 0 {
				t.Errorf("%d runs: job %d holds %d", tt.runs, i, len(j.Runs))
			}
			for _, r := range j.Runs {
				if r.ID != fmt.Sprintf("r/c%d", n) {
					t.Errorf("%d runs: run %d is %s", tt.runs, n, r.ID)
				}
				n++
			}
		}
		if n != tt.runs {
			t.Errorf("%d runs: the jobs hold %d", tt.runs, n)
		}
	}
}

// A change to every cluster of a generated 480-cluster fleet (its first
// commit: every cluster is added) gives a matrix GitHub accepts: at most
// 256 jobs, holding every cluster whose pipeline must run once.
func TestMatrixOf480Clusters(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: renders 480 clusters")
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "commit", "-q", "--allow-empty", "-m", "empty")
	gitIn(t, repo, "checkout", "-q", "-b", "fleet")
	run := func(args ...string) []byte {
		t.Helper()
		var out, errs bytes.Buffer
		if code := Run(append([]string{"--root", repo, "--no-cache"}, args...), &out, &errs); code != ExitOK {
			t.Fatalf("%v exited %d: %s", args, code, errs.String())
		}
		return out.Bytes()
	}
	// gen-fleet copies the Pipelines of --root, this repository's.
	var out, errs bytes.Buffer
	if code := Run([]string{"--root", "../..", "dev", "gen-fleet", "--sectors", "4", "--regions", "6", "--clusters", "20", repo}, &out, &errs); code != ExitOK {
		t.Fatalf("gen-fleet exited %d: %s", code, errs.String())
	}
	run("render")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "the fleet")
	var affected []diff.AffectedCluster
	if err := json.Unmarshal(run("affected", "--base", "main", "-o", "json"), &affected); err != nil {
		t.Fatal(err)
	}
	runs := len(diff.Runs(affected))
	if len(affected) != 480 || runs <= 256 {
		t.Fatalf("%d clusters affected, %d runs", len(affected), runs)
	}
	var matrix struct {
		Include []matrixJob `json:"include"`
	}
	if err := json.Unmarshal(run("affected", "--base", "main", "-o", "matrix"), &matrix); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, j := range matrix.Include {
		for _, r := range j.Runs {
			if seen[r.ID] {
				t.Errorf("%s is planned twice", r.ID)
			}
			seen[r.ID] = true
		}
	}
	if len(matrix.Include) > maxJobs || len(seen) != runs {
		t.Errorf("%d jobs planning %d runs, want at most %d jobs planning %d", len(matrix.Include), len(seen), maxJobs, runs)
	}
	t.Logf("480 clusters, %d runs: %d jobs", runs, len(matrix.Include))
}

// gitIn runs git in dir. gc.auto=0: the commit of the generated fleet's
// 6,000-odd files would otherwise start git's automatic packing in the
// background (gc.autoDetach), still writing under .git while the test's
// temporary directory is removed ("directory not empty").
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
