package tfvars

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextOnlyIsCtys holds the shortcut that calls a string text without
// asking cty (plainText) to cty's own conversion: every string it calls
// text cty converts to neither a number nor a bool. The corpus is every
// string of up to three characters over digits and the letters of the
// words cty and big.ParseFloat know (true, false, inf, infinity, nan, the
// exponent marks, the prefixes of other bases, signs, dots, underscores,
// spaces, and a colon and a slash as ARNs and CIDRs hold), numbers in each
// form big.ParseFloat reads or refuses, those words in each case, and
// every string the rendered fleet's Terraform variables hold.
func TestTextOnlyIsCtys(t *testing.T) {
	alphabet := []string{"", "0", "1", "9", "i", "n", "f", "I", "N", "F", "t", "r", "u", "e", "E", "a", "l", "s", "x", "p", "P", "b", "o", ".", "+", "-", "_", " ", ":", "/"}
	var corpus []string
	for _, a := range alphabet {
		for _, b := range alphabet {
			for _, c := range alphabet {
				corpus = append(corpus, a+b+c)
			}
		}
	}
	corpus = append(corpus, "1e5", "1E+05", "-1.5e-3", "0x1F", "0x1p-2", "1p3", "1_000", "0b101", "0o17", "007", ".5", "5.", "+.5e1", "1.30", "10.0.0.0", "m5.xlarge", "123456789012", "-0", "+Inf", "-Infinity", "1e", "e1", "--1", "0.0.1")
	for _, w := range []string{"true", "false", "inf", "infinity", "nan", "yes", "no", "on", "off", "null", "y", "n"} {
		for _, v := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			corpus = append(corpus, v, "+"+v, "-"+v, " "+v, v+" ", v+"\n")
		}
	}
	rendered := 0
	err := filepath.WalkDir(filepath.Join("..", "..", "..", "deploy"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".tfvars.json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		rendered++
		corpus = append(corpus, stringsOf(v)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rendered < 10 {
		t.Fatalf("only %d tfvars files: the test reads the wrong tree", rendered)
	}
	plain := 0
	for _, s := range corpus {
		if !plainText(s) {
			continue
		}
		plain++
		if !ctyTextOnly(s) {
			t.Errorf("%q: the shortcut calls it text; cty converts it to a number or a bool", s)
		}
	}
	if plain*2 < len(corpus) {
		t.Errorf("the shortcut took %d of %d strings", plain, len(corpus))
	}
	t.Logf("%d strings, %d taken by the shortcut", len(corpus), plain)
}

func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, stringsOf(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range x {
			out = append(out, k)
			out = append(out, stringsOf(e)...)
		}
		return out
	}
	return nil
}
