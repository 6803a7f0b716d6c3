package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mattn/go-shellwords"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/tools/txtar"
)

// TestTutorial runs docs/tutorial.md: every ```sh line as a command (a line
// ending in "# exits N" must exit N), every ```yaml file=PATH block written
// to PATH when reached, in order, in an empty directory. The tutorial cannot
// rot: a command that no longer works fails here.
//
// The demo line (make demo) applies the real roots against moto, as
// internal/e2e's TestRealRoots already does: it runs here only when
// REGIONCTL_TUTORIAL_DEMO=1 asks for it (with moto_server, terraform and
// a provider mirror); otherwise make only says what it would run.
func TestTutorial(t *testing.T) {
	script, err := tutorialScript("../../docs/tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tutorial.txtar"), txtar.Format(script), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var tfrc string
	if _, err := exec.LookPath("moto_server"); err == nil {
		if _, err := exec.LookPath("terraform"); err == nil {
			out, err := exec.Command(filepath.Join(src, "scripts", "terraformrc"), filepath.Join(dir, "plugin-cache")).Output()
			if err == nil {
				tfrc = filepath.Join(dir, "terraformrc")
				os.MkdirAll(filepath.Join(dir, "plugin-cache"), 0o755)
				os.WriteFile(tfrc, out, 0o644)
			}
		}
	}
	runDemo := os.Getenv("REGIONCTL_TUTORIAL_DEMO") == "1"
	if tfrc == "" && runDemo {
		t.Fatal("the tutorial's demo needs moto_server, terraform and a provider mirror")
	}
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("REGIONCTL_SRC", src)
			env.Setenv("REGIONCTL_CACHE_DIR", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("SOURCE_DATE_EPOCH", suiteDate)
			for k, v := range map[string]string{"GIT_AUTHOR_NAME": "Tutorial", "GIT_COMMITTER_NAME": "Tutorial",
				"GIT_AUTHOR_EMAIL": "tutorial@example.com", "GIT_COMMITTER_EMAIL": "tutorial@example.com"} {
				env.Setenv(k, v)
			}
			if tfrc != "" {
				env.Setenv("TF_CLI_CONFIG_FILE", tfrc)
				env.Setenv("CHECKPOINT_DISABLE", "1")
				env.Setenv("REGIONCTL_TUTORIAL_DEMO", "1")
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "demo" {
				return tfrc != "" && runDemo, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

var (
	fence    = regexp.MustCompile("^(`{3,})(\\S*)\\s*(.*)$")
	exitsTag = regexp.MustCompile(`\s+#\s*exits\s+([0-9])\s*$`)
)

// tutorialScript turns the tutorial into a testscript archive.
func tutorialScript(path string) (*txtar.Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ar := &txtar.Archive{}
	var cmds []string
	var block []string
	var lang, attrs, open string
	commands := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if open == "" {
			if m := fence.FindStringSubmatch(line); m != nil {
				open, lang, attrs, block = m[1], m[2], m[3], nil
			}
			continue
		}
		if line != open {
			block = append(block, line)
			continue
		}
		open = ""
		switch {
		case lang == "sh":
			for _, l := range block {
				c, err := scriptLine(l)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %v", path, n, err)
				}
				if c != "" {
					cmds = append(cmds, c)
					commands++
				}
			}
		case strings.HasPrefix(attrs, "file="):
			target := strings.TrimPrefix(attrs, "file=")
			name := fmt.Sprintf("tutorial-files/%d", len(ar.Files))
			ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(strings.Join(block, "\n") + "\n")})
			cmds = append(cmds, "mkdir "+filepath.Dir(target), "cp $WORK/"+name+" "+target)
		}
	}
	if commands < 20 {
		return nil, fmt.Errorf("%s: only %d commands found", path, commands)
	}
	ar.Comment = []byte(strings.Join(cmds, "\n") + "\n")
	return ar, nil
}

// scriptLine is one tutorial command as a testscript line.
func scriptLine(l string) (string, error) {
	l = strings.TrimSpace(l)
	if l == "" || strings.HasPrefix(l, "#") {
		return "", nil
	}
	want := ""
	if m := exitsTag.FindStringSubmatch(l); m != nil {
		want = m[1]
		l = strings.TrimSpace(l[:len(l)-len(m[0])])
	}
	args, err := shellwords.Parse(l)
	if err != nil {
		return "", err
	}
	for i, a := range args {
		if strings.ContainsAny(a, " '") {
			args[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
		}
	}
	rest := strings.Join(args[1:], " ")
	switch args[0] {
	case "cd":
		return "cd " + rest, nil
	case "mkdir":
		return "mkdir " + rest, nil
	case "regionctl":
		if want != "" && want != "0" {
			return "exec exits " + want + " " + rest, nil
		}
		return "exec regionctl " + rest, nil
	case "make":
		if !slices.Contains(args, "demo") {
			return "", fmt.Errorf("the tutorial runs make only for the demo: %s", l)
		}
		// Without the demo, make only says what it would run (-n): the
		// target exists and its recipe names the demo's program.
		return "[!demo] exec make -n " + rest + "\n[!demo] stdout 'regionctl-demo --root'\n[demo] exec " + strings.Join(args, " "), nil
	default:
		if want != "" {
			return "", fmt.Errorf("# exits goes with regionctl commands: %s", l)
		}
		return "exec " + strings.Join(args, " "), nil
	}
}
