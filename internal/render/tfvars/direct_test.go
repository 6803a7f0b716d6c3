package tfvars

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDirectIsTheEncoders: what direct writes of a generic value is what
// the encoder writes, byte for byte, over 20,000 random values of every
// kind it takes (maps, lists of values and of strings, nil and empty
// ones, integers, booleans) and strings of everything JSON escapes or
// might (quotes, backslashes, control characters, <, >, &, U+2028,
// non-ASCII, bytes that are not UTF-8); a value it does not take (a float)
// it leaves to the encoder.
func TestDirectIsTheEncoders(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	handled := 0
	for i := 0; i < 20000; i++ {
		v := randomValue(rnd, 0)
		want, err := encoders.Encode(v, func(j []byte) ([]byte, error) { return bytes.Clone(j), nil })
		if err != nil {
			t.Fatal(err)
		}
		got, ok := direct(v)
		if !ok {
			continue
		}
		handled++
		if !bytes.Equal(got, want) {
			t.Fatalf("direct wrote\n%s\nthe encoder\n%s", got, want)
		}
	}
	if handled < 10000 {
		t.Errorf("only %d of 20,000 values were written directly", handled)
	}
}

var oddStrings = []string{"", "a", "eu-west-1", `q"uote`, `back\slash`, "tab\tnl\ncr\rbs\bff\f", "\x00\x01\x1f\x7f", "<b>&</b>", "line\u2028sep\u2029", "é日本", "bad\xffutf8", "${account_id}", strings.Repeat("long ", 30)}

func randomValue(rnd *rand.Rand, depth int) any {
	switch k := rnd.IntN(12); {
	case depth < 3 && k < 3:
		m := map[string]any{}
		if rnd.IntN(8) == 0 {
			return map[string]any(nil)
		}
		for range rnd.IntN(5) {
			m[oddStrings[rnd.IntN(len(oddStrings))]+oddStrings[rnd.IntN(len(oddStrings))]] = randomValue(rnd, depth+1)
		}
		return m
	case depth < 3 && k < 5:
		if rnd.IntN(8) == 0 {
			return []any(nil)
		}
		l := make([]any, rnd.IntN(4))
		for i := range l {
			l[i] = randomValue(rnd, depth+1)
		}
		return l
	case k == 5:
		if rnd.IntN(8) == 0 {
			return []string(nil)
		}
		l := make([]string, rnd.IntN(4))
		for i := range l {
			l[i] = oddStrings[rnd.IntN(len(oddStrings))]
		}
		return l
	case k == 6:
		return rnd.Int64N(2000) - 1000
	case k == 7:
		return rnd.IntN(2) == 0
	case k == 8:
		if rnd.IntN(20) == 0 {
			return 1.5
		}
		return nil
	case k == 9:
		return int(rnd.Int64N(1 << 40))
	}
	return oddStrings[rnd.IntN(len(oddStrings))]
}
