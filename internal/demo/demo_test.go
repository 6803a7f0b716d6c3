package demo

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestAFailedDemoKeepsItsLogs: a demo that fails keeps its working copy,
// names where its logs are, and offers no resume (its emulator is gone).
func TestAFailedDemoKeepsItsLogs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var out bytes.Buffer
	// A root without config/: the demo fails before it starts anything.
	err := Run(context.Background(), Options{Root: t.TempDir(), Region: "eu-west-1"}, &out)
	if err == nil {
		t.Fatal("the demo of an empty root succeeded")
	}
	m := regexp.MustCompile(`kept its working copy (\S+) `).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "nothing above can be resumed; run make demo again") {
		t.Fatalf("the failure says:\n%s", out.String())
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("the working copy it names is gone: %v", err)
	}
}

// TestTheDelegationChecksRefuseWhatTheModuleMustNotDo: the demo's checks of
// the two regional applies fail on the states the api-gateway module must
// not leave (something that waits for the certificate made before the
// delegation, an endpoint for an API not served, nothing served after it).
func TestTheDelegationChecksRefuseWhatTheModuleMustNotDo(t *testing.T) {
	made := func(extra ...string) map[string]bool {
		m := map[string]bool{"aws_route53_zone.api": true, "aws_acm_certificate.api": true, "aws_route53_record.validation": true, "aws_apigatewayv2_api.this": true,
			"aws_acm_certificate.broker": true, "aws_route53_record.broker_validation": true}
		for _, r := range extra {
			m[r] = true
		}
		return m
	}
	ns := []string{"ns-1.awsdns-00.com"}
	if err := checkUndelegated(&regionalState{resources: made(), nameServers: ns}); err != nil {
		t.Errorf("a correct undelegated apply refused: %v", err)
	}
	for name, s := range map[string]*regionalState{
		"validation made":    {resources: made("aws_acm_certificate_validation.api"), nameServers: ns},
		"listener made":      {resources: made("aws_lb_listener.https"), nameServers: ns},
		"broker served":      {resources: made("aws_iot_domain_configuration.broker"), nameServers: ns},
		"endpoint handed on": {resources: made(), nameServers: ns, endpoint: "https://api.example.com"},
		"no name servers":    {resources: made()},
	} {
		if err := checkUndelegated(s); err == nil {
			t.Errorf("%s: passed", name)
		}
	}
	all := made(served...)
	if err := checkDelegated(&regionalState{resources: all, endpoint: "https://api.example.com"}); err != nil {
		t.Errorf("a serving apply refused: %v", err)
	}
	if err := checkDelegated(&regionalState{resources: made(served[1:]...), endpoint: "https://api.example.com"}); err == nil {
		t.Error("an apply without the certificate's validation passed")
	}
	if err := checkDelegated(&regionalState{resources: made(served[:len(served)-1]...), endpoint: "https://api.example.com"}); err == nil {
		t.Error("an apply without the broker's name passed")
	}
}

func TestSetDelegatedEditsTheRegionsFile(t *testing.T) {
	work := t.TempDir()
	if err := os.MkdirAll(work+"/config/regions", 0o755); err != nil {
		t.Fatal(err)
	}
	p := work + "/config/regions/eu-west-1.yaml"
	if err := os.WriteFile(p, []byte("sector: stage\nplatform_api:\n  domain: api.example.com\n  zone_delegated: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setDelegated(work, "eu-west-1", false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "sector: stage\nplatform_api:\n  domain: api.example.com\n  zone_delegated: false\n" {
		t.Errorf("the region's file: %q", b)
	}
	if err := setDelegated(work, "us-east-1", true); err == nil {
		t.Error("a region without a file was edited")
	}
}
