package effective

import (
	"strings"
	"testing"
)

// TestOldBoolIsItsPatterns: the shortcuts oldBool takes before its
// patterns (the first character, a colon) change no
// answer: every string of up to four characters over the characters the
// patterns care about, and some longer ones, is answered as the patterns
// and the word list alone answer it.
func TestOldBoolIsItsPatterns(t *testing.T) {
	plain := func(s string) bool {
		switch s {
		case "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "=", "<<":
			return true
		}
		// A number without separators is a number to every reader.
		return sexagesimal.MatchString(s) || (strings.Contains(s, "_") && separated.MatchString(s))
	}
	alphabet := []string{"", "0", "1", "5", "9", "_", ":", ".", "-", "+", "e", "E", "x", "b", "a", "F", " "}
	var words []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		words = append(words, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet[1:] {
			grow(prefix+c, n-1)
		}
	}
	grow("", 4)
	words = append(words, "1:20", "190:20:30.15", "-1_000", "0x_1F", "0b1010_1", "6.8523015e+5", ".5_0", "1_0.5e-3", "mc01", "eu-west-1", "1.30", "a:b", "_1", "1__", "+.5")
	for _, w := range words {
		if got, want := oldBool(w), plain(w); got != want {
			t.Errorf("oldBool(%q) = %v, the patterns say %v", w, got, want)
		}
	}
	if len(words) < 50000 {
		t.Fatalf("only %d strings tried", len(words))
	}
}
