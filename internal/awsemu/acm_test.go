package awsemu_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/regionctl/regionctl/internal/awsemu"
)

// acmCall makes one signed call of ACM's JSON protocol through the gate,
// as the root user of the default account.
func acmCall(t *testing.T, g *awsemu.Gate, operation string, in any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "CertificateManager."+operation)
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: awsemu.AccessKeyID, SecretAccessKey: awsemu.SecretAccessKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "acm", "eu-west-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", operation, resp.StatusCode, b)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v: %s", operation, err, b)
	}
	return out
}

// TestACMIssuesOnlyWhatPublicDNSReaches: moto issues a DNS-validated
// certificate after a fixed wait whatever DNS holds; ACM issues it only once
// its validation record resolves publicly, which a zone nobody delegates
// never does (ACM User Guide, "DNS validation"). With the model on, the
// gate answers as ACM: PENDING_VALIDATION until a parent delegates the
// name, ISSUED after; a name under a delegated parent is reached too.
func TestACMIssuesOnlyWhatPublicDNSReaches(t *testing.T) {
	g := gate(t)
	var delegated sync.Map // the gate asks from its own goroutines
	g.ModelPublicDNS(func(name string) bool { _, ok := delegated.Load(name); return ok })
	status := func(arn string) (string, string) {
		d := acmCall(t, g, "DescribeCertificate", map[string]string{"CertificateArn": arn})
		cert, _ := d["Certificate"].(map[string]any)
		opts, _ := cert["DomainValidationOptions"].([]any)
		var opt string
		if len(opts) == 1 {
			opt, _ = opts[0].(map[string]any)["ValidationStatus"].(string)
		}
		s, _ := cert["Status"].(string)
		return s, opt
	}
	arn := acmCall(t, g, "RequestCertificate", map[string]string{"DomainName": "api.eu-west-1.example.com", "ValidationMethod": "DNS"})["CertificateArn"].(string)
	other := acmCall(t, g, "RequestCertificate", map[string]string{"DomainName": "api.us-east-1.platform.example.org", "ValidationMethod": "DNS"})["CertificateArn"].(string)
	// moto's wait (MOTO_ACM_VALIDATION_WAIT=1, awsemu.Start) passes.
	time.Sleep(1500 * time.Millisecond)
	if s, o := status(arn); s != "PENDING_VALIDATION" || o != "PENDING_VALIDATION" {
		t.Fatalf("undelegated: certificate %s, validation %s; want PENDING_VALIDATION (ACM never reaches the record)", s, o)
	}
	delegated.Store("api.eu-west-1.example.com", true)
	delegated.Store("platform.example.org", true)
	if s, o := status(arn); s != "ISSUED" || o != "SUCCESS" {
		t.Errorf("delegated: certificate %s, validation %s; want ISSUED, SUCCESS", s, o)
	}
	if s, _ := status(other); s != "ISSUED" {
		t.Errorf("under a delegated parent: certificate %s, want ISSUED", s)
	}
	// Without the model, moto's answer stands.
	g.ModelPublicDNS(nil)
	if s, _ := status(other); s != "ISSUED" {
		t.Errorf("no model: certificate %s, want moto's ISSUED", s)
	}
}
