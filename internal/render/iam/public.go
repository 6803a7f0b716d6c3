package iam

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// S3's definition of a public bucket policy, which Block Public Access
// holds every PutBucketPolicy to (BlockPublicPolicy refuses a public one):
// the Amazon S3 User Guide, "The meaning of public", Bucket policies
// (docs.aws.amazon.com/AmazonS3/latest/userguide/access-control-block-public-access.html#access-control-block-public-access-policy-status;
// awsdocs/amazon-s3-userguide doc_source/access-control-block-public-access.md).
// A policy is public unless each statement that allows grants access only
// to fixed values (no wildcard, no IAM policy variable) of a principal or
// of one of these condition keys.
var nonPublicKeys = map[string]bool{
	// "An AWS principal, user, role, or service principal (e.g.
	// aws:PrincipalOrgID)".
	"aws:principalorgid": true, "aws:principalaccount": true, "aws:principalarn": true,
	"aws:sourcearn": true, "aws:sourcevpc": true, "aws:sourcevpce": true, "aws:sourceowner": true,
	"aws:sourceaccount": true, "s3:x-amz-server-side-encryption-aws-kms-key-id": true,
	"aws:userid": true, "s3:dataaccesspointarn": true, "s3:dataaccesspointaccount": true,
	"aws:sourceip": true,
}

// limitingOperators compare a key with the values given, so that fixed
// values limit who is granted. Negated operators, and ...IfExists ones
// (true when the key is absent), limit nothing.
var limitingOperators = regexp.MustCompile(`^(ForAnyValue:|ForAllValues:)?(StringEquals|StringEqualsIgnoreCase|StringLike|ArnEquals|ArnLike|IpAddress)$`)

// roleIDPattern is aws:userid's "AROLEID:*": a role's sessions, whoever.
var roleIDPattern = regexp.MustCompile(`^AROA[A-Z0-9]+:\*$`)

// PublicStatement is the Sid (or the index) of the first statement that
// makes doc public by S3's definition, and why; "" when doc is not public.
// Terraform's template placeholders (${organization_id}) count as fixed:
// they are literals once applied; AWS policy variables (${aws:...}) do not.
func PublicStatement(doc Document) (string, string) {
	for i, s := range doc.Statement {
		if s.Effect != "Allow" || s.Principal == nil {
			continue
		}
		if why := publicGrant(s); why != "" {
			name := s.Sid
			if name == "" {
				name = fmt.Sprintf("statement %d", i)
			}
			return name, why
		}
	}
	return "", ""
}

func publicGrant(s Statement) string {
	p := s.Principal
	wide := p.Any || len(p.Federated) > 0
	for _, a := range p.AWS {
		wide = wide || !fixed(a)
	}
	for _, svc := range p.Service {
		wide = wide || !fixed(svc)
	}
	if !wide {
		return ""
	}
	for op, keys := range s.Condition {
		if !limitingOperators.MatchString(op) {
			continue
		}
		for key, values := range keys {
			if nonPublicKeys[strings.ToLower(key)] && len(values) > 0 && allFixed(strings.ToLower(key), values) {
				return ""
			}
		}
	}
	return "it grants a principal that is not fixed (\"*\", a wildcard or a policy variable) with no condition that fixes one of S3's keys (aws:PrincipalOrgID, aws:PrincipalAccount, aws:SourceArn, aws:SourceAccount, aws:SourceVpc, aws:SourceVpce, ...) to values without a wildcard or policy variable"
}

func allFixed(key string, values Strings) bool {
	for _, v := range values {
		switch {
		case key == "aws:sourceip":
			if !narrowCIDR(v) {
				return false
			}
		case key == "aws:userid" && roleIDPattern.MatchString(v):
			return false
		case !fixed(v):
			return false
		}
	}
	return true
}

// fixed is a value without a wildcard or an IAM policy variable.
func fixed(v string) bool {
	if strings.ContainsAny(v, "*?") {
		return false
	}
	for rest := v; ; {
		i := strings.Index(rest, "${")
		if i < 0 {
			return true
		}
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 || strings.Contains(rest[i:i+end], ":") {
			return false // ${aws:...}, ${s3:...}: a policy variable
		}
		rest = rest[i+end+1:]
	}
}

// narrowCIDR: S3 counts an aws:SourceIp range broader than /8 (IPv4) or
// /32 (IPv6) as public, but for RFC 1918's private ranges.
func narrowCIDR(v string) bool {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		a, err := netip.ParseAddr(v)
		return err == nil && a.IsValid()
	}
	if p.Addr().IsPrivate() {
		return true
	}
	if p.Addr().Is4() {
		return p.Bits() >= 8
	}
	return p.Bits() >= 32
}
