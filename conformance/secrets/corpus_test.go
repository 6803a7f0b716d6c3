// Package secrets makes and checks regionctl's secret corpus with
// gitleaks' own rules and detector, pinned in go.mod: every entry of
// internal/secrets/testdata/gitleaks-corpus.jsonl is a string gitleaks
// finds, made from its rule's own expression. regionctl's scanner is then
// judged against that corpus in its own package (no gitleaks code reaches
// the binary).
//
//	go test -run TestCorpus -update   # make the corpus again
//	go test -run TestCorpus           # check it against the pinned gitleaks
package secrets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"hash/fnv"
	"os"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"testing"

	"github.com/lucasjones/reggen"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

var update = flag.Bool("update", false, "make the corpus again from gitleaks' rules")

const corpusPath = "../../internal/secrets/testdata/gitleaks-corpus.jsonl"

// perRule is how many distinct samples each rule gives at most.
const perRule = 2

// Entry is one secret shape: a string a gitleaks rule finds, and the part
// of it gitleaks reports as the secret.
type Entry struct {
	Rule   string `json:"rule"`
	Match  string `json:"match"`
	Secret string `json:"secret"`
}

func defaultConfig(t *testing.T) config.Config {
	t.Helper()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// gitleaksVersion is the pin in go.mod.
func gitleaksVersion() string {
	b, _ := os.ReadFile("go.mod")
	if m := regexp.MustCompile(`github\.com/zricethezav/gitleaks/v8 (v\S+)`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// TestCorpus checks (or with -update, makes) the corpus: each entry found
// by the rule it names, with the same secret, by the pinned gitleaks.
func TestCorpus(t *testing.T) {
	cfg := defaultConfig(t)
	d := detect.NewDetector(cfg)
	found := func(e Entry) bool {
		for _, f := range d.DetectString(e.Match) {
			if f.RuleID == e.Rule && f.Secret == e.Secret {
				return true
			}
		}
		return false
	}
	if *update {
		entries := make_(t, cfg, d)
		var b bytes.Buffer
		for _, e := range entries {
			line, _ := json.Marshal(e)
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(corpusPath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(corpusPath+".source", []byte("gitleaks "+gitleaksVersion()+", default rules; made by conformance/secrets (go test -run TestCorpus -update)\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d entries of %d rules", len(entries), len(cfg.Rules))
		return
	}
	f, err := os.Open(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, rules := 0, map[string]bool{}
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		n++
		rules[e.Rule] = true
		if !found(e) {
			t.Errorf("gitleaks %s does not find %s's entry %q", gitleaksVersion(), e.Rule, e.Match)
		}
	}
	if n < 200 {
		t.Errorf("the corpus holds %d entries, fewer than 200", n)
	}
	t.Logf("%d entries of %d rules, each found by gitleaks %s", n, len(rules), gitleaksVersion())
}

// make_ generates, for each rule with an expression, strings from that
// expression until gitleaks finds perRule distinct ones by that rule
// (entropy thresholds and allowlists refuse many), with a fixed seed so
// that the same pin makes the same corpus.
func make_(t *testing.T, cfg config.Config, d *detect.Detector) []Entry {
	var ids []string
	for id, r := range cfg.Rules {
		if r.Regex != nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []Entry
	for _, id := range ids {
		r := cfg.Rules[id]
		re, err := syntax.Parse(r.Regex.String(), syntax.Perl)
		if err != nil {
			t.Logf("%s: %v", id, err)
			continue
		}
		g, err := reggen.NewGenerator(re.String())
		if err != nil {
			t.Logf("%s: %v", id, err)
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(id))
		g.SetSeed(int64(h.Sum64() >> 1))
		seen := map[string]bool{}
		for try := 0; try < 400 && len(seen) < perRule; try++ {
			s := g.Generate(12)
			if !printable(s) {
				continue // real secrets are ASCII; (?i) classes also give ſ and K
			}
			for _, f := range d.DetectString(s) {
				if f.RuleID == id && !seen[f.Secret] {
					seen[f.Secret] = true
					out = append(out, Entry{Rule: id, Match: s, Secret: f.Secret})
					break
				}
			}
		}
		if len(seen) == 0 {
			t.Logf("%s: no sample gitleaks finds", id)
		}
	}
	return out
}

// printable is ASCII text on one line: what a config value holds.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}
