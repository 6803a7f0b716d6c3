// Package ci holds the CI recipes of docs/ci and the tests that keep them
// working: actionlint on the GitHub workflow and action (with shellcheck on
// their scripts when it is installed), every regionctl command in a recipe
// parsed by regionctl itself, the GitLab jobs' templates resolved, and the
// install script run against a release served over TLS; and that
// docs/architecture.md has a paragraph for every package of the module.
package ci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/mattn/go-shellwords"
	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"

	"github.com/regionctl/regionctl/internal/cli"
)

// copyInto lays the recipes out as a fleet repository holds them: docs/ci
// copied in, the workflow in .github/workflows.
func copyInto(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(repo, "docs", "ci", p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(repo, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("github/regionctl.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wf, "regionctl.yml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestGitHubRecipeLints(t *testing.T) {
	repo := copyInto(t)
	opts := &actionlint.LinterOptions{WorkingDir: repo}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	} else if os.Getenv("REGIONCTL_REQUIRE_SHELLCHECK") != "" {
		t.Fatal("shellcheck is not installed (apt-get install shellcheck)")
	} else {
		t.Log("shellcheck is not installed: the run scripts are not checked")
	}
	project, err := actionlint.NewProject(repo) // local actions resolve from the root
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles([]string{filepath.Join(repo, ".github", "workflows", "regionctl.yml")}, project)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Errorf("actionlint:\n%s", out.String())
	}
	// The action's metadata is checked where the workflow uses it; make
	// sure it was found, by breaking it.
	action := filepath.Join(repo, "docs", "ci", "github", "setup-regionctl", "action.yml")
	b, _ := os.ReadFile(action)
	os.WriteFile(action, bytes.Replace(b, []byte("  version:\n"), []byte("  versio:\n"), 1), 0o644)
	l, _ = actionlint.NewLinter(&bytes.Buffer{}, &actionlint.LinterOptions{WorkingDir: repo})
	if errs, _ := l.LintFiles([]string{filepath.Join(repo, ".github", "workflows", "regionctl.yml")}, project); len(errs) == 0 {
		t.Error("actionlint does not read the setup action: a wrong input name passed")
	}
}

// runScripts are the shell scripts of a GitHub workflow or action.
func runScripts(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Kind == yaml.MappingNode && (n.Content[i].Value == "run" || n.Content[i].Value == "script" || n.Content[i].Value == "before_script" || n.Content[i].Value == "after_script") {
				v := n.Content[i+1]
				if v.Kind == yaml.ScalarNode {
					out = append(out, v.Value)
				}
				for _, item := range v.Content {
					out = append(out, item.Value)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	return out
}

var recipes = []string{
	"github/regionctl.yml", "github/setup-regionctl/action.yml",
	"gitlab/regionctl.gitlab-ci.yml", "gitlab/affected-job.yml", "gitlab/install.yml",
}

// Data never becomes code: no ${{ }} expression is pasted into a GitHub
// script (values reach it as environment), and every regionctl command of
// every recipe is one regionctl parses, with flags it has.
func TestRecipeCommandsParse(t *testing.T) {
	commands := 0
	for _, r := range recipes {
		for _, script := range runScripts(t, r) {
			if strings.Contains(script, "${{") {
				t.Errorf("%s: a run script holds an expression; pass it as env: %q", r, script)
			}
			for _, line := range strings.Split(script, "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "regionctl ") {
					continue
				}
				// Redirections and pipes are the shell's.
				line = regexp.MustCompile(`\s*(>>?|\|).*$`).ReplaceAllString(line, "")
				// Variables stand for what the CI system gives: a pipeline
				// name where one goes, a word elsewhere.
				p := shellwords.NewParser()
				p.ParseEnv = true
				p.Getenv = func(name string) string {
					if strings.HasSuffix(name, "PIPELINE") {
						return "regional"
					}
					if strings.HasSuffix(name, "IID") {
						return "1" // a merge request's number
					}
					return "x"
				}
				args, err := p.Parse(line)
				if err != nil {
					t.Errorf("%s: %q: %v", r, line, err)
					continue
				}
				commands++
				var out, errs bytes.Buffer
				if code := cli.Run(append(args[1:], "--help"), &out, &errs); code != 0 {
					t.Errorf("%s: %q does not parse: %s", r, line, errs.String())
				}
			}
		}
	}
	if commands < 10 {
		t.Errorf("found %d regionctl commands in the recipes", commands)
	}
}

// The GitLab recipe's jobs extend templates its includes define, and the
// child pipeline regionctl writes extends the template affected-job.yml
// defines.
func TestGitLabRecipeResolves(t *testing.T) {
	load := func(file string) map[string]any {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return doc
	}
	// jobs of a file and of what it includes (include: local only).
	var resolve func(file string) map[string]any
	resolve = func(file string) map[string]any {
		doc := load(file)
		jobs := map[string]any{}
		if inc, ok := doc["include"].([]any); ok {
			for _, i := range inc {
				local, _ := i.(map[string]any)["local"].(string)
				if !strings.HasPrefix(local, "docs/ci/") {
					t.Errorf("%s includes %q, not a file of docs/ci", file, local)
					continue
				}
				for k, v := range resolve(strings.TrimPrefix(local, "docs/ci/")) {
					jobs[k] = v
				}
			}
		}
		for k, v := range doc {
			jobs[k] = v
		}
		return jobs
	}
	keywords := map[string]bool{"include": true, "stages": true, "variables": true, "default": true, "workflow": true}
	check := func(file string, jobs map[string]any) {
		for name, j := range jobs {
			if keywords[name] {
				continue
			}
			job, ok := j.(map[string]any)
			if !ok {
				t.Errorf("%s: %s is not a job", file, name)
				continue
			}
			if ext, ok := job["extends"].(string); ok && jobs[ext] == nil {
				t.Errorf("%s: %s extends %s, which nothing defines", file, name, ext)
			}
			if !strings.HasPrefix(name, ".") && job["script"] == nil && job["trigger"] == nil && job["extends"] == nil {
				t.Errorf("%s: job %s runs nothing", file, name)
			}
		}
	}
	check("gitlab/regionctl.gitlab-ci.yml", resolve("gitlab/regionctl.gitlab-ci.yml"))
	// A child pipeline as affected -o gitlab-ci writes it, with the template
	// the recipe names: its jobs must resolve against affected-job.yml.
	child := filepath.Join(t.TempDir(), "child.yml")
	os.WriteFile(child, []byte("include:\n  - local: docs/ci/gitlab/affected-job.yml\nregional eu-west-1/mc01:\n  extends: .regionctl-affected\n  variables:\n    REGIONCTL_REGION: eu-west-1\n'regionctl: plans':\n  extends: .regionctl-plans\n  stage: .post\n  when: always\n"), 0o644)
	jobs := resolve(child)
	check("child pipeline", jobs)
	if jobs[".regionctl-affected"] == nil || jobs[".regionctl-plans"] == nil || jobs[".regionctl"] == nil {
		t.Errorf("the child pipeline does not resolve its templates: %v", jobs)
	}
}

// The install script the recipes run, against a release served over TLS:
// it installs a release whose checksum holds, and refuses a tampered one
// and a base URL that is not https.
func TestInstallScriptChecksTheRelease(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the install script runs on Linux and macOS runners")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH]
	archive := fmt.Sprintf("regionctl_1.2.3_%s_%s.tar.gz", runtime.GOOS, arch)
	files := map[string][]byte{}
	release := func(content string) {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		script := "#!/bin/sh\necho \"" + content + "\"\n"
		tw.WriteHeader(&tar.Header{Name: "regionctl", Mode: 0o755, Size: int64(len(script)), Typeflag: tar.TypeReg})
		tw.Write([]byte(script))
		tw.Close()
		gz.Close()
		sum := sha256.Sum256(buf.Bytes())
		files["/v1.2.3/"+archive] = buf.Bytes()
		files["/v1.2.3/SHA256SUMS"] = []byte(hex.EncodeToString(sum[:]) + "  " + archive + "\n")
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)

	var pinned, signers string
	install := func(base string) (string, string, error) {
		bin := filepath.Join(t.TempDir(), "bin")
		cmd := exec.Command("bash", "install-regionctl.sh", bin)
		cmd.Env = append(os.Environ(), "REGIONCTL_VERSION=1.2.3", "REGIONCTL_BASE_URL="+base, "CURL_CA_BUNDLE="+ca,
			"REGIONCTL_SHA256SUMS_SHA256="+pinned, "REGIONCTL_ALLOWED_SIGNERS="+signers)
		out, err := cmd.CombinedOutput()
		return bin, string(out), err
	}
	release("regionctl 1.2.3")
	sum := sha256.Sum256(files["/v1.2.3/SHA256SUMS"])
	pinned = hex.EncodeToString(sum[:])
	bin, out, err := install(srv.URL)
	if err != nil || !strings.Contains(out, "regionctl 1.2.3") {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if fi, err := os.Lstat(filepath.Join(bin, "regionctl")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 {
		t.Errorf("installed: %v %v", fi.Mode(), err)
	}
	// A tampered archive: the checksums no longer hold.
	good := files["/v1.2.3/SHA256SUMS"]
	release("pwned")
	files["/v1.2.3/SHA256SUMS"] = good
	if _, out, err := install(srv.URL); err == nil || strings.Contains(out, "pwned") {
		t.Errorf("a tampered release was installed:\n%s", out)
	}
	// A tampered archive with checksums to match, from the same server:
	// the pinned hash of SHA256SUMS refuses them.
	release("pwned")
	if _, out, err := install(srv.URL); err == nil || strings.Contains(out, "pwned") || !strings.Contains(out, "not the pinned") {
		t.Errorf("a release whose SHA256SUMS is not the pinned one was installed:\n%s", out)
	}
	// A release whose regionctl is a symbolic link (to anything on the
	// runner), its SHA256SUMS pinned: not installed.
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "regionctl", Linkname: "/bin/sh", Typeflag: tar.TypeSymlink, Mode: 0o777})
	tw.Close()
	gz.Close()
	files["/v1.2.3/"+archive] = buf.Bytes()
	linkSum := sha256.Sum256(buf.Bytes())
	files["/v1.2.3/SHA256SUMS"] = []byte(hex.EncodeToString(linkSum[:]) + "  " + archive + "\n")
	sum = sha256.Sum256(files["/v1.2.3/SHA256SUMS"])
	pinned = hex.EncodeToString(sum[:])
	if bin, out, err := install(srv.URL); err == nil || !strings.Contains(out, "is not a regular file") {
		t.Errorf("a symbolic link was installed: %v\n%s", err, out)
	} else if _, err := os.Lstat(filepath.Join(bin, "regionctl")); err == nil {
		t.Error("something was installed")
	}
	release("regionctl 1.2.3")
	sum = sha256.Sum256(files["/v1.2.3/SHA256SUMS"])
	pinned = hex.EncodeToString(sum[:])
	if _, out, err := install(strings.Replace(srv.URL, "https://", "http://", 1)); err == nil {
		t.Errorf("a release over http was installed:\n%s", out)
	}

	// Signed releases: the release key's allowed_signers line pinned once,
	// no hash per version.
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen (apt-get install openssh-client)")
	}
	keygen := func(name string) (string, string) {
		key := filepath.Join(t.TempDir(), name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		pub, _ := os.ReadFile(key + ".pub")
		return key, `releases@regionctl.dev namespaces="regionctl-release" ` + strings.TrimSpace(string(pub))
	}
	signWith := func(key string) {
		dir := t.TempDir()
		sums := filepath.Join(dir, "SHA256SUMS")
		os.WriteFile(sums, files["/v1.2.3/SHA256SUMS"], 0o644)
		if out, err := exec.Command("ssh-keygen", "-q", "-Y", "sign", "-f", key, "-n", "regionctl-release", sums).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		files["/v1.2.3/SHA256SUMS.sig"], _ = os.ReadFile(sums + ".sig")
	}
	key, line := keygen("release")
	otherKey, _ := keygen("other")
	pinned, signers = "", line
	release("regionctl 1.2.3")
	signWith(key)
	if _, out, err := install(srv.URL); err != nil || !strings.Contains(out, "regionctl 1.2.3") {
		t.Errorf("a release signed by the pinned key: %v\n%s", err, out)
	}
	// A tampered archive with checksums to match, signed by another key.
	release("pwned")
	signWith(otherKey)
	if _, out, err := install(srv.URL); err == nil || strings.Contains(out, "pwned") || !strings.Contains(out, "not signed by the pinned release key") {
		t.Errorf("a release signed by another key was installed:\n%s", out)
	}
	// The old signature beside new checksums.
	release("regionctl 1.2.3")
	signWith(key)
	sig := files["/v1.2.3/SHA256SUMS.sig"]
	release("pwned")
	files["/v1.2.3/SHA256SUMS.sig"] = sig
	if _, out, err := install(srv.URL); err == nil || strings.Contains(out, "pwned") {
		t.Errorf("checksums under another release's signature were installed:\n%s", out)
	}
	// No pin at all.
	pinned, signers = "", ""
	if _, out, err := install(srv.URL); err == nil || !strings.Contains(out, "pin the release") {
		t.Errorf("an unpinned release was installed:\n%s", out)
	}
}

// The plan job of the GitHub recipe plans every run of its matrix entry,
// each name one argument, and fails when any of them fails, after trying
// them all: dry runs, or with a plan role plan-only runs whose JSON it
// keeps for the plans job. Run with the shell GitHub runs it with (bash -eo pipefail)
// and a stand-in regionctl that records its arguments.
func TestPlanJobPlansEveryRunOfItsBatch(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("no jq (apt-get install jq); GitHub's runners have it")
	}
	script := planScript(t, "github/regionctl.yml")
	dir, log := standIn(t, "printf '%s|' \"$@\" >> CALLS\necho >> CALLS\n[ \"$6\" != failing ] || exit 1\n")
	runs := `[{"pipeline":"regional","region":"eu-west-1","cluster":"mc01"},{"pipeline":"central","region":"eu-west-1","cluster":"failing"},{"pipeline":"regional","region":"us-east-1","cluster":"mc02"}]`
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "RUNS="+runs)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Errorf("a batch with a failing plan succeeded:\n%s", out)
	}
	calls, _ := os.ReadFile(log)
	want := "pipeline|regional|--region|eu-west-1|--cluster|mc01|--dry-run|\n" +
		"pipeline|central|--region|eu-west-1|--cluster|failing|--dry-run|\n" +
		"pipeline|regional|--region|us-east-1|--cluster|mc02|--dry-run|\n"
	if string(calls) != want {
		t.Errorf("the job ran:\n%s\nwant:\n%s", calls, want)
	}

	// With a plan role: plan-only runs, each one's JSON in plans/ under a
	// name of its own, for the plans job.
	os.Remove(log)
	work := t.TempDir()
	cmd = exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "RUNS="+runs, "PLAN_ROLE=arn:aws:iam::111111111111:role/plan", "JOB_INDEX=7")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("a batch with a failing plan succeeded:\n%s", out)
	}
	calls, _ = os.ReadFile(log)
	want = "pipeline|regional|--region|eu-west-1|--cluster|mc01|--plan|-o|json|\n" +
		"pipeline|central|--region|eu-west-1|--cluster|failing|--plan|-o|json|\n" +
		"pipeline|regional|--region|us-east-1|--cluster|mc02|--plan|-o|json|\n"
	if string(calls) != want {
		t.Errorf("the job ran:\n%s\nwant:\n%s", calls, want)
	}
	for _, f := range []string{"7-1.json", "7-2.json", "7-3.json"} {
		if _, err := os.Stat(filepath.Join(work, "plans", f)); err != nil {
			t.Errorf("no plans/%s: %v", f, err)
		}
	}
}

// The GitLab child pipeline's job plans its cluster when the generated job
// says REGIONCTL_PLAN (affected -o gitlab-ci --plan), with the role and
// GitLab's OIDC token handed to the AWS SDK as environment, keeping the
// run's JSON for .regionctl-plans; otherwise it dry-runs. Run with sh and a
// stand-in regionctl that records its arguments and environment.
func TestGitLabAffectedJobPlansWhenAsked(t *testing.T) {
	script := planScript(t, "gitlab/affected-job.yml")
	dir, log := standIn(t, "printf '%s|' \"$@\" \"$AWS_ROLE_ARN\" \"$(cat \"${AWS_WEB_IDENTITY_TOKEN_FILE:-/dev/null}\")\" >> CALLS\necho '{}'\n")
	for _, plan := range []bool{false, true} {
		os.Remove(log)
		work := t.TempDir()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "CI_PROJECT_DIR="+work, "CI_JOB_ID=42",
			"REGIONCTL_PIPELINE=regional", "REGIONCTL_REGION=eu-west-1", "REGIONCTL_CLUSTER=mc01; rm -rf /",
			"REGIONCTL_PLAN_ROLE_ARN=arn:aws:iam::111111111111:role/plan", "REGIONCTL_ID_TOKEN=eyJ.token")
		if plan {
			cmd.Env = append(cmd.Env, "REGIONCTL_PLAN=true")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("plan=%v: %v\n%s", plan, err, out)
		}
		calls, _ := os.ReadFile(log)
		want := "pipeline|regional|--region|eu-west-1|--cluster|mc01; rm -rf /|--dry-run|||"
		if plan {
			want = "pipeline|regional|--region|eu-west-1|--cluster|mc01; rm -rf /|--plan|-o|json|arn:aws:iam::111111111111:role/plan|eyJ.token|"
		}
		if string(calls) != want {
			t.Errorf("plan=%v: the job ran\n%s\nwant\n%s", plan, calls, want)
		}
		if _, err := os.Stat(filepath.Join(work, "plans", "42.json")); (err == nil) != plan {
			t.Errorf("plan=%v: plans/42.json: %v", plan, err)
		}
	}
}

// planScript is the run script of recipe that plans (the one holding
// --dry-run).
func planScript(t *testing.T, recipe string) string {
	t.Helper()
	for _, s := range runScripts(t, recipe) {
		if strings.Contains(s, "--dry-run") {
			return s
		}
	}
	t.Fatalf("no plan script in %s", recipe)
	return ""
}

// standIn writes a stand-in regionctl, the sh script body with CALLS for
// the file it records to, into a directory for PATH; it returns the
// directory and that file.
func standIn(t *testing.T, body string) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	if err := os.WriteFile(filepath.Join(dir, "regionctl"), []byte("#!/bin/sh\n"+strings.ReplaceAll(body, "CALLS", calls)), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, calls
}
