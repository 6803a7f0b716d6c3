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
		// Not secrets.
		{"password_ref", "arn:aws:secretsmanager:us-east-1:111122223333:secret:db-AbCdEf", ""},
		{"password", "ssm:///platform/db/password", ""},
		{"token", "${cluster}-token-ref", ""},
		{"token", "short", ""},
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
