package cli_test

import (
	"bufio"
	"fmt"
	"html"
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

	"github.com/regionctl/regionctl/internal/mdjudge"
)

// TestTutorial runs docs/tutorial.md as a reader would follow it: every
// ```console block's "$ " lines as commands, in order, in an empty
// directory, each one's output compared with the lines the tutorial shows
// under it (stderr, then stdout; "..." stands for any lines, <commit> for
// a commit's short id, <request-id> for a run's id, <time> for a UTC time;
// a command followed by
// nothing must print nothing), a line ending in "# exits N" exiting N; and
// every ```yaml block written, when reached, to the path its first line
// names ("# config/..."). The tutorial cannot rot: a command that no longer
// works, or prints something else, fails here.
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
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// shows FILE: the last command printed what FILE says it does.
			"shows": func(ts *testscript.TestScript, neg bool, args []string) {
				want := ts.ReadFile(args[0])
				got := ts.ReadFile("stderr") + ts.ReadFile("stdout")
				if err := matchShown(want, got); err != nil {
					ts.Fatalf("%v\nthe tutorial shows:\n%s\nthe command printed:\n%s", err, want, got)
				}
			},
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
	pathLine = regexp.MustCompile(`^# ((config|charts|pipelines)/[A-Za-z0-9._/-]+\.ya?ml)$`)
)

// tutorialBlock is a fenced block of the tutorial as a reader sees it.
type tutorialBlock struct {
	lang string
	text string
}

// tutorialBlocks are the tutorial's fenced blocks, in order; each block's
// info string may hold a language and nothing else (CommonMark renderers
// show no more of it).
func tutorialBlocks(path string) ([]tutorialBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []tutorialBlock
	var block []string
	var lang, open string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if open == "" {
			if m := fence.FindStringSubmatch(line); m != nil {
				if m[3] != "" {
					return nil, fmt.Errorf("%s:%d: %q after the fence's language: a rendered document shows none of it; say it in the block", path, n, m[3])
				}
				open, lang, block = m[1], m[2], nil
			}
			continue
		}
		if line != open {
			block = append(block, line)
			continue
		}
		open = ""
		out = append(out, tutorialBlock{lang: lang, text: strings.Join(block, "\n") + "\n"})
	}
	return out, sc.Err()
}

// tutorialScript turns the tutorial into a testscript archive.
func tutorialScript(path string) (*txtar.Archive, error) {
	blocks, err := tutorialBlocks(path)
	if err != nil {
		return nil, err
	}
	ar := &txtar.Archive{}
	var cmds []string
	commands := 0
	file := func(data string) string {
		name := fmt.Sprintf("tutorial-files/%d", len(ar.Files))
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
		return "$WORK/" + name
	}
	for i, b := range blocks {
		switch b.lang {
		case "console":
			for _, c := range transcript(b.text) {
				line, builtin, err := scriptLine(c.command)
				if err != nil {
					return nil, fmt.Errorf("%s: block %d: %v", path, i+1, err)
				}
				cmds = append(cmds, line)
				commands++
				switch {
				case builtin && c.shown != "":
					return nil, fmt.Errorf("%s: block %d: %q prints nothing, yet the tutorial shows output under it", path, i+1, c.command)
				case !builtin && !strings.HasPrefix(line, "[!demo]"):
					cmds = append(cmds, "shows "+file(c.shown))
				}
			}
		case "yaml":
			first, _, _ := strings.Cut(b.text, "\n")
			m := pathLine.FindStringSubmatch(first)
			if m == nil {
				return nil, fmt.Errorf("%s: block %d: a yaml block's first line names its file (# config/...yaml), not %q", path, i+1, first)
			}
			cmds = append(cmds, "mkdir "+filepath.Dir(m[1]), "cp "+file(b.text)+" "+m[1])
		case "sh":
			return nil, fmt.Errorf("%s: block %d: commands go in ```console blocks, each after \"$ \" with its output under it", path, i+1)
		}
	}
	if commands < 20 {
		return nil, fmt.Errorf("%s: only %d commands found", path, commands)
	}
	ar.Comment = []byte(strings.Join(cmds, "\n") + "\n")
	return ar, nil
}

// shownCommand is one "$ " line of a console block and the lines under it.
type shownCommand struct{ command, shown string }

func transcript(text string) []shownCommand {
	var out []shownCommand
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			out = append(out, shownCommand{command: c})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].shown += l + "\n"
		}
	}
	return out
}

var placeholders = strings.NewReplacer("<commit>", "[0-9a-f]{8}", "<request-id>", "[0-9a-f]{12}",
	"<time>", "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")

// matchShown compares what a command printed with what the tutorial shows:
// line by line, "..." standing for any lines and the placeholders for
// their values.
func matchShown(want, got string) error {
	var pattern strings.Builder
	pattern.WriteString("^")
	for _, l := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
		if want == "" {
			break
		}
		if l == "..." {
			pattern.WriteString("(?:.*\n)*?")
			continue
		}
		pattern.WriteString(placeholders.Replace(regexp.QuoteMeta(l)) + "\n")
	}
	pattern.WriteString("$")
	re, err := regexp.Compile(pattern.String())
	if err != nil {
		return err
	}
	if !re.MatchString(got) {
		return fmt.Errorf("the output is not what the tutorial shows")
	}
	return nil
}

// scriptLine is one tutorial command as a testscript line, and whether it
// is one of testscript's own (cd, mkdir), which print nothing.
func scriptLine(l string) (string, bool, error) {
	line, err := scriptLineOf(strings.TrimSpace(l))
	return line, strings.HasPrefix(line, "cd ") || strings.HasPrefix(line, "mkdir "), err
}

func scriptLineOf(l string) (string, error) {
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

// TestTutorialAsRendered reads the tutorial as a reader sees it: rendered by
// a CommonMark renderer (markdown-it, tools/markdown), every block the test
// runs or writes is on the page whole: each file's path, each command and
// the output the test compares it with. A path kept in a fence's info
// string, or output in a comment, would be lost here.
func TestTutorialAsRendered(t *testing.T) {
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(src, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := mdjudge.Render(t, string(page), false)
	var shown []string
	for _, m := range regexp.MustCompile(`(?s)<pre><code[^>]*>(.*?)</code></pre>`).FindAllStringSubmatch(string(out), -1) {
		shown = append(shown, html.UnescapeString(m[1]))
	}
	blocks, err := tutorialBlocks(filepath.Join(src, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != len(blocks) {
		t.Fatalf("the rendered page shows %d code blocks; the test reads %d", len(shown), len(blocks))
	}
	for i, b := range blocks {
		if shown[i] != b.text {
			t.Errorf("block %d as rendered:\n%s\nas the test reads it:\n%s", i+1, shown[i], b.text)
		}
		if b.lang == "yaml" && !pathLine.MatchString(strings.SplitN(shown[i], "\n", 2)[0]) {
			t.Errorf("block %d: the rendered page does not say which file it is:\n%s", i+1, shown[i])
		}
	}
}
