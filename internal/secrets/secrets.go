// Package secrets finds secret material written as plain text: well-known
// token and key formats anywhere, and literal values under keys named like
// secrets. regionctl refuses to render them (a secret belongs in a secret
// store, referenced by ssm:// or a Secrets Manager ARN), and never prints
// them.
//
// Entry points: Find (one value) and Mask.
package secrets

import (
	"regexp"
	"strings"
	"sync"
)

// AllowMarker, in a YAML line comment, marks a value that looks like a
// secret but is not one (a public key id, a test fixture).
const AllowMarker = "regionctl:not-a-secret"

type rule struct {
	name string
	re   *regexp.Regexp
	// any lists strings of which every match holds at least one, and all
	// strings every match holds: a text without them is not searched.
	// Most of the expressions begin with \b or a class, which leaves the
	// regexp package no literal prefix to look for first, and a review
	// masks the diff of every changed file.
	any, all []string
}

// formats are token and key formats whose shape alone gives them away.
var formats = []rule{
	{"an AWS access key id", regexp.MustCompile(`\b(AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`), []string{"AKIA", "ASIA", "ABIA", "ACCA"}, nil},
	{"a private key", regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY( BLOCK)?-----`), []string{"-----BEGIN", "-----begin"}, nil},
	{"a GitHub token", regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`), []string{"gh", "github_pat_"}, nil},
	{"a GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}\b`), nil, []string{"glpat-"}},
	{"a Slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}\b`), nil, []string{"xox"}},
	{"a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), nil, []string{"AIza"}},
	{"a Stripe secret key", regexp.MustCompile(`\b[rs]k_live_[0-9A-Za-z]{10,}\b`), nil, []string{"k_live_"}},
	{"a JSON Web Token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), nil, []string{"eyJ"}},
	{"a password in a URL", regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:[^/\s@]+@`), nil, []string{"://", "@"}},
}

// mayMatch reports whether s holds what every match of r holds.
func (r rule) mayMatch(s string) bool {
	for _, lit := range r.all {
		if !strings.Contains(s, lit) {
			return false
		}
	}
	if len(r.any) == 0 {
		return true
	}
	for _, lit := range r.any {
		if strings.Contains(s, lit) {
			return true
		}
	}
	return false
}

// secretKey matches the keys whose values are secrets by name.
var secretKey = regexp.MustCompile(`(?i)(^|[_.-])(password|passwd|passphrase|secret|secret_?key|token|api_?key|access_?key|private_?key|client_?secret|credentials?)$`)

// reference is a value that names a secret instead of holding it, as a
// whole: an SSM parameter's path, or the ARN of a Secrets Manager secret,
// an SSM parameter or a KMS key (${...} may stand in them). A value that
// only begins like one ("ssm://x hunter2") is not one.
var reference = regexp.MustCompile(`^(ssm:///?[A-Za-z0-9_.\-/${}]+|arn:aws[a-z-]*:(secretsmanager|ssm|kms):[a-z0-9${}-]*:([0-9]{12}|\$\{[a-z_]+\}):[A-Za-z0-9/_+=.@:${}-]+)$`)

// camelWord finds where a camelCase key's words meet (dbPassword,
// awsSecretAccessKey), so that they are split like snake_case ones.
var camelWord = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// Find reports what kind of secret value looks like (key is the map key it
// is set under, "" in a list), or "" when it looks like none.
func Find(key, value string) string {
	// Every format is at least 15 characters long but a URL's password
	// (8: a://b:c@), a value under a secret-named key is one from 8, a
	// random token from 16: shorter values (names, numbers) skip the
	// expressions, which the loader would otherwise run on every string.
	if len(value) < 8 {
		return ""
	}
	// The rest is remembered: a fleet's values repeat from file to file
	// (a region's CIDRs, an image, a chart's revision).
	k := found{key, value}
	if what, ok := seen.Load(k); ok {
		return what.(string)
	}
	what := find(key, value)
	seen.Store(k, what)
	return what
}

// found is what Find was asked about; seen holds its answers.
type found struct{ key, value string }

var seen sync.Map

// find is Find's answer, reached afresh.
func find(key, value string) string {
	if len(value) >= 15 || strings.Contains(value, "@") {
		for _, r := range formats {
			if r.mayMatch(value) && r.re.MatchString(value) {
				return r.name
			}
		}
	}
	if len(strings.TrimSpace(value)) >= 8 && secretNamed(key) && !reference.MatchString(value) {
		return "a literal under the secret-named key " + key
	}
	if len(value) >= 16 {
		if what := findShape(value); what != "" {
			return what
		}
	}
	return ""
}

// secretNamed says key names a secret (its camelCase words split like
// snake_case ones), remembered per key: a fleet has few keys, set in many
// files.
func secretNamed(key string) bool {
	if key == "" {
		return false
	}
	if named, ok := namedKeys.Load(key); ok {
		return named.(bool)
	}
	named := secretKey.MatchString(camelWord.ReplaceAllString(key, "${1}_${2}"))
	namedKeys.Store(key, named)
	return named
}

var namedKeys sync.Map

// Mask replaces every well-known secret format in s with a mark, for
// messages and outputs that may quote a value.
func Mask(s string) string {
	for _, r := range formats {
		if r.mayMatch(s) {
			s = r.re.ReplaceAllString(s, Redacted)
		}
	}
	return s
}

// Redact is value as it may be shown under the dotted path: "[secret
// redacted]" when it looks like a secret, else with any well-known secret
// format in it masked.
func Redact(path, value string) string {
	key := path
	if i := strings.LastIndexAny(path, "."); i >= 0 {
		key = path[i+1:]
	}
	if Find(key, value) != "" {
		return Redacted
	}
	return Mask(value)
}

// Redacted replaces a secret wherever regionctl would show it.
const Redacted = "[secret redacted]"
