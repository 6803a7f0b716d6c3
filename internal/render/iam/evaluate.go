package iam

import "strings"

// No maintained Go library evaluates IAM policies with conditions, so this
// is a small evaluator limited to what regionctl's documents use: Effect,
// Action/NotAction and Resource/NotResource with * and ? wildcards,
// Principal (exact ARNs), explicit Deny, and the condition operators
// StringEquals, StringNotEquals, StringLike, StringNotLike, ArnEquals and
// ArnLike with their IfExists forms and the ForAnyValue:/ForAllValues:
// set prefixes for multi-valued keys. It follows AWS's documented policy
// evaluation logic for a single account's identity policy and for a trust
// policy; it is a test instrument, not a general IAM engine.

// Decision is the outcome of an evaluation.
type Decision int

const (
	ImplicitDeny Decision = iota
	Allow
	ExplicitDeny
)

func (d Decision) String() string {
	return [...]string{"implicit deny", "allow", "explicit deny"}[d]
}

// Request is one API request as the policies see it.
type Request struct {
	Principal string // ARN of the caller, for trust policies
	Action    string // service:Action
	Resource  string // ARN, or "*" for actions without a resource
	Context   map[string][]string
}

// Evaluate decides req against docs as AWS does for policies of one
// principal: an explicit deny in any statement wins, else an allow, else
// the request is implicitly denied.
func Evaluate(req Request, docs ...Document) Decision {
	allowed := false
	for _, d := range docs {
		for _, s := range d.Statement {
			if !s.matches(req) {
				continue
			}
			if s.Effect == "Deny" {
				return ExplicitDeny
			}
			allowed = true
		}
	}
	if allowed {
		return Allow
	}
	return ImplicitDeny
}

func (s Statement) matches(req Request) bool {
	if s.Principal != nil && !anyMatch(s.Principal.AWS, req.Principal, false) {
		return false
	}
	if len(s.Action) > 0 && !anyMatch(s.Action, req.Action, true) {
		return false
	}
	if len(s.NotAction) > 0 && anyMatch(s.NotAction, req.Action, true) {
		return false
	}
	if s.Principal == nil {
		if len(s.Resource) > 0 && !anyMatch(s.Resource, req.Resource, false) {
			return false
		}
		if len(s.NotResource) > 0 && anyMatch(s.NotResource, req.Resource, false) {
			return false
		}
	}
	for _, op := range sortedKeys(s.Condition) {
		for _, key := range sortedKeys(s.Condition[op]) {
			if !condition(op, req.Context[key], s.Condition[op][key]) {
				return false
			}
		}
	}
	return true
}

// condition evaluates one operator on one key: the key's values in the
// request against the policy's values (any of which may match).
func condition(op string, have []string, want []string) bool {
	set := ""
	if i := strings.Index(op, ":"); i >= 0 {
		set, op = op[:i], op[i+1:]
	}
	ifExists := strings.HasSuffix(op, "IfExists")
	op = strings.TrimSuffix(op, "IfExists")
	if len(have) == 0 {
		switch {
		case ifExists:
			return true
		case set == "ForAllValues":
			return true // vacuously true for an absent multi-valued key
		case strings.Contains(op, "Not"):
			return true // a negated operator holds when the key is absent
		}
		return false
	}
	negated := strings.Contains(op, "Not")
	base := strings.Replace(op, "Not", "", 1)
	one := func(v string) bool {
		hit := false
		for _, w := range want {
			if match1(base, v, w) {
				hit = true
				break
			}
		}
		return hit != negated
	}
	switch set {
	case "ForAllValues":
		for _, v := range have {
			if !one(v) {
				return false
			}
		}
		return true
	default: // single-valued keys and ForAnyValue
		for _, v := range have {
			if one(v) {
				return true
			}
		}
		return false
	}
}

func match1(op, have, want string) bool {
	switch op {
	case "StringEquals", "ArnEquals":
		return have == want
	case "StringEqualsIgnoreCase":
		return strings.EqualFold(have, want)
	case "StringLike", "ArnLike":
		return wildcard(want, have, false)
	}
	return false // an operator this evaluator does not know never matches
}

func anyMatch(patterns []string, s string, fold bool) bool {
	for _, p := range patterns {
		if wildcard(p, s, fold) {
			return true
		}
	}
	return false
}

// wildcard matches s against an IAM pattern where * matches any run of
// characters (including /) and ? one character.
func wildcard(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	return globMatch(pattern, s) // unlike path.Match, * also spans "/"
}

func globMatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if globMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			p, s = p[1:], s[1:]
		default:
			if len(s) == 0 || p[0] != s[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return len(s) == 0
}
