package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/regionctl/regionctl/internal/cli"
	"github.com/regionctl/regionctl/internal/kube/kubetest"
)

// ruleCommands are the commands that can act on a rule's answer, in the
// order they run against one fixture (render last: it writes deploy/).
var ruleCommands = []struct{ name, args string }{
	{"validate", "validate"},
	{"render --check", "render --check"},
	{"render --diff", "render --diff"},
	{"affected", "affected"},
	{"pipeline central", "pipeline central --dry-run --region us-east-1"},
	{"pipeline regional", "pipeline regional --dry-run --region us-east-1"},
	// The push's dispatch in us-east-1's regional cluster (the change's
	// branch stands for the deploy branch it was merged to).
	{"pipeline dispatch", "pipeline dispatch --branch change --scope regional --region us-east-1 --namespace pipelines"},
	{"render", "render"},
}

// ruleCase is one change under review, committed on a branch off main, with
// the exit code each command gives it (in ruleCommands' order).
type ruleCase struct {
	name string
	// change edits the fixture's working tree; rendered is whether deploy/
	// is then what the changed config renders to (rendered with the rules
	// that compare with the base out of reach, as a hand-run old regionctl
	// would), else deploy/ is left as it was.
	change   func(t *testing.T, dir string)
	rendered bool
	// then edits the tree after the render, if at all.
	then func(t *testing.T, dir string)
	want []int
	// shows is what render --diff must print (stdout and stderr).
	shows string
}

// TestOneRuleEveryCommand runs each rule's case through every command that
// can act on it and compares exit codes: a change one command refuses is
// refused by every command that would otherwise pass it on. The pipelines
// run from main after the merge, where the review base is HEAD; what they
// hold is the tree (drift) and the config's own rules (secrets).
func TestOneRuleEveryCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git)")
	}
	const ok, refused = cli.ExitOK, cli.ExitInput
	// writes is a change that writes one file of config/.
	writes := func(name, content string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []ruleCase{{
		name:     "no rule broken",
		change:   writes("config/clusters/us-west-2/mc01.yaml", "type: management\neks:\n  node_instance_family: m7i\n"),
		rendered: true,
		want:     []int{ok, ok, ok, ok, ok, ok, ok, ok},
	}, {
		name:     "skipped wave",
		change:   writes("config/sectors/prod.yaml", "order: 1\nenvironment: production\neks:\n  version: \"1.34\"\n"),
		rendered: true,
		want:     []int{refused, refused, refused, refused, refused, refused, refused, refused},
	}, {
		name: "deletion phase skipped",
		// The pipeline's removal before its destroy ran: the cluster would
		// never be destroyed.
		change:   writes("config/clusters/us-east-1/mc01.yaml", "type: management\ndelete: true\ndelete_pipeline: true\n"),
		rendered: true,
		want:     []int{refused, refused, refused, refused, refused, refused, refused, refused},
	}, {
		name:   "drift in deploy/",
		change: handEdit,
		want:   []int{ok, refused, refused, refused, refused, refused, refused, ok},
	}, {
		// The change renders mc01 anew and edits one of its files too.
		name:     "drift inside a cluster the change touches",
		change:   writes("config/clusters/us-east-1/mc01.yaml", "type: management\neks:\n  node_max: 9\n"),
		rendered: true,
		then:     handEdit,
		want:     []int{ok, refused, refused, refused, refused, refused, refused, ok},
		shows:    `drift deploy/production/us-east-1/terraform/mc01.tfvars.json\n(.*\n)*\+\s+"node_instance_type": "m5\.`,
	}, {
		// Past its end of extended support at the suite's date
		// (2026-11-27): EKS creates no cluster of it.
		name:     "EKS version past support",
		change:   writes("config/sectors/stage.yaml", "order: 0\nenvironment: staging\neks:\n  version: \"1.31\"\n"),
		rendered: true,
		want:     []int{refused, refused, refused, refused, refused, refused, refused, refused},
	}, {
		name:   "secret in config/",
		change: writes("config/clusters/us-east-1/mc01.yaml", "type: management\ncomponents:\n  observability:\n    values:\n      db:\n        password: Tr0ub4dor&3\n"),
		want:   []int{refused, refused, refused, refused, refused, refused, refused, refused},
	}}
	table := &strings.Builder{}
	fmt.Fprintf(table, "| rule |")
	for _, c := range ruleCommands {
		fmt.Fprintf(table, " %s |", c.name)
	}
	fmt.Fprintf(table, "\n|---|%s\n", strings.Repeat("---|", len(ruleCommands)))
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			dir := ruleFixture(t)
			_, client := kubetest.Start(t)
			kube, token := client.Base, filepath.Join(t.TempDir(), "token")
			os.WriteFile(token, []byte("token\n"), 0o600)
			rc.change(t, dir)
			if rc.rendered {
				renderOutOfReach(t, dir)
			}
			if rc.then != nil {
				rc.then(t, dir)
			}
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-q", "-m", rc.name)
			fmt.Fprintf(table, "| %s |", rc.name)
			for i, c := range ruleCommands {
				var stdout, stderr bytes.Buffer
				args := strings.Fields(c.args)
				if strings.HasPrefix(c.args, "pipeline dispatch") {
					args = append(args, "--before", revParse(t, dir, "main"), "--after", revParse(t, dir, "HEAD"), "--kube-api", kube, "--kube-token-file", token)
				}
				got := cli.Run(append([]string{"--root", dir, "--no-cache"}, args...), &stdout, &stderr)
				fmt.Fprintf(table, " %d |", got)
				if c.name == "render --diff" && rc.shows != "" && !regexp.MustCompile(rc.shows).MatchString(stdout.String()+stderr.String()) {
					t.Errorf("render --diff does not show %s:\n%s%s", rc.shows, stdout.String(), stderr.String())
				}
				if got != rc.want[i] {
					t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.args, got, rc.want[i], stdout.String(), stderr.String())
				}
			}
			fmt.Fprintln(table)
		})
	}
	t.Logf("exit codes, rule × command:\n%s", table)
}

// handEdit edits us-east-1/mc01's Terraform variables by hand.
func handEdit(t *testing.T, dir string) {
	p := filepath.Join(dir, "deploy/production/us-east-1/terraform/mc01.tfvars.json")
	b, err := os.ReadFile(p)
	if err != nil || !bytes.Contains(b, []byte("m6i")) {
		t.Fatalf("%s: %v, or no m6i to edit", p, err)
	}
	os.WriteFile(p, bytes.Replace(b, []byte("m6i"), []byte("m5"), 1), 0o644)
}

// ruleFixture is the small fleet of internal/fleet/testdata/base.txtar,
// rendered and committed on main, with a branch "change" checked out.
func ruleFixture(t *testing.T) string {
	t.Helper()
	a, err := txtar.ParseFile("../fleet/testdata/base.txtar")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeBaseFleet(dir, a); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	var out bytes.Buffer
	if code := cli.Run([]string{"--root", dir, "--no-cache", "render"}, &out, &out); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, out.String())
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	git(t, dir, "checkout", "-q", "-b", "change")
	return dir
}

// renderOutOfReach renders dir's config into a fresh deploy/ with git out
// of reach, so that no rule comparing with the base or the date refuses: the tree a
// change would commit if an old regionctl rendered it.
func renderOutOfReach(t *testing.T, dir string) {
	t.Helper()
	if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, ".git.away")); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(filepath.Join(dir, ".git.away"), filepath.Join(dir, ".git"))
	// And at a date (2026-01-01) when every EKS version the cases use was
	// supported, as when an old commit was rendered.
	defer os.Setenv("SOURCE_DATE_EPOCH", os.Getenv("SOURCE_DATE_EPOCH"))
	os.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	os.RemoveAll(filepath.Join(dir, "deploy"))
	var out bytes.Buffer
	if code := cli.Run([]string{"--root", dir, "--no-cache", "-q", "render"}, &out, &out); code != 0 {
		t.Fatalf("render without git: exit %d\n%s", code, out.String())
	}
}

func revParse(t *testing.T, dir, rev string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", rev)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git rev-parse %s: %v", rev, err)
	}
	return strings.TrimSpace(string(out))
}

// git runs git in dir, without git's automatic packing (see gitIn).
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
