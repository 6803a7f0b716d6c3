package iamjudge

import (
	"strconv"
	"strings"

	"github.com/regionctl/regionctl/internal/iampolicy"
)

// No maintained Go library evaluates IAM policies with conditions, so this
// is an evaluator of AWS's documented policy evaluation logic ("Policy
// evaluation logic", "Condition operators" and "Principal" in the IAM User
// Guide) for what regionctl's documents and the IAM gate of internal/awsemu
// need: Effect, Action/NotAction, Resource/NotResource with * and ?
// wildcards, Principal (AWS accounts, roles and sessions, services, web
// identity providers, "*"), explicit Deny, and the String*, Arn*, Bool,
// Null and Numeric* condition operators with their IfExists forms and the
// ForAnyValue:/ForAllValues: set prefixes, and policy variables of the
// request context (${aws:PrincipalAccount}) in Resource, NotResource and
// the values of string and ARN conditions. Authorize adds the
// organisation's service and resource control policies. It does not know
// the special variables ${*}, ${?} and ${$}, variables with default
// values, NotPrincipal, or Date or IP operators: Parse refuses documents
// that use them, so nothing is silently misjudged.

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

// Caller is who makes a request, as a resource policy's Principal sees it.
type Caller struct {
	// ARN is the caller's own ARN: arn:aws:iam::111122223333:root, a user,
	// or a role session arn:aws:sts::111122223333:assumed-role/Role/session.
	ARN string
	// RoleARN is the role of a session (what aws:PrincipalArn holds).
	RoleARN string
	Account string
	// Service is an AWS service principal (eks.amazonaws.com); Federated
	// the web identity provider of an AssumeRoleWithWebIdentity caller.
	Service   string
	Federated string
}

// Anonymous is the caller of an unsigned request: no account, no identity
// policies; only a resource-based policy naming "*" can allow it.
var Anonymous = Caller{ARN: "anonymous"}

// Request is one API request on one resource, as the policies see it.
type Request struct {
	Caller   Caller
	Action   string // service:Action
	Resource string // ARN, or "*" for actions without a resource
	Context  map[string][]string
}

// Evaluate decides req against docs as AWS does for the policies of one
// kind: an explicit deny in any statement wins, else an allow, else the
// request is implicitly denied. Statements with a Principal apply only
// when it names req.Caller.
func Evaluate(req Request, docs ...Document) Decision {
	d, _ := evaluate(req, docs...)
	return d
}

// match says how a statement applies to a request.
type match struct {
	doc  *Document
	stmt *Statement
	// direct: the statement's Principal names the caller itself (its role
	// or session, a service, a provider, "*"), not only its account;
	// session: it names the caller's session ARN itself.
	direct, session bool
}

// evaluate returns the decision and the statement that made it.
func evaluate(req Request, docs ...Document) (Decision, match) {
	var allow *match
	for i := range docs {
		d := &docs[i]
		for j := range d.Statement {
			s := &d.Statement[j]
			ok, level := statementMatches(*s, req)
			if !ok {
				continue
			}
			m := match{d, s, level >= byRole, level == bySession}
			if s.Effect == "Deny" {
				return ExplicitDeny, m
			}
			if allow == nil || (m.direct && !allow.direct) || (m.session && !allow.session) {
				allow = &m
			}
		}
	}
	if allow != nil {
		return Allow, *allow
	}
	return ImplicitDeny, match{}
}

// level is how closely a statement's Principal names a caller.
type level int

const (
	none      level = iota
	byAccount       // an account id or arn:...:root: delegates to the account's own policies
	byRole          // the caller's role (limited by its session's boundary and session policies)
	bySession       // the caller itself: its session ARN, user, root, a service, a provider, "*"
)

func statementMatches(s Statement, req Request) (bool, level) {
	lv := bySession // a statement without Principal (an identity policy) is the caller's own
	if s.Principal != nil {
		if lv = principalNames(s.Principal, req.Caller); lv == none {
			return false, none
		}
	}
	if len(s.Action) > 0 && !anyMatch(s.Action, req.Action, true) {
		return false, none
	}
	if len(s.NotAction) > 0 && anyMatch(s.NotAction, req.Action, true) {
		return false, none
	}
	if len(s.Resource) > 0 && !anyMatch(resolved(s.Resource, req.Context), req.Resource, false) {
		return false, none
	}
	if len(s.NotResource) > 0 && anyMatch(resolved(s.NotResource, req.Context), req.Resource, false) {
		return false, none
	}
	for _, op := range iampolicy.SortedKeys(s.Condition) {
		for _, key := range iampolicy.SortedKeys(s.Condition[op]) {
			if !condition(op, lookup(req.Context, key), withVariables(s.Condition[op][key], req.Context)) {
				return false, none
			}
		}
	}
	return true, lv
}

// principalNames says how p names c.
func principalNames(p *Principal, c Caller) level {
	if p.Any {
		return bySession
	}
	best := none
	for _, a := range p.AWS {
		switch {
		case a == "*":
			return bySession
		case a != "" && a == c.ARN:
			return bySession // the session, the user or the root user itself
		case a != "" && a == c.RoleARN:
			best = max(best, byRole)
		case c.Account != "" && (a == c.Account || strings.HasPrefix(a, "arn:") && strings.HasSuffix(a, ":iam::"+c.Account+":root")):
			best = max(best, byAccount)
		}
	}
	for _, s := range p.Service {
		if s != "" && s == c.Service {
			return bySession
		}
	}
	for _, f := range p.Federated {
		if f != "" && f == c.Federated {
			return bySession
		}
	}
	return best
}

// lookup finds a condition key; key names are case-insensitive.
func lookup(ctx map[string][]string, key string) []string {
	if v, ok := ctx[key]; ok {
		return v
	}
	for k, v := range ctx {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// condition evaluates one operator on one key: the key's values in the
// request against the policy's values (any of which may match).
func condition(op string, have []string, want []string) bool {
	set, op, ifExists := iampolicy.SplitOperator(op)
	if op == "Null" {
		absent := len(have) == 0
		for _, w := range want {
			if strings.EqualFold(w, "true") == absent {
				return true
			}
		}
		return false
	}
	negated := strings.Contains(op, "Not")
	if len(have) == 0 {
		switch {
		case ifExists:
			return true
		case set == "ForAllValues":
			return true // vacuously true for an absent multi-valued key
		case negated:
			return true // a negated operator holds when the key is absent
		}
		return false
	}
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

// arnMatch is ArnEquals and ArnLike, which AWS evaluates alike: the six
// colon-separated parts of the ARN are matched one by one, each pattern
// part with its * and ? wildcards; a value that is not an ARN matches
// nothing.
func arnMatch(pattern, arn string) bool {
	p, a := strings.SplitN(pattern, ":", 6), strings.SplitN(arn, ":", 6)
	if len(p) != 6 || len(a) != 6 || a[0] != "arn" {
		return false
	}
	for i := range p {
		if !wildcard(p[i], a[i], false) {
			return false
		}
	}
	return true
}

func match1(op, have, want string) bool {
	switch op {
	case "StringEquals":
		return have == want
	case "StringEqualsIgnoreCase":
		return strings.EqualFold(have, want)
	case "StringLike":
		return wildcard(want, have, false)
	case "ArnEquals", "ArnLike":
		return arnMatch(want, have)
	case "Bool":
		return strings.EqualFold(have, want)
	case "NumericEquals", "NumericLessThan", "NumericLessThanEquals", "NumericGreaterThan", "NumericGreaterThanEquals":
		h, err1 := strconv.ParseFloat(have, 64)
		w, err2 := strconv.ParseFloat(want, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		switch op {
		case "NumericEquals":
			return h == w
		case "NumericLessThan":
			return h < w
		case "NumericLessThanEquals":
			return h <= w
		case "NumericGreaterThan":
			return h > w
		default:
			return h >= w
		}
	}
	return false // Parse refuses operators this evaluator does not know
}

// withVariables replaces the policy variables in a condition's values
// with the request's values ("IAM policy elements: Variables and tags":
// variables may stand in string and ARN comparisons). A value whose
// variable the request lacks, or holds several values for, matches
// nothing: it is left out, so a condition of only such values is false
// for a positive operator and true for a negated one.
func withVariables(want []string, ctx map[string][]string) []string {
	for _, w := range want {
		if iampolicy.PolicyVariable.MatchString(w) {
			return resolved(want, ctx)
		}
	}
	return want
}

// resolved replaces the policy variables (${aws:PrincipalAccount}) of
// resource patterns with the request's values. A pattern whose variable
// the request lacks, holds several values for, or holds a wildcard in
// matches nothing: it is left out.
func resolved(patterns []string, ctx map[string][]string) []string {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		ok := true
		r := iampolicy.PolicyVariable.ReplaceAllStringFunc(p, func(v string) string {
			vals := lookup(ctx, v[2:len(v)-1])
			if len(vals) != 1 || strings.ContainsAny(vals[0], "*?") {
				ok = false
				return ""
			}
			return vals[0]
		})
		if ok {
			out = append(out, r)
		}
	}
	return out
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
