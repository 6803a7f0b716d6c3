package cli

import (
	"crypto/ed25519"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"

	"github.com/regionctl/regionctl/internal/dispatch"
	"github.com/regionctl/regionctl/internal/history"
	"github.com/regionctl/regionctl/internal/kube/kubetest"
)

// dispatchEnv is a fleet repository with two commits and an in-memory
// Kubernetes API.
type dispatchEnv struct {
	repo          *reviewRepo
	api           *kubetest.Server
	flags         []string
	first, second string
}

func newDispatchEnv(t *testing.T) *dispatchEnv {
	r := newReviewRepo(t)
	r.Write("NOTES.md", "what the fleet is for\n")
	first := r.Repo.Commit("notes").String()
	r.Edit("config/clusters/eu-west-1/mc01.yaml", "type: management", "type: management\neks:\n  node_max: 9")
	r.render()
	second := r.Repo.Commit("bigger mc01").String()
	api, client := kubetest.Start(t)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &dispatchEnv{repo: r, api: api, first: first, second: second,
		flags: []string{"--root", r.Dir, "--no-cache", "pipeline", "dispatch", "--branch", "main", "--namespace", "pipelines", "--kube-api", client.Base, "--kube-token-file", token}}
}

func (d *dispatchEnv) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out strings.Builder
	code := Run(append(append([]string{}, d.flags...), args...), &out, &out)
	t.Logf("dispatch %v: exit %d\n%s", args, code, out.String())
	return code, out.String()
}

func (d *dispatchEnv) names() string {
	var out []string
	for name, o := range d.api.Runs() {
		labels := o["metadata"].(map[string]any)["labels"].(map[string]any)
		out = append(out, name+"@"+labels["regionctl.io/commit"].(string)[:7])
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestDispatchStartsWhatAPushChanged: an ordinary push starts only the
// clusters it changed, in the scope of the cluster it runs in, pinned to
// the pushed commit.
func TestDispatchStartsWhatAPushChanged(t *testing.T) {
	d := newDispatchEnv(t)
	if code, out := d.run(t, "--before", d.first, "--after", d.second, "--scope", "regional", "--region", "eu-west-1"); code != 0 || !strings.Contains(out, "eu-west-1/mc01") || !strings.Contains(out, "started") {
		t.Fatalf("exit %d", code)
	}
	if got := d.names(); got != "regional-eu-west-1-mc01-1@"+d.second[:7] {
		t.Errorf("runs %s", got)
	}
	for _, o := range d.api.Runs() {
		for _, p := range o["spec"].(map[string]any)["params"].([]any) {
			if p := p.(map[string]any); p["name"] == "git-revision" && p["value"] != d.second {
				t.Errorf("the run deploys %v, not the pushed commit", p["value"])
			}
		}
	}
	// The central cluster's dispatch of the same push starts nothing: no
	// regional cluster changed.
	if code, out := d.run(t, "--before", d.first, "--after", d.second, "--scope", "central"); code != 0 || !strings.Contains(out, "nothing to dispatch") {
		t.Errorf("central scope: exit %d", code)
	}
}

// TestDispatchRollsOutSectorBySector: a push that changes every sector
// starts the runs of the first sector it changes at once, and schedules
// each later sector's after the soaks of the sectors before it, in rollout
// order; the reconcile starts none of those early.
func TestDispatchRollsOutSectorBySector(t *testing.T) {
	d := newDispatchEnv(t)
	for name, soak := range map[string]string{"stage-a": "24h", "prod-1": "48h", "stage-b": "12h", "prod-2": "24h", "prod-3": "72h"} {
		d.repo.Edit("config/sectors/"+name+".yaml", "order:", "soak: "+soak+"\norder:")
	}
	d.repo.render()
	soaked := d.repo.Repo.Commit("soaks").String()
	d.repo.Edit("config/global/defaults.yaml", "eks:", "eks:\n  node_max: 11")
	d.repo.render()
	everywhere := d.repo.Repo.Commit("every cluster bigger").String()
	code, out := d.run(t, "--before", soaked, "--after", everywhere, "--scope", "central")
	if code != 0 || strings.Count(out, " started ") != 1 || strings.Count(out, " scheduled ") != 4 {
		t.Fatalf("a push to every sector: exit %d", code)
	}
	for _, want := range []string{"(after stage-a's 24h soak)", "(after stage-a's 24h soak, prod-1's 48h soak)",
		// stage-b has no region: nothing waits for it.
		"central-ap-south-1-regional-4 waits for its sector's wave until", "(after stage-a's 24h soak, prod-1's 48h soak, prod-2's 24h soak)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no run waits %s", want)
		}
	}
	// The reconcile now starts nothing: the waves have not come.
	if code, out := d.run(t, "--reconcile", "--after", everywhere, "--scope", "central"); code != 0 || strings.Contains(out, "started") {
		t.Errorf("reconcile before the waves: exit %d", code)
	}
}

// TestDispatchOfUnusualPushes: a new branch, a force push and a push whose
// before is unknown start every cluster of the scope; a deleted branch
// starts nothing; values that are not commit ids are refused before
// anything runs.
func TestDispatchOfUnusualPushes(t *testing.T) {
	d := newDispatchEnv(t)
	zero := strings.Repeat("0", 40)
	if code, out := d.run(t, "--before", zero, "--after", d.first, "--scope", "central"); code != 0 || !strings.Contains(out, "a new branch: every cluster of the scope runs") || strings.Count(out, "started") != 5 {
		t.Fatalf("new branch: exit %d", code)
	}
	// A force push back: the head moves from a third commit to the second,
	// which is not its descendant.
	d.repo.Edit("config/clusters/eu-west-1/mc01.yaml", "node_max: 9", "node_max: 8")
	d.repo.render()
	third := d.repo.Repo.Commit("smaller mc01").String()
	if code, out := d.run(t, "--before", third, "--after", d.second, "--scope", "regional", "--region", "eu-west-1"); code != 0 || !strings.Contains(out, "a force push") || strings.Count(out, "started") != 2 {
		t.Errorf("force push: exit %d", code)
	}
	unknown := strings.Repeat("ab", 20)
	if code, out := d.run(t, "--before", unknown, "--after", d.second, "--scope", "regional", "--region", "us-east-1"); code != 0 || !strings.Contains(out, "is not in this checkout") {
		t.Errorf("unknown before: exit %d", code)
	}
	if code, out := d.run(t, "--before", d.second, "--after", zero, "--scope", "central"); code != 0 || !strings.Contains(out, "the branch was deleted") {
		t.Errorf("deleted branch: exit %d", code)
	}
	before := len(d.api.Runs())
	for _, hostile := range []string{`$(touch /tmp/pwned)`, `";touch pwned;"`, "abc\nrm -rf /", "main"} {
		if code, _ := d.run(t, "--before", d.first, "--after", hostile, "--scope", "central"); code != 2 {
			t.Errorf("--after %q: exit %d, want 2", hostile, code)
		}
	}
	// --before is held to a full commit id too: a short one would be cut
	// to 12 characters in a message.
	for _, hostile := range []string{"abc", `$(touch /tmp/pwned)`, strings.Repeat("g", 40), ""} {
		if code, _ := d.run(t, "--before", hostile, "--after", d.second, "--scope", "central"); code != 2 {
			t.Errorf("--before %q: exit %d, want 2", hostile, code)
		}
	}
	if len(d.api.Runs()) != before {
		t.Error("a refused dispatch created runs")
	}
}

// TestFetchChecksOutWithoutGitOrShell: the fetch Task's command clones
// with go-git and refuses URLs and revisions that are not what they claim.
func TestFetchChecksOutWithoutGitOrShell(t *testing.T) {
	d := newDispatchEnv(t)
	dir := filepath.Join(t.TempDir(), "checkout")
	result := filepath.Join(t.TempDir(), "commit")
	var out strings.Builder
	if code := Run([]string{"pipeline", "fetch", "--url", "file://" + d.repo.Dir, "--branch", "main", "--revision", d.first, "--result", result, dir}, &out, &out); code != 0 {
		t.Fatalf("fetch: exit %d\n%s", code, out.String())
	}
	if b, _ := os.ReadFile(result); string(b) != d.first {
		t.Errorf("result %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config/clusters/eu-west-1/mc01.yaml")); err != nil || strings.Contains(string(b), "node_max") {
		t.Errorf("the checkout is not at the first commit: %s %v", b, err)
	}
	for _, args := range [][]string{
		{"--url", `https://x/x"; touch pwned; echo "`, "--branch", "main"},
		{"--url", "file://" + d.repo.Dir, "--branch", "--upload-pack=touch"},
		{"--url", "file://" + d.repo.Dir, "--branch", "main..other"},
		{"--url", "file://" + d.repo.Dir, "--branch", "main", "--revision", "other"},
		{"--url", "file://" + d.repo.Dir, "--revision", d.first},
	} {
		out.Reset()
		if code := Run(append(append([]string{"pipeline", "fetch"}, args...), filepath.Join(t.TempDir(), "x")), &out, &out); code != 2 {
			t.Errorf("fetch %v: exit %d, want 2\n%s", args, code, out.String())
		}
	}
}

// TestOnlyTheDeployBranchRuns: with the webhook secret and push rights to
// any branch, a commit that is not on the deploy branch's first-parent
// history (another branch's, or a side branch's merged later) is refused
// by dispatch and by fetch before anything runs.
func TestOnlyTheDeployBranchRuns(t *testing.T) {
	d := newDispatchEnv(t)
	wt := d.repo.Repo.WT
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("attack"), Create: true, Hash: plumbing.NewHash(d.second)}); err != nil {
		t.Fatal(err)
	}
	d.repo.Edit("config/clusters/eu-west-1/mc01.yaml", "node_max: 9", "node_max: 7")
	d.repo.render()
	unmerged := d.repo.Repo.Commit("not reviewed").String()
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("main")}); err != nil {
		t.Fatal(err)
	}
	before := len(d.api.Runs())
	if code, out := d.run(t, "--before", d.second, "--after", unmerged, "--scope", "regional", "--region", "eu-west-1"); code != ExitInput || !strings.Contains(out, "not on the first-parent history of the deploy branch main") {
		t.Errorf("dispatch of another branch's commit: exit %d", code)
	}
	if code, out := d.run(t, "--before", d.first, "--after", d.second, "--branch", "attack", "--scope", "regional", "--region", "eu-west-1"); code != 0 || !strings.Contains(out, "started") {
		t.Errorf("the same commit on the branch named: exit %d", code) // the flag decides, not the checkout's HEAD
	}
	if len(d.api.Runs()) != before+1 {
		t.Errorf("runs: %d, want %d", len(d.api.Runs()), before+1)
	}
	var out strings.Builder
	if code := Run([]string{"pipeline", "fetch", "--url", "file://" + d.repo.Dir, "--branch", "main", "--revision", unmerged, filepath.Join(t.TempDir(), "x")}, &out, &out); code != ExitInput || !strings.Contains(out.String(), "not on the first-parent history") {
		t.Errorf("fetch of another branch's commit: exit %d\n%s", code, out.String())
	}
}

// TestFetchCredentials: the mounted secret gives a token for https and a
// key for ssh, the key only with known_hosts (no host key is trusted
// blindly); an empty secret means an anonymous clone.
func TestFetchCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if auth, err := fetchAuth(dir, "https"); auth != nil || err != nil {
		t.Errorf("an empty secret: %v, %v", auth, err)
	}
	write("token", "t0k3n\n")
	auth, err := fetchAuth(dir, "https")
	basic, ok := auth.(*githttp.BasicAuth)
	if err != nil || !ok || basic.Username != "x-access-token" || basic.Password != "t0k3n" {
		t.Errorf("https token: %#v, %v", auth, err)
	}
	write("username", "oauth2")
	if auth, _ := fetchAuth(dir, "https"); auth.(*githttp.BasicAuth).Username != "oauth2" {
		t.Errorf("username: %#v", auth)
	}
	if auth, err := fetchAuth(dir, "file"); auth != nil || err != nil {
		t.Errorf("a local clone takes no credentials: %v, %v", auth, err)
	}

	_, key, _ := ed25519.GenerateKey(nil)
	pemBlock, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	write("ssh-privatekey", string(pem.EncodeToMemory(pemBlock)))
	if _, err := fetchAuth(dir, "ssh"); err == nil || !strings.Contains(err.Error(), "without known_hosts") {
		t.Errorf("a key without known_hosts: %v", err)
	}
	signer, _ := ssh.NewSignerFromKey(key)
	write("known_hosts", "git.platform.example.com "+string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	auth, err = fetchAuth(dir, "ssh")
	pk, ok := auth.(*gitssh.PublicKeys)
	if err != nil || !ok || pk.HostKeyCallback == nil {
		t.Fatalf("ssh: %#v, %v", auth, err)
	}
	// The callback knows the listed host's key and refuses another's.
	_, other, _ := ed25519.GenerateKey(nil)
	otherSigner, _ := ssh.NewSignerFromKey(other)
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}
	if err := pk.HostKeyCallback("git.platform.example.com:22", addr, signer.PublicKey()); err != nil {
		t.Errorf("the known host: %v", err)
	}
	if err := pk.HostKeyCallback("git.platform.example.com:22", addr, otherSigner.PublicKey()); err == nil {
		t.Error("another host key is trusted")
	}
}

// TestDeletionInOneStepIsRefusedAndLeavesAWayToDestroy: delete: true and
// delete_pipeline: true reach the deploy branch in one push (two commits,
// each rendered against the one before). dispatch refuses that cluster, by
// name, and still starts the push's other changes; the cluster's
// PipelineRun stays in deploy/ (a destroy run), so that something can
// still destroy it.
func TestDeletionInOneStepIsRefusedAndLeavesAWayToDestroy(t *testing.T) {
	d := newDispatchEnv(t)
	d.repo.Write("config/clusters/eu-west-1/mc01.yaml", "type: management\ndelete: true\n")
	d.repo.render()
	d.repo.Repo.Commit("destroy mc01")
	d.repo.Write("config/clusters/eu-west-1/mc01.yaml", "type: management\ndelete: true\ndelete_pipeline: true\n")
	d.repo.Edit("config/clusters/eu-west-1/mc02.yaml", "type: management", "type: management\neks:\n  node_max: 9")
	d.repo.render()
	run := d.repo.Read("deploy/production/eu-west-1/tekton/mc01.pipelinerun.yaml")
	if !strings.Contains(run, "- name: destroy\n    value: \"true\"") {
		t.Fatalf("mc01's PipelineRun is no destroy run:\n%s", run)
	}
	pushed := d.repo.Repo.Commit("remove mc01's pipeline, and a bigger mc02").String()
	code, out := d.run(t, "--before", d.second, "--after", pushed, "--scope", "regional", "--region", "eu-west-1")
	if code != ExitInput || !regexp.MustCompile(`eu-west-1/mc01\s+refused\s+delete_pipeline: true for eu-west-1/mc01 before a merged delete: true`).MatchString(out) {
		t.Errorf("dispatch of a one-step deletion: exit %d, want %d and mc01 refused by name", code, ExitInput)
	}
	if !regexp.MustCompile(`eu-west-1/mc02\s+started`).MatchString(out) {
		t.Error("the push's other change was not dispatched")
	}
	if strings.Contains(d.names(), "mc01") {
		t.Errorf("a run of mc01 started: %s", d.names())
	}
	// Another region's dispatch has nothing to refuse.
	if code, out := d.run(t, "--before", d.second, "--after", pushed, "--scope", "central"); code != 0 || strings.Contains(out, "refused") {
		t.Errorf("central dispatch: exit %d", code)
	}
}

// FuzzDispatchArguments: whatever a webhook body puts in before and after
// (and whatever the rendered config puts in branch, scope and region),
// dispatch never panics, and refuses with a usage error, before reading
// anything, every value that is not a full commit id, a branch name, a
// scope or a region.
func FuzzDispatchArguments(f *testing.F) {
	awsRegion := regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
	commit := strings.Repeat("a1", 20)
	f.Add(commit, commit, "main", "regional", "eu-west-1")
	f.Add("abc", commit, "main", "central", "")
	f.Add(commit, "$(touch x)", "main..x", "regional", "eu-west-1")
	f.Add(strings.Repeat("0", 40), commit, "--upload-pack=x", "central", "")
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, before, after, branch, scope, region string) {
		var out strings.Builder
		code := Run([]string{"--root", root, "pipeline", "dispatch", "--before", before, "--after", after, "--branch", branch, "--scope", scope, "--region", region,
			"--kube-api", "http://127.0.0.1:1", "--kube-token-file", filepath.Join(root, "none")}, &out, &out)
		valid := dispatch.IsCommit(before) && dispatch.IsCommit(after) && history.ValidBranch(branch) &&
			(scope == "central" && region == "" || scope == "regional" && awsRegion.MatchString(region))
		if !valid && code != ExitUsage {
			t.Errorf("before %q after %q branch %q scope %q region %q: exit %d, want %d\n%s", before, after, branch, scope, region, code, ExitUsage, out.String())
		}
	})
}

// TestDispatchRefusesASkippedWave: a push that gives a later sector a
// versioned value no earlier sector runs (pushed past the review, which
// refuses it) starts nothing in that sector, and exits 1 naming the wave;
// the push's other clusters start.
func TestDispatchRefusesASkippedWave(t *testing.T) {
	d := newDispatchEnv(t)
	d.repo.Edit("config/sectors/prod-2.yaml", "max_update: 50%", "max_update: 50%\neks:\n  version: \"1.34\"")
	d.repo.Edit("config/clusters/us-west-2/mc01.yaml", "type: management", "type: management\neks:\n  node_max: 9")
	// Rendered out of reach of the wave rule, as a render outside the
	// repository would be.
	git := filepath.Join(d.repo.Dir, ".git")
	if err := os.Rename(git, git+".away"); err != nil {
		t.Fatal(err)
	}
	var errs strings.Builder
	code := Run([]string{"--root", d.repo.Dir, "--no-cache", "-q", "render"}, &errs, &errs)
	if err := os.Rename(git+".away", git); err != nil || code != 0 {
		t.Fatalf("render: exit %d, %v\n%s", code, err, errs.String())
	}
	pushed := d.repo.Repo.Commit("1.34 in prod-2 first; a bigger us-west-2/mc01").String()
	code, out := d.run(t, "--before", d.second, "--after", pushed, "--scope", "regional", "--region", "eu-west-1")
	if code != ExitInput || !regexp.MustCompile(`eu-west-1/mc01\s+refused\s+eks.version "1.34" reaches sector prod-2 before stage-a, prod-1 \(skipped wave\)`).MatchString(out) {
		t.Errorf("dispatch of a skipped wave: exit %d, want %d and eu-west-1/mc01 refused by name", code, ExitInput)
	}
	if strings.Contains(d.names(), "eu-west-1") {
		t.Errorf("a run of the skipped sector started: %s", d.names())
	}
	if code, out := d.run(t, "--before", d.second, "--after", pushed, "--scope", "regional", "--region", "us-west-2"); code != 0 || !regexp.MustCompile(`us-west-2/mc01\s+started`).MatchString(out) {
		t.Errorf("the push's other change: exit %d", code)
	}
}
