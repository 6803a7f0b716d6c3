package secrets

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	for _, c := range []struct {
		key, value, want string
	}{
		{"", "AKIAIOSFODNN7EXAMPLE", "an AWS access key id"},
		{"id", "ASIAY34FZKBOKMUTVV7A", "an AWS access key id"},
		{"", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "a private key"},
		{"", "-----BEGIN PRIVATE KEY-----", "a private key"},
		{"", "ghp_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token"},
		{"", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "a GitHub token"},
		{"", "glpat-abcdefghij0123456789", "a GitLab token"},
		{"", "xoxb-1234567890-abcdefghij", "a Slack token"},
		{"", "xoxb-0123456789", "a Slack token"}, // the shortest format: the length gate must let it through
		{"u", "s://a:b@h", "a password in a URL"},
		{"", "AIzaSyA-0123456789abcdefghijklmnopqrstu", "a Google API key"},
		{"", "sk_live_0123456789abcdefghijklmn", "a Stripe secret key"},
		{"url", "https://user:pa55word@git.example.com/fleet.git", "a password in a URL"},
		{"password", "correct horse battery staple", "a literal under the secret-named key password"},
		{"db_password", "Tr0ub4dor&3", "a literal under the secret-named key db_password"},
		{"clientSecret", "0123456789abcdef", "a literal under the secret-named key clientSecret"},
		{"client_secret", "0123456789abcdef", "a literal under the secret-named key client_secret"},
		{"dbPassword", "Tr0ub4dor&3", "a literal under the secret-named key dbPassword"},
		{"awsSecretAccessKey", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "a literal under the secret-named key awsSecretAccessKey"},
		{"apiToken", "0123456789abcdef", "a literal under the secret-named key apiToken"},
		// A value that only begins like a reference, or interpolates
		// around a literal, holds the literal.
		{"password", "ssm://x correct-horse-battery", "a literal under the secret-named key password"},
		{"password", "ssm:///path hunter22", "a literal under the secret-named key password"},
		{"token", "${region}-hunter2hunter2", "a literal under the secret-named key token"},
		{"password", "arn:aws:secretsmanager:us-east-1:111122223333:secret:db plaintext", "a literal under the secret-named key password"},
		// Shapes no format names (judged at scale by TestGitleaksCorpus).
		{"config", "db.host=x\npassword=Tr0ub4dor3x", "a secret assigned in the value"},
		{"headers", "Authorization: Bearer Zk9qLmN1TzRhYjU2", "a credential in an HTTP header"},
		{"note", "hvs.CAESIJ2kR9aLq0mZx7Tn4yUe", "a token with a vendor's prefix"},
		{"note", "q8ZxW3mN7rT2kL9pV4sB6yH1", "a random token"},
		{"note", "${{ env.X }} q8ZxW3mN7rT2kL9pV4sB6yH1", "a random token"},
		// Not secrets.
		{"note", "token: $slack-token", ""},
		{"path", "/spec/template/spec/affinity/podAntiAffinity/requiredDuringScheduling", ""},
		{"policy", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly", ""},
		{"digest", "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ""},
		{"ca", "-----BEGIN CERTIFICATE-----\nMIIF1zCCA7+gAwIBAgIUQdTcSHY2Sxd3Tq/v1eIEZPCNbOowDQYJ\n-----END CERTIFICATE-----", ""},
		{"password_ref", "arn:aws:secretsmanager:us-east-1:111122223333:secret:db-AbCdEf", ""},
		{"password", "ssm:///platform/db/password", ""},
		{"password", "ssm:///platform/${environment}/${region}/db", ""},
		{"passwordRef", "arn:aws:secretsmanager:${region}:111122223333:secret:db-AbCdEf", ""},
		{"token", "short", ""},
		// Interpolations name variables; an upper-case name with digits is
		// not a token.
		{"sha256sums-sha256", "${{ env.REGIONCTL_SHA256SUMS_SHA256 }}", ""},
		{"note", "${REGIONCTL_SHA256SUMS_SHA256}", ""},
		{"token_ttl", "3600", ""},
		{"repo_url", "https://git.example.com/fleet.git", ""},
		{"image", "registry.example.com/platform/api@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ""},
		{"ref", "arn:aws:iam::123456789012:role/ManagementClusterDeployRole", ""},
	} {
		if got := Find(c.key, c.value); got != c.want {
			t.Errorf("Find(%q, %q) = %q, want %q", c.key, c.value, got, c.want)
		}
	}
}

func TestMaskAndRedact(t *testing.T) {
	s := "clone https://bot:ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/x with AKIAIOSFODNN7EXAMPLE"
	if got := Mask(s); strings.Contains(got, "ghp_") || strings.Contains(got, "AKIA") || !strings.Contains(got, Redacted) {
		t.Errorf("Mask: %q", got)
	}
	if got := Redact("components.x.values.password", "Tr0ub4dor&3"); got != Redacted {
		t.Errorf("Redact a password: %q", got)
	}
	if got := Redact("components.x.values.replicas", "3"); got != "3" {
		t.Errorf("Redact a plain value: %q", got)
	}
}

// FuzzMaskIsTheExpressions: the strings that let a text be searched are in
// every match of their expression, so a gated Mask masks what running every
// expression over the text masks.
func FuzzMaskIsTheExpressions(f *testing.F) {
	for _, s := range []string{
		"AKIAIOSFODNN7EXAMPLE", "id: ASIAY34FZKBOKMUTVV7A,", "ABIA0123456789ABCDEF ACCA0123456789ABCDEF",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "-----BEGIN RSA PRIVATE KEY BLOCK-----",
		"ghp_0123456789abcdefghijABCDEFGHIJ012345", "gho_0123456789abcdefghijABCDEFGHIJ012345 ghu_0123456789abcdefghijABCDEFGHIJ012345",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "glpat-abcdefghij0123456789",
		"xoxb-1234567890-abcdefghij", "xoxp-0123456789", "AIzaSyA-0123456789abcdefghijklmnopqrstu",
		"rk_live_0123456789abcdefghijklmn sk_live_0123456789abcdefghijklmn",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"https://user:pa55word@git.example.com/fleet.git", "s://a:b@h",
		"+  node_max: 16 # config/sectors/sector-2.yaml\n", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := s
		for _, r := range formats {
			want = r.re.ReplaceAllString(want, Redacted)
		}
		if got := Mask(s); got != want {
			t.Errorf("Mask(%q) = %q, the expressions give %q", s, got, want)
		}
		for _, r := range formats {
			if r.re.MatchString(s) && !r.mayMatch(s) {
				t.Errorf("%s: %q matches but is not searched", r.name, s)
			}
		}
	})
}
