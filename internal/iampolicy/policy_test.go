package iampolicy

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestParseRefusesWhatItCannotJudge(t *testing.T) {
	for _, doc := range []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"DateGreaterThan":{"aws:CurrentTime":"2020-01-01T00:00:00Z"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::${*}/*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"${aws:username}"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"${aws:username}":"x"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"s3:prefix":"${aws:username, 'x'}"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"x"},"Action":"s3:*","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"ForSomeValues:StringEquals":{"k":"v"}}}]}`,
		// Neither a string nor a list of strings.
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":5,"Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":{"a":"s3:*"},"Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*",5],"Resource":"*"}]}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("Parse accepted %s", doc)
		}
	}
	if _, err := Parse([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::${bucket}/*","Condition":{"Null":{"aws:RequestTag/x":"false"},"BoolIfExists":{"aws:SecureTransport":"true"}}}]}`)); err != nil {
		t.Errorf("Parse refused a document it can judge: %v", err)
	}
	if _, err := Parse([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"organizations:MoveAccount","Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/k":"${aws:PrincipalTag/k}"}}}]}`)); err != nil {
		t.Errorf("Parse refused a policy variable in a string condition: %v", err)
	}
}

// TestValidateAgreesWithParse: the render checks the policies it builds
// with Validate, in memory; it must refuse and accept what Parse does with
// the same document as JSON.
func TestValidateAgreesWithParse(t *testing.T) {
	for _, doc := range []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"DateGreaterThan":{"aws:CurrentTime":"2020-01-01T00:00:00Z"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::${*}/*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"${aws:username}"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"${aws:username}":"x"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"s3:prefix":"${aws:username, 'x'}"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"ForSomeValues:StringEquals":{"k":"v"}}}]}`,
		`{"Version":"2008-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Permit","Action":"s3:*","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","NotAction":"s3:Get*","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::${bucket}/*","Condition":{"Null":{"aws:RequestTag/x":"false"}}}]}`,
	} {
		d, err := ParseAWS([]byte(doc))
		_, parseErr := Parse([]byte(doc))
		if err != nil {
			d = Document{} // decoding refused it; build it again without the checks
			if jerr := json.Unmarshal([]byte(doc), &d); jerr != nil {
				t.Fatal(jerr)
			}
		}
		if verr := Validate(d); (verr == nil) != (parseErr == nil) {
			t.Errorf("%s: Validate says %v, Parse says %v", doc, verr, parseErr)
		}
	}
}

// TestEscapeVariables: AWS's policy variables (a colon inside ${...}) get
// a second $ so that Terraform's template leaves them; regionctl's own
// ${name} placeholders, and text with neither, are left as they are.
func TestEscapeVariables(t *testing.T) {
	for in, want := range map[string]string{
		`{"Resource":"arn:aws:s3:::b/${aws:username}/*"}`:                      `{"Resource":"arn:aws:s3:::b/$${aws:username}/*"}`,
		`{"a":"${aws:PrincipalTag/x}","b":"${account_id}","c":"${s3:prefix}"}`: `{"a":"$${aws:PrincipalTag/x}","b":"${account_id}","c":"$${s3:prefix}"}`,
		`{"Resource":"arn:aws:iam::${account_id}:role/x"}`:                     `{"Resource":"arn:aws:iam::${account_id}:role/x"}`,
		`{"Resource":"arn:aws:s3:::b/$ {x:y} $x {a:b}"}`:                       `{"Resource":"arn:aws:s3:::b/$ {x:y} $x {a:b}"}`,
		``: ``,
	} {
		if got := string(EscapeVariables([]byte(in))); got != want {
			t.Errorf("EscapeVariables(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestEscapeVariablesIsThePattern holds EscapeVariables to what it stands
// for, PolicyVariable's matches each given a second "$": every string of
// up to six characters over the characters the pattern cares about, and
// some longer ones.
func TestEscapeVariablesIsThePattern(t *testing.T) {
	pattern := func(doc []byte) []byte {
		return PolicyVariable.ReplaceAllFunc(doc, func(v []byte) []byte { return append([]byte("$"), v...) })
	}
	docs := stringsOf([]string{"$", "{", "}", ":", "a"}, 6)
	docs = append(docs, "${a ${b:c}", "${a ${b} c:d}", "$${aws:x}", "${aws:a}${aws:b}", "${x}${aws:y}}", `{"a":"${aws:PrincipalTag/x}","b":"${account_id}"}`)
	for _, d := range docs {
		if got, want := string(EscapeVariables([]byte(d))), string(pattern([]byte(d))); got != want {
			t.Errorf("EscapeVariables(%q) = %q, the pattern gives %q", d, got, want)
		}
	}
	if len(docs) < 19000 {
		t.Fatalf("only %d strings tried", len(docs))
	}
}

// TestSubstitutedRunesIsSubstitutes: SubstitutedRunes counts what
// utf8.RuneCount counts of Substitute's text (the judge), for every string
// of up to six pieces over placeholders, escaped variables, braces and
// a two-byte rune, with values that cannot make a match and with values
// that could (a key's name, a brace), which take Substitute's way.
func TestSubstitutedRunesIsSubstitutes(t *testing.T) {
	docs := stringsOf([]string{"$", "{", "}", "a", "é", "${a}", "${bc}", "$${", ":"}, 5)
	docs = append(docs, `{"a":"$${aws:username}","b":"${a}","c":"$$${bc}","d":"${${a}}"}`, "${${a}c}", "$${${a}c}")
	counted := 0
	for _, values := range []map[string]string{
		{"a": "1234", "bc": "ééé"},
		{"a": "", "bc": "x"},
		{"a": "bc", "bc": "z"}, // a value that is a key
		{"a": "{", "bc": "}$"}, // values that could make a match
		{"a": "b", "bc": "z"},  // "${${a}c}" becomes "${bc}", then "z"
	} {
		for _, d := range docs {
			if got, want := SubstitutedRunes([]byte(d), values), utf8.RuneCount(Substitute([]byte(d), values)); got != want {
				t.Fatalf("SubstitutedRunes(%q, %v) = %d, Substitute's text has %d runes", d, values, got, want)
			}
			if _, ok := countSubstituted([]byte(d), values); ok && values["a"] == "1234" {
				counted++
			}
		}
	}
	// The count, not Substitute, answers for the first values' strings
	// but those with a "${" inside another (some 17 %).
	if counted < len(docs)*3/4 || counted >= len(docs) {
		t.Errorf("the count answered for %d strings of %d", counted, len(docs))
	}
	if len(docs) < 60000 {
		t.Fatalf("only %d strings tried", len(docs))
	}
}

// stringsOf is every string of at most n pieces of alphabet.
func stringsOf(alphabet []string, n int) []string {
	out := []string{""}
	for from := 0; n > 0; n-- {
		to := len(out)
		for _, prefix := range out[from:to] {
			for _, c := range alphabet {
				out = append(out, prefix+c)
			}
		}
		from = to
	}
	return out
}
