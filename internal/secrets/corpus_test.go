package secrets

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// corpusEntry is one secret shape of testdata/gitleaks-corpus.jsonl: a
// string a gitleaks rule finds (conformance/secrets makes the corpus with
// gitleaks' own rules and detector, pinned; .source says which).
type corpusEntry struct {
	Rule   string `json:"rule"`
	Match  string `json:"match"`
	Secret string `json:"secret"`
}

func readCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open("testdata/gitleaks-corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// maxMissRate is the share of the corpus's secrets, set as a config value
// under a key that names no secret, that the scanner may miss. The misses
// are listed by rule; lower this as the formats grow, never raise it.
const maxMissRate, maxMissRateInContext = 0.17, 0.12

// TestGitleaksCorpus judges the scanner by secret shapes it did not write:
// every secret of the corpus under a key named like a secret is caught
// (as every plain value there is), and under a neutral key by its shape
// alone, with the miss rate reported and bounded.
func TestGitleaksCorpus(t *testing.T) {
	corpus := readCorpus(t)
	if len(corpus) < 200 {
		t.Fatalf("the corpus holds %d shapes, fewer than 200", len(corpus))
	}
	for _, e := range corpus {
		if len(e.Secret) >= 8 && Find("db_password", e.Secret) == "" { // shorter literals pass by design: "none", "changeme"
			t.Errorf("%s's secret under db_password passed: %q", e.Rule, e.Secret)
		}
	}
	for _, c := range []struct {
		what  string
		value func(corpusEntry) string
		max   float64
	}{
		{"the secret alone", func(e corpusEntry) string { return e.Secret }, maxMissRate},
		{"the secret with what gitleaks saw around it", func(e corpusEntry) string { return e.Match }, maxMissRateInContext},
	} {
		missed := map[string]int{}
		total := 0
		for _, e := range corpus {
			if Find("note", c.value(e)) == "" {
				missed[e.Rule]++
				total++
			}
		}
		var rules []string
		for r, n := range missed {
			rules = append(rules, fmt.Sprintf("%s (%d)", r, n))
		}
		sort.Strings(rules)
		rate := float64(total) / float64(len(corpus))
		t.Logf("%s under a key that names no secret: missed %d of %d (%.1f%%), of %d rules: %s", c.what, total, len(corpus), 100*rate, len(missed), strings.Join(rules, ", "))
		if rate > c.max {
			t.Errorf("%s: the miss rate %.1f%% is over %.1f%%", c.what, 100*rate, 100*c.max)
		}
	}
}

// FuzzFind: any key and value: Find and Redact never panic, a value Find
// takes for a secret is never shown by Redact, and Mask leaves no
// well-known format behind.
func FuzzFind(f *testing.F) {
	for _, e := range readCorpus(f)[:40] {
		f.Add("note", e.Match)
		f.Add("password", e.Secret)
	}
	f.Add("token", "$slack-token")
	f.Add("ca", "-----BEGIN CERTIFICATE-----\nMIIB")
	f.Fuzz(func(t *testing.T, key, value string) {
		what := Find(key, value)
		if what != "" && Redact("a."+key, value) != Redacted {
			t.Errorf("Find(%q, %q) = %q, but Redact shows it", key, value, what)
		}
		masked := Mask(value)
		for _, r := range formats {
			if r.re.MatchString(masked) && !r.re.MatchString(Redacted) {
				t.Errorf("Mask(%q) = %q still holds %s", value, masked, r.name)
			}
		}
	})
}

// TestFindRemembersItsAnswers: Find's remembered answers are find's, on the
// corpus's secrets and the text around them under a secret-named, a
// camelCase and a neutral key, asked twice (the second from memory), and
// the short values Find answers without looking are answered "" by find.
func TestFindRemembersItsAnswers(t *testing.T) {
	flagged := 0
	for _, e := range readCorpus(t) {
		for _, key := range []string{"db_password", "dbApiKey", "description", ""} {
			for _, v := range []string{e.Secret, e.Match, e.Secret[:min(7, len(e.Secret))], e.Secret[:min(8, len(e.Secret))]} {
				want := find(key, v)
				for round := 0; round < 2; round++ {
					if got := Find(key, v); got != want {
						t.Errorf("Find(%q, %q) round %d = %q; find says %q", key, v, round, got, want)
					}
				}
				if want != "" {
					flagged++
				}
			}
		}
	}
	if flagged == 0 {
		t.Fatal("find flagged nothing in the corpus")
	}
}
