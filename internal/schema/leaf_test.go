package schema

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestPlainJSONStringIsTheDecoders: what plainJSONString reads of a
// default's JSON text is what encoding/json decodes, over 50,000 random
// texts: strings as json.Marshal writes them (escapes, control characters,
// <, >, &, U+2028, non-ASCII, bytes that are not UTF-8) and raw quoted
// bytes; and it reads most plain strings.
func TestPlainJSONStringIsTheDecoders(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	pieces := []string{"a", "mc01", "eu-west-1", "-", "/", " ", "é", "日", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "<", "&", "\u2028", "\xff", "\xc3", "${x}"}
	read, plain := 0, 0
	for i := range 50000 {
		var s string
		for n := rnd.IntN(12); n > 0; n-- {
			if rnd.IntN(4) == 0 {
				s += pieces[rnd.IntN(len(pieces))]
			} else {
				s += pieces[rnd.IntN(4)]
			}
		}
		j := []byte(`"` + s + `"`)
		if i%2 == 0 {
			if j, _ = json.Marshal(s); j == nil {
				t.Fatal("no JSON")
			}
		}
		got, ok := plainJSONString(j)
		var want string
		err := json.Unmarshal(j, &want)
		if !ok {
			continue
		}
		read++
		if err != nil || got != want {
			t.Fatalf("%q: read %q, the decoder %q (%v)", j, got, want, err)
		}
		if i%2 == 0 {
			plain++
		}
	}
	if plain < 5000 {
		t.Errorf("only %d of %d texts read, %d of them json.Marshal's", read, 50000, plain)
	}
}
