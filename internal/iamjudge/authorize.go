package iamjudge

import "fmt"

// Authorization is everything AWS weighs to decide one request on one
// resource: the caller's identity policies, its permissions boundary, the
// session policies it was given, and the resource's own policy (a role's
// trust policy, a bucket policy).
type Authorization struct {
	Request
	// Root says the caller is an account's root user: its identity allows
	// everything in its own account, and no boundary applies.
	Root     bool
	Identity []Document
	Boundary *Document
	Session  []Document
	// ResourcePolicy is the resource's own policy; nil when it has none.
	ResourcePolicy *Document
	// ResourceAccount owns the resource; empty means the caller's account
	// (or an action without a resource).
	ResourceAccount string
	// TrustRequired marks actions that only a resource policy can grant:
	// assuming a role (sts:AssumeRole*, sts:TagSession on the role) needs
	// the role's trust policy to allow the caller, whatever its identity
	// policies say.
	TrustRequired bool
	// SCPs are the service control policies over the caller's account, a
	// level each from the organisation's root down to the account itself.
	// Leave them empty for a caller outside an organisation, in its
	// management account, or a service-linked role: SCPs do not limit
	// those.
	SCPs []OrgLevel
	// RCPs are the resource control policies over the resource's account,
	// likewise; empty for a resource outside an organisation or in its
	// management account, or a caller that is a service-linked role.
	RCPs []OrgLevel
}

// OrgLevel is the control policies attached to one level of an
// organisation: its root, an OU, or an account.
type OrgLevel struct {
	ID       string
	Policies []Document
}

// Verdict is a decision with the reason AWS would give.
type Verdict struct {
	Decision Decision
	// Reason completes "... is not authorized to perform: A on resource: R
	// because ..." for a denial, and names the deciding statement of an
	// allow.
	Reason string
}

// Authorize decides a as AWS's policy evaluation logic does:
//
//  1. an explicit deny in any applicable policy (identity, boundary,
//     session, resource, the organisation's SCPs and RCPs) denies, and
//     so does an SCP level that allows nothing of the request;
//  2. within one account, an allow in the resource policy that names the
//     caller itself, or an allow of the identity policies (limited by the
//     boundary and the session policies), allows;
//  3. across accounts, both the identity policies and the resource policy
//     must allow;
//  4. a role can be assumed only when its trust policy allows the caller;
//     a trust that names only the caller's account also needs the
//     caller's identity policies to allow it.
func Authorize(a Authorization) Verdict {
	kinds := []struct {
		name string
		docs []Document
	}{{"identity-based policy", a.Identity}, {"session policy", a.Session}}
	if a.Boundary != nil {
		kinds = append(kinds, struct {
			name string
			docs []Document
		}{"permissions boundary", []Document{*a.Boundary}})
	}
	if a.ResourcePolicy != nil {
		kinds = append(kinds, struct {
			name string
			docs []Document
		}{"resource-based policy", []Document{*a.ResourcePolicy}})
	}
	for _, k := range kinds {
		if d, m := evaluate(a.Request, k.docs...); d == ExplicitDeny {
			return Verdict{ExplicitDeny, fmt.Sprintf("with an explicit deny in a %s (%s)", k.name, m.name())}
		}
	}
	// The organisation's guardrails ("Policy evaluation logic": SCPs and
	// RCPs are evaluated before the account's own policies). An explicit
	// deny at any level denies; an SCP level with no allow denies
	// implicitly. RCPs are evaluated the same way; every level holds AWS's
	// RCPFullAWSAccess unless it is detached, which Organizations does
	// not allow, so a level of Deny statements only still allows.
	for _, g := range []struct {
		name   string
		levels []OrgLevel
		full   bool
	}{{"service control policy", a.SCPs, false}, {"resource control policy", a.RCPs, true}} {
		for _, l := range g.levels {
			d, m := evaluate(a.Request, l.Policies...)
			switch {
			case d == ExplicitDeny:
				return Verdict{ExplicitDeny, fmt.Sprintf("with an explicit deny in a %s (%s, attached to %s)", g.name, m.name(), l.ID)}
			case d != Allow && !g.full:
				return Verdict{ImplicitDeny, fmt.Sprintf("no %s attached to %s allows the %s action", g.name, l.ID, a.Action)}
			}
		}
	}

	boundaryOK := a.Root || a.Boundary == nil || Evaluate(a.Request, *a.Boundary) == Allow
	sessionOK := true
	for _, s := range a.Session {
		sessionOK = sessionOK && Evaluate(a.Request, s) == Allow
	}
	idDecision, idMatch := evaluate(a.Request, a.Identity...)
	identity := (a.Root || idDecision == Allow) && boundaryOK && sessionOK

	var rp match
	rpAllows := false
	if a.ResourcePolicy != nil {
		var d Decision
		d, rp = evaluate(a.Request, *a.ResourcePolicy)
		rpAllows = d == Allow
	}
	// A resource policy naming the role (not the session) is still limited
	// by the session's boundary and session policies.
	direct := rpAllows && (rp.session || rp.direct && boundaryOK && sessionOK)
	sameAccount := a.ResourceAccount == "" || a.ResourceAccount == a.Caller.Account

	why := func() string {
		switch {
		case !boundaryOK:
			return "no permissions boundary allows the " + a.Action + " action"
		case !sessionOK:
			return "no session policy allows the " + a.Action + " action"
		}
		return "no identity-based policy allows the " + a.Action + " action"
	}
	allowBy := func(m match, kind string) Verdict {
		return Verdict{Allow, fmt.Sprintf("allowed by a %s (%s)", kind, m.name())}
	}
	switch {
	case a.Caller == Anonymous:
		// Public access: a resource policy alone decides, and only one that
		// names every principal ("*") can name this caller.
		if direct {
			return allowBy(rp, "resource-based policy")
		}
		return Verdict{ImplicitDeny, "no resource-based policy allows the " + a.Action + " action to anonymous callers"}
	case a.Root && a.Action == "sts:AssumeRole":
		// STS API Reference, AssumeRole: "You cannot use AWS account root
		// user credentials to call AssumeRole."
		return Verdict{ImplicitDeny, "the root user of an account cannot call sts:AssumeRole"}
	case a.TrustRequired:
		if !rpAllows {
			return Verdict{ImplicitDeny, "no resource-based policy (the role's trust policy) allows the " + a.Action + " action"}
		}
		if sameAccount && direct {
			return allowBy(rp, "resource-based policy")
		}
		if !identity {
			return Verdict{ImplicitDeny, why()}
		}
		return allowBy(rp, "resource-based policy")
	case sameAccount:
		if direct {
			return allowBy(rp, "resource-based policy")
		}
		if identity {
			if a.Root {
				return Verdict{Allow, "allowed: the caller is the account's root user"}
			}
			return allowBy(idMatch, "identity-based policy")
		}
		return Verdict{ImplicitDeny, why()}
	default:
		if !identity {
			return Verdict{ImplicitDeny, why()}
		}
		if !rpAllows {
			return Verdict{ImplicitDeny, "no resource-based policy allows the " + a.Action + " action from another account"}
		}
		return allowBy(rp, "resource-based policy")
	}
}

// name names a matched statement: the document's Id and the statement's
// Sid, as far as they are set.
func (m match) name() string {
	if m.stmt == nil {
		return "root"
	}
	id, sid := "", m.stmt.Sid
	if m.doc != nil {
		id = m.doc.ID
	}
	switch {
	case id != "" && sid != "":
		return id + "/" + sid
	case sid != "":
		return sid
	case id != "":
		return id
	}
	return "unnamed statement"
}
