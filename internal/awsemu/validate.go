package awsemu

import (
	"net/url"
	"strings"

	"github.com/regionctl/regionctl/internal/iamjudge/simulator"
)

// documentOf is the policy document a request installs, with its kind
// for the second judge's rules: a role's trust, an identity policy, a
// bucket policy, an organisation's SCP or RCP. ok is false for a request
// that installs none.
func documentOf(req *request, body []byte) (doc string, kind simulator.Kind, ok bool) {
	switch req.Service + ":" + req.Operation {
	case "iam:CreateRole":
		return req.str("AssumeRolePolicyDocument"), simulator.Trust, true
	case "iam:UpdateAssumeRolePolicy":
		return req.str("PolicyDocument"), simulator.Trust, true
	case "iam:PutRolePolicy", "iam:PutUserPolicy", "iam:CreatePolicy", "iam:CreatePolicyVersion":
		return req.str("PolicyDocument"), simulator.Identity, true
	case "s3:PutBucketPolicy":
		return string(body), simulator.Resource, true
	case "organizations:CreatePolicy", "organizations:UpdatePolicy":
		switch req.str("Type") {
		case "SERVICE_CONTROL_POLICY":
			return req.str("Content"), simulator.SCP, true
		case "RESOURCE_CONTROL_POLICY":
			return req.str("Content"), simulator.RCP, true
		}
	}
	return "", "", false
}

// validate holds the policy document a request installs to the second
// judge's reading of AWS's service data, and records what it finds in the
// ledger: a statement that grants nothing AWS would grant (an action on a
// resource type it does not authorize on, a condition key no action of it
// knows) is a mistake even when AWS accepts the document.
func (g *Gate) validate(p *principal, req *request, body []byte) {
	doc, kind, ok := documentOf(req, body)
	if !ok || doc == "" {
		return
	}
	if u, err := url.QueryUnescape(doc); err == nil && strings.HasPrefix(strings.TrimSpace(u), "{") {
		doc = u
	}
	entry := Entry{Principal: p.name(), Operation: req.Service + ":" + req.Operation, Action: "(document)", Resource: req.str("PolicyName") + req.str("RoleName") + req.str("Name") + req.Labels["Bucket"],
		Region: req.Region, Decision: "allow", Reason: "the " + string(kind) + " policy it installs, held to AWS's service data"}
	problems, err := g.second.Validate(kind, []byte(doc))
	if err != nil {
		problems = []string{"the second judge could not read it: " + err.Error()}
	}
	entry.Problems = problems
	g.ledger.add(entry)
}
