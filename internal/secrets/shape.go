package secrets

import (
	"encoding/base64"
	"math"
	"regexp"
	"strings"
)

// The shapes below find secrets no single format names: a random token
// (by its entropy and mix of characters), a secret assigned inside a value
// (a config file or a header pasted into a Helm value), and a token behind
// a vendor's prefix. They are judged by testdata/gitleaks-corpus.jsonl,
// secret shapes that gitleaks' rules find (TestGitleaksCorpus), and by the
// values of the example fleets, none of which they may take for a secret.

// token is a run of the characters random tokens are made of.
var token = regexp.MustCompile(`[A-Za-z0-9_+/=~.-]{20,}`)

// assigned is a secret-named word given a value inside a value:
// "password=…", "api_key: …", "Authorization: Bearer …".
var assigned = regexp.MustCompile(`(?i)(?:^|[^a-z])(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|client[_-]?secret|credentials?|private[_-]?key)["']?\s*[:=]+\s*["']?([^\s"'&;,\[\]\\]{8,})`)

// bearer is an HTTP credential: in an Authorization header, after its
// scheme, or given to curl as user:password.
var bearer = regexp.MustCompile(`(?i)(?:authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token)\s*)?|\b(?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})|(?:\s--user|\s-u)[\s=]+["']?([^\s"':]*:[^\s"']+)`)

// vendorPrefix is a token behind a prefix that says whose secret it is.
var vendorPrefix = regexp.MustCompile(`(?:^|[^A-Za-z0-9])(?:` + strings.Join([]string{
	`sk-(?:ant|proj|svcacct|admin)-`, `pplx-`, `hf_`, `api_org_`, `npm_`, `pypi-`, `gl(?:pat|cbt|dt|ft|imt|agent|oas|ptt|rt|soat|ffct)-`, `GR1348941`,
	`do[opr]_v1_`, `dp\.(?:pt|st|ct|scim|audit)\.`, `hv[sb]\.`, `shp(?:at|ca|pa|ss)_`, `sntry[su]_`, `xkeysib-`, `xapp-`, `SG\.`,
	`pscale_(?:tkn|oauth|pw)_`, `PMAK-`, `pnu_`, `rdme_`, `rubygems_`, `lin_(?:api|oauth)_`, `ntn_`, `NR(?:AK|II|JS)-`, `ATATT`,
	`dapi`, `duffel_(?:live|test)_`, `EZ[AT]K`, `FLW(?:SECK|PUBK)_`, `fio-u-`, `gl(?:c|sa)_`, `sm_[aps]at_`, `CLOJARS_`, `DNKEY-`,
	`AGE-SECRET-KEY-1`, `ops_eyJ`, `ABSK`, `bedrock-api-key-`, `LTAI`, `AKCp`, `cmVmdGtu`, `ico-`, `tk-us-`, `fm[12][ar]?_`,
	`shippo_(?:live|test)_`, `pul-`, `[rs]k_(?:live|test)_`, `whsec_`, `xox[abeoprs]-`, `dt0c01\.`, `sq0(?:atp|csp)-`,
	`AccountKey=`, `SharedAccessKey=`, `_gitlab_session=`, `sha256~`, `PSCALE_PW_`, `GLC_`, `GLSA_`, `SQA_`, `SGP_`, `HRKU-`,
	`KEY-`, `PUBKEY-`, `TFP_`, `LIVE_`, `TEST_`, `NPM_`, `EAAA`, `EAAM`, `AAAAAAAAAAAAAAAAAAAAA`,
}, "|") + `)[A-Za-z0-9_+/=.~-]{12,}`)

// exact are tokens whose whole shape is a vendor's.
var exact = regexp.MustCompile(`\b(?:A3-[A-Z0-9]{6}-[A-Z0-9]{11}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}|API-[A-Z0-9]{26}|SK[0-9a-fA-F]{32}|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}|A3T[A-Z0-9][A-Z2-7]{16})\b`)

// interpolation is a reference to a variable by name (${{ env.NAME }},
// ${NAME}, $(params.name)): names, never secret material, however random
// an upper-case name with digits looks.
var interpolation = regexp.MustCompile(`\$\{\{\s*[A-Za-z_][A-Za-z0-9_.\-]*\s*\}\}|\$\{[A-Za-z_][A-Za-z0-9_.]*\}|\$\([A-Za-z_][A-Za-z0-9_.\-]*\)`)

// findShape reports what kind of secret value holds by shape alone, or "".
func findShape(value string) string {
	if reference.MatchString(value) || strings.HasPrefix(value, "arn:") {
		return ""
	}
	if exact.MatchString(value) {
		return "a token with a vendor's shape"
	}
	if m := assigned.FindStringSubmatch(value); m != nil && !placeholder(m[1]) {
		return "a secret assigned in the value"
	}
	if m := bearer.FindStringSubmatch(value); m != nil && !placeholder(m[1]+m[2]) {
		return "a credential in an HTTP header"
	}
	if vendorPrefix.MatchString(value) {
		return "a token with a vendor's prefix"
	}
	if publicText(value) {
		return ""
	}
	for _, t := range token.FindAllString(interpolation.ReplaceAllString(value, " "), -1) {
		if randomToken(t) {
			return "a random token"
		}
	}
	return ""
}

// placeholder is a value that stands in for a secret: a template, an
// interpolation, a reference.
func placeholder(v string) bool {
	return strings.Contains(v, "${") || strings.Contains(v, "{{") || strings.Contains(v, "$(") || strings.HasPrefix(v, "<") || strings.HasPrefix(v, "$") ||
		strings.HasPrefix(v, "ssm:") || strings.HasPrefix(v, "arn:") || strings.Trim(strings.ToLower(v), "x*.-") == ""
}

// randomToken reports whether t looks drawn at random: long, of upper and
// lower case letters and digits, with high entropy, and none of the random
// looking things a config holds without being secret (hex digests and
// commit ids, base64 of certificates and public keys).
func randomToken(t string) bool {
	core := strings.Trim(t, "=.-_~")
	if len(core) < 20 {
		return false
	}
	var lower, upper, digit int
	for _, r := range core {
		switch {
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= '0' && r <= '9':
			digit++
		}
	}
	if lower == 0 || upper == 0 || digit == 0 || isHex(core) {
		return false
	}
	if entropy(core) < 4.0 || !randomSegment(core) {
		return false
	}
	return !publicMaterial(core)
}

// randomSegment reports whether t, split where names split (/ . _ ~ + = -),
// has a part of ten or more characters that mixes two of upper case, lower
// case and digits: a token has one, a path or name of words
// (stack/StackSet-regionctl-deploy-role-us-west-2) does not.
func randomSegment(t string) bool {
	for _, part := range strings.FieldsFunc(t, func(r rune) bool { return strings.ContainsRune("/._~+=-", r) }) {
		if len(part) < 10 {
			continue
		}
		var classes [3]bool
		for _, r := range part {
			switch {
			case r >= 'a' && r <= 'z':
				classes[0] = true
			case r >= 'A' && r <= 'Z':
				classes[1] = true
			case r >= '0' && r <= '9':
				classes[2] = true
			}
		}
		n := 0
		for _, c := range classes {
			if c {
				n++
			}
		}
		if n >= 2 && !wordy(part) {
			return true
		}
	}
	return false
}

// wordy reports whether most of s is runs of three or more lower case
// letters, as in a CamelCase name (AmazonEC2ContainerRegistryReadOnly);
// in a random token such runs are rare.
func wordy(s string) bool {
	inRuns, run := 0, 0
	flush := func() {
		if run >= 3 {
			inRuns += run
		}
		run = 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' {
			run++
			continue
		}
		flush()
	}
	flush()
	return 2*inRuns >= len(s)
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' || r == '-') {
			return false
		}
	}
	return true
}

// entropy is the Shannon entropy of s, in bits per character.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// publicText is a value whose random looking runs are public by design:
// PEM certificates and public keys (a private key is a format of its own),
// password hashes (bcrypt's $2a$...).
func publicText(v string) bool {
	if strings.Contains(v, "-----BEGIN") && !strings.Contains(strings.ToUpper(v), "PRIVATE KEY") {
		return true
	}
	return strings.Contains(v, "$2a$") || strings.Contains(v, "$2b$") || strings.Contains(v, "$2y$")
}

// publicMaterial is base64 of what is public by design: a certificate, a
// public key, an SSH public key, an image. Only the first bytes are read.
func publicMaterial(s string) bool {
	head := s
	if len(head) > 24 {
		head = head[:24]
	}
	b, err := base64.StdEncoding.DecodeString(head[:len(head)/4*4])
	if err != nil {
		return false
	}
	text := string(b)
	for _, p := range []string{"-----BEGIN CERTIFICATE", "-----BEGIN PUBLIC", "-----BEGIN RSA PUBLIC", "-----BEGIN PGP PUBLIC", "\x00\x00\x00\x07ssh-rsa", "\x00\x00\x00\x0bssh-ed2551", "\x00\x00\x00\x13ecdsa-sha2", "\x89PNG", "GIF8", "\xff\xd8\xff", "<svg", "<?xml"} {
		if strings.HasPrefix(text, p) || strings.HasPrefix(p, text) && len(text) >= 6 {
			return true
		}
	}
	return false
}
