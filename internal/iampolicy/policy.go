package iampolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Document is an IAM policy document. Action, Resource and Condition values
// that AWS accepts as a string or a list are always lists here.
type Document struct {
	Version   string      `json:"Version"`
	ID        string      `json:"Id,omitempty"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement of a policy.
type Statement struct {
	Sid         string     `json:"Sid,omitempty"`
	Effect      string     `json:"Effect"`
	Principal   *Principal `json:"Principal,omitempty"`
	Action      Strings    `json:"Action,omitempty"`
	NotAction   Strings    `json:"NotAction,omitempty"`
	Resource    Strings    `json:"Resource,omitempty"`
	NotResource Strings    `json:"NotResource,omitempty"`
	// Condition maps an operator (StringEquals, ...) to keys and their values.
	Condition map[string]map[string]Strings `json:"Condition,omitempty"`
}

// Principal names who a resource policy (a trust policy, a bucket policy)
// applies to. Any is the principal "*".
type Principal struct {
	Any       bool    `json:"-"`
	AWS       Strings `json:"AWS,omitempty"`
	Service   Strings `json:"Service,omitempty"`
	Federated Strings `json:"Federated,omitempty"`
}

// UnmarshalJSON accepts "*" or an object of AWS, Service and Federated.
func (p *Principal) UnmarshalJSON(b []byte) error {
	var star string
	if json.Unmarshal(b, &star) == nil {
		if star != "*" {
			return fmt.Errorf(`a principal given as a string must be "*", not %q`, star)
		}
		*p = Principal{Any: true}
		return nil
	}
	type plain Principal
	var q plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return fmt.Errorf("principal: %w", err)
	}
	*p = Principal(q)
	return nil
}

// MarshalJSON writes "*" for Any.
func (p Principal) MarshalJSON() ([]byte, error) {
	if p.Any {
		return []byte(`"*"`), nil
	}
	type plain Principal
	return json.Marshal(plain(p))
}

// Strings is a JSON string or list of strings.
type Strings []string

// UnmarshalJSON accepts a string or a list of strings. A list is read as
// one at once: trying it as a string first cost a failed decode and its
// error for every list; nothing else decodes as a list.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var many []string
	var err error
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		err = json.Unmarshal(b, &many)
	} else {
		var one string
		err = json.Unmarshal(b, &one)
		many = Strings{one}
	}
	if err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*s = many
	return nil
}

// PolicyVariable matches an AWS policy variable such as ${aws:username};
// regionctl's own placeholders (${management_account_id}) have no colon.
var PolicyVariable = regexp.MustCompile(`\$\{[^}]*:[^}]*\}`)

// Parse decodes a rendered policy document strictly: its shape as
// regionctl writes documents, and nothing Authorize cannot judge.
func Parse(b []byte) (Document, error) {
	d, err := decode(b)
	if err != nil {
		return d, err
	}
	return d, checkShape(d)
}

// Validate holds a document built in memory to what Parse accepts, without
// the JSON round trip: the render checks each policy it writes this way.
func Validate(d Document) error {
	if err := checkJudgeable(d); err != nil {
		return err
	}
	return checkShape(d)
}

// checkShape refuses a document whose version, effects, actions or
// resources are not as Parse requires.
func checkShape(d Document) error {
	if d.Version != "2012-10-17" {
		return fmt.Errorf("policy version %q, want 2012-10-17", d.Version)
	}
	for i, s := range d.Statement {
		if s.Effect != "Allow" && s.Effect != "Deny" {
			return fmt.Errorf("statement %d: effect %q", i, s.Effect)
		}
		if (len(s.Action) == 0) == (len(s.NotAction) == 0) {
			return fmt.Errorf("statement %d: exactly one of Action and NotAction", i)
		}
		if s.Principal == nil && (len(s.Resource) == 0) == (len(s.NotResource) == 0) {
			return fmt.Errorf("statement %d: exactly one of Resource and NotResource", i)
		}
	}
	return nil
}

// ParseAWS decodes a document as AWS stores it (a trust statement may omit
// Resource); like Parse, it refuses what Authorize cannot judge.
func ParseAWS(b []byte) (Document, error) { return decode(b) }

// decode reads a document with no unknown field (NotPrincipal among them)
// and refuses what Authorize cannot judge: unknown condition operators
// and policy variables other than context keys in resources.
func decode(b []byte) (Document, error) {
	var d Document
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("parsing policy document: %w", err)
	}
	return d, checkJudgeable(d)
}

// checkJudgeable refuses what the judges cannot decide: unknown condition
// operators, and policy variables other than request context keys in
// resources and in the values of string and ARN conditions.
func checkJudgeable(d Document) error {
	for i, s := range d.Statement {
		for op, keys := range s.Condition {
			set, base, _ := SplitOperator(op)
			if !Operators[base] || (set != "" && set != "ForAnyValue" && set != "ForAllValues") {
				return fmt.Errorf("statement %d: condition operator %s is not one regionctl's evaluator knows", i, op)
			}
			// Policy variables may stand in the values of string and ARN
			// comparisons, as AWS allows; never in keys, and not with a
			// default value or a special variable.
			variables := strings.HasPrefix(base, "String") || strings.HasPrefix(base, "Arn")
			for k, vals := range keys {
				if PolicyVariable.MatchString(k) {
					return fmt.Errorf("statement %d: policy variable in condition key %q is not supported", i, k)
				}
				for _, v := range vals {
					if PolicyVariable.MatchString(v) && (!variables || strings.Contains(v, ",") || strings.ContainsAny(v, "'")) {
						return fmt.Errorf("statement %d: policy variable in %q is not supported with %s", i, v, op)
					}
					if strings.Contains(v, "${*}") || strings.Contains(v, "${?}") || strings.Contains(v, "${$}") {
						return fmt.Errorf("statement %d: special policy variable in %q is not supported", i, v)
					}
				}
			}
		}
		for _, r := range append(append(Strings{}, s.Resource...), s.NotResource...) {
			if strings.Contains(r, "${*}") || strings.Contains(r, "${?}") || strings.Contains(r, "${$}") {
				return fmt.Errorf("statement %d: special policy variable in %q is not supported", i, r)
			}
		}
	}
	return nil
}

// Substitute replaces regionctl's ${name} placeholders in a document's
// JSON text, and unescapes its AWS policy variables ($${aws:...}), as
// terraform/central-bootstrap's templatestring and the pipelines do when
// they install it. Unknown placeholders are left for the caller to catch.
func Substitute(doc []byte, values map[string]string) []byte {
	s := string(doc)
	for _, k := range SortedKeys(values) {
		s = strings.ReplaceAll(s, "${"+k+"}", values[k])
	}
	return []byte(strings.ReplaceAll(s, "$${", "${"))
}

// SubstitutedRunes is utf8.RuneCount(Substitute(doc, values)), counted
// without writing the substituted text: a render sizes thousands of
// documents against their quotas with the widest values, and Substitute
// copied each whole some ten times. It counts each ${key} as its value
// and takes a '$' off each "$${" that is not a '$' before a ${key}, which
// holds while no replacement can join the text around it into a match:
// no value is empty, a key, or holds '$', '{' or '}', and no "${" holds
// another before its '}' (a ${key} inside "${a${key}}" could become one).
// Otherwise it counts Substitute's text. TestSubstitutedRunesIsSubstitutes
// holds the two together.
func SubstitutedRunes(doc []byte, values map[string]string) int {
	if n, ok := countSubstituted(doc, values); ok {
		return n
	}
	return utf8.RuneCount(Substitute(doc, values))
}

// countSubstituted is SubstitutedRunes's count, and whether it holds.
func countSubstituted(doc []byte, values map[string]string) (int, bool) {
	for _, v := range values {
		if _, key := values[v]; key || v == "" || strings.ContainsAny(v, "${}") {
			return 0, false
		}
	}
	n := utf8.RuneCount(doc)
	for i := 0; i+1 < len(doc); i++ {
		if doc[i] != '$' || doc[i+1] != '{' {
			continue
		}
		if end := bytes.IndexByte(doc[i+2:], '}'); end >= 0 {
			name := doc[i+2 : i+2+end]
			if v, ok := values[string(name)]; ok {
				n += utf8.RuneCountInString(v) - (len("${}") + utf8.RuneCount(name))
				i += 2 + end
				continue
			}
			if bytes.Contains(name, []byte("${")) {
				return 0, false
			}
		}
		if i > 0 && doc[i-1] == '$' {
			n--
		}
	}
	return n, true
}

// EscapeVariables writes a document's AWS policy variables ($${aws:...}) so
// that a Terraform template leaves them as they are: rendered documents are
// templates whose ${name} placeholders are filled at install.
//
// It finds what PolicyVariable matches without running it (a render
// escapes thousands of documents, each with placeholders): a "${" whose
// text up to the next "}" holds a colon; the scan goes on after that "}"
// (with no colon, from the next byte: no "${" before that "}" has one
// either), as the pattern's leftmost matches do. TestEscapeVariablesIsThePattern holds the two together.
func EscapeVariables(doc []byte) []byte {
	var out []byte
	done := 0 // doc[:done] is in out
	for i := 0; i+1 < len(doc); {
		if doc[i] != '$' || doc[i+1] != '{' {
			i++
			continue
		}
		end := bytes.IndexByte(doc[i+2:], '}')
		if end < 0 {
			break // no "}" after it: none after either
		}
		if bytes.IndexByte(doc[i+2:i+2+end], ':') < 0 {
			i++
			continue
		}
		out = append(append(out, doc[done:i]...), '$')
		done = i
		i += 2 + end + 1
	}
	if out == nil {
		return doc
	}
	return append(out, doc[done:]...)
}

// Placeholders lists the ${name} placeholders left in a document's text.
func Placeholders(doc []byte) []string {
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{([a-z_]+)\}`).FindAllSubmatch(doc, -1) {
		seen[string(m[1])] = true
	}
	return SortedKeys(seen)
}

// SortedKeys are a map's keys in order.
func SortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Operators are the condition operators regionctl's documents use and its
// judges know (without
// IfExists and set prefixes).
var Operators = map[string]bool{
	"StringEquals": true, "StringNotEquals": true, "StringEqualsIgnoreCase": true, "StringNotEqualsIgnoreCase": true,
	"StringLike": true, "StringNotLike": true, "ArnEquals": true, "ArnNotEquals": true, "ArnLike": true, "ArnNotLike": true,
	"Bool": true, "Null": true, "NumericEquals": true, "NumericNotEquals": true, "NumericLessThan": true,
	"NumericLessThanEquals": true, "NumericGreaterThan": true, "NumericGreaterThanEquals": true,
}

// SplitOperator parses "ForAllValues:StringLikeIfExists" into its parts.
func SplitOperator(op string) (set, base string, ifExists bool) {
	if i := strings.Index(op, ":"); i >= 0 {
		set, op = op[:i], op[i+1:]
	}
	if op != "Null" && strings.HasSuffix(op, "IfExists") {
		ifExists, op = true, strings.TrimSuffix(op, "IfExists")
	}
	return set, op, ifExists
}
