package simulator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/regionctl/regionctl/internal/iamjudge"
)

// Verdicts are the two judges' answers to one request.
type Verdicts struct {
	Ours   iamjudge.Verdict
	Theirs Answer
}

// Agree says whether both judges allow, or both deny (their reasons for a
// denial may differ: an implicit and an explicit deny are both a denial).
// A request the simulator refused to decide agrees with nothing.
func (v Verdicts) Agree() bool {
	if v.Theirs.Refused() != "" {
		return false
	}
	return (v.Ours.Decision == iamjudge.Allow) == (v.Theirs.Result == "Allowed")
}

// String says both verdicts in a line.
func (v Verdicts) String() string {
	theirs := v.Theirs.Result
	if r := v.Theirs.Refused(); r != "" {
		theirs = "refused: " + r
	}
	return fmt.Sprintf("iamjudge: %s (%s); simulator: %s", v.Ours.Decision, v.Ours.Reason, theirs)
}

// Theirs is the simulator's word for a decision of iamjudge.
func Theirs(d iamjudge.Decision) string {
	switch d {
	case iamjudge.Allow:
		return "Allowed"
	case iamjudge.ExplicitDeny:
		return "ExplicitlyDenied"
	}
	return "ImplicitlyDenied"
}

// Compare asks both judges about a.
func (j *Judge) Compare(a iamjudge.Authorization) (Verdicts, error) {
	return j.CompareVerdict(a, iamjudge.Authorize(a))
}

// CompareVerdict asks the simulator about a, which iamjudge answered ours.
func (j *Judge) CompareVerdict(a iamjudge.Authorization, ours iamjudge.Verdict) (Verdicts, error) {
	v := Verdicts{Ours: ours}
	s, err := FromAuthorization(a)
	if err != nil {
		return v, err
	}
	v.Theirs, err = j.Simulate(s)
	return v, err
}

// FromAuthorization states a as the simulator's Simulation: the same
// caller, request, context and policies.
func FromAuthorization(a iamjudge.Authorization) (Simulation, error) {
	s := Simulation{Request: Request{Action: a.Action, ContextVariables: map[string][]string{}}}
	switch {
	case a.Caller == iamjudge.Anonymous:
		s.Request.Principal = AnonymousPrincipal
	case a.Caller.ARN != "":
		s.Request.Principal = a.Caller.ARN
	case a.Caller.Federated != "":
		s.Request.Principal = a.Caller.Federated
	case a.Caller.Service != "":
		s.Request.Principal = a.Caller.Service
	default:
		return s, fmt.Errorf("a caller with no ARN, provider or service")
	}
	account := a.ResourceAccount
	if account == "" {
		account = a.Caller.Account
	}
	s.Request.Resource = RequestResource{Resource: a.Resource, AccountID: account}
	for k, v := range a.Context {
		s.Request.ContextVariables[k] = v
	}
	var err error
	named := func(kind string, docs []iamjudge.Document) []Named {
		out := make([]Named, 0, len(docs))
		for i, d := range docs {
			var p any
			if p, err = asJSON(d); err != nil {
				return nil
			}
			name := d.ID
			if name == "" {
				name = fmt.Sprintf("%s-%d", kind, i)
			}
			out = append(out, Named{Name: name, Policy: p})
		}
		return out
	}
	s.IdentityPolicies = named("identity", a.Identity)
	if a.Boundary != nil {
		s.PermissionBoundaryPolicies = named("boundary", []iamjudge.Document{*a.Boundary})
	}
	switch len(a.Session) {
	case 0:
	case 1:
		s.SessionPolicy, err = asJSON(a.Session[0])
	default:
		return s, fmt.Errorf("the simulator takes one session policy, not %d", len(a.Session))
	}
	if a.ResourcePolicy != nil {
		s.ResourcePolicy, err = asJSON(*a.ResourcePolicy)
	}
	for _, l := range a.SCPs {
		s.ServiceControlPolicies = append(s.ServiceControlPolicies, OrgPolicies{OrgIdentifier: l.ID, Policies: named("scp", l.Policies)})
	}
	for _, l := range a.RCPs {
		s.ResourceControlPolicies = append(s.ResourceControlPolicies, OrgPolicies{OrgIdentifier: l.ID, Policies: named("rcp", l.Policies)})
	}
	return s, err
}

// asJSON is d as the generic JSON the simulator reads. A trust policy
// stored without Resource stays without it.
func asJSON(d iamjudge.Document) (any, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// IsRoot says whether arn is an account's root user.
func IsRoot(arn string) bool {
	return strings.HasSuffix(arn, ":root") && strings.Contains(arn, ":iam::")
}
