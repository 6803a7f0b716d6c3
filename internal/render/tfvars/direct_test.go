package tfvars

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render/iam"
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

// TestDirectPolicyIsTheEncoders: what direct writes of an IAM policy
// document is what the encoder writes of its struct, over 20,000 random
// documents filled by reflection (so that a field added to Document,
// Statement or Principal is filled, and fails this until policy writes
// it): nil and empty lists and maps, a principal "*" or of each kind, the
// strings JSON escapes. A principal holding <, > or & (which its
// MarshalJSON escapes) is left to the encoder. Every other document stands
// inside a map and a list.
func TestDirectPolicyIsTheEncoders(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	handled, sized := 0, 0
	for i := 0; i < 20000; i++ {
		var doc iampolicy.Document
		fill(rnd, reflect.ValueOf(&doc).Elem(), 0)
		// Every other one stands inside a map and a list, deeper.
		var v any = doc
		if i%2 == 1 {
			v = map[string]any{"policies": []any{doc, "x"}}
		}
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
		if i%2 == 1 {
			continue
		}
		// The quota count from the written text is AWS's count of the
		// document (iam.Size, by json.Marshal), where it is taken.
		if n, ok := iam.SizeEncoded(got); ok {
			sized++
			if size, err := iam.Size(doc); err != nil || n != size {
				t.Fatalf("SizeEncoded %d, Size %d (%v), of\n%s", n, size, err, got)
			}
		}
	}
	if handled < 10000 || sized < handled/4 {
		t.Errorf("of 20,000 documents, %d were written directly and %d of those sized from the text", handled, sized)
	}
}

// fill sets v at random: strings from oddStrings or empty, each list and
// map nil, empty or of a few members, a pointer nil or to a filled value.
func fill(rnd *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		if rnd.IntN(4) > 0 {
			v.SetString(oddStrings[rnd.IntN(len(oddStrings))])
		}
	case reflect.Bool:
		v.SetBool(rnd.IntN(4) == 0)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(rnd, v.Field(i), depth)
		}
	case reflect.Pointer:
		if rnd.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(rnd, v.Elem(), depth)
		}
	case reflect.Slice:
		switch k := rnd.IntN(6); {
		case k == 0:
		case k == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + rnd.IntN(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fill(rnd, v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		switch k := rnd.IntN(6); {
		case k == 0:
		case k == 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			v.Set(reflect.MakeMap(v.Type()))
			for range 1 + rnd.IntN(3) {
				key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(rnd, key, depth+1)
				fill(rnd, val, depth+1)
				v.SetMapIndex(key, val)
			}
		}
	default:
		panic("fill: no rule for " + v.Type().String())
	}
}
