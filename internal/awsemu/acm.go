package awsemu

import (
	"encoding/json"
	"strings"
	"sync/atomic"
)

// publicDNS is the gate's model of what public DNS reaches, for ACM's DNS
// validation: moto issues a requested certificate after a fixed wait
// whatever DNS holds (MOTO_ACM_VALIDATION_WAIT), while ACM issues it only
// once its validation record resolves publicly, and keeps it
// PENDING_VALIDATION for up to 72 hours before VALIDATION_TIMED_OUT (ACM
// User Guide, "DNS validation"; API Reference, CertificateDetail.Status).
// A record in a zone that no parent delegates never resolves.
type publicDNS struct {
	delegated atomic.Pointer[func(name string) bool]
}

// ModelPublicDNS makes the gate answer ACM as AWS would when only the names
// delegated says yes to are reachable from public DNS (a name is reached
// when it or a parent domain of it is delegated): a DNS-validated
// certificate for any other name stays PENDING_VALIDATION, whatever moto
// says. Without it the gate passes moto's answer on (every name reached).
func (g *Gate) ModelPublicDNS(delegated func(name string) bool) {
	if delegated == nil {
		g.dns.delegated.Store(nil)
		return
	}
	g.dns.delegated.Store(&delegated)
}

// reached says whether public DNS reaches name under the model.
func (d *publicDNS) reached(name string) bool {
	f := d.delegated.Load()
	if f == nil {
		return true
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	for {
		if (*f)(name) {
			return true
		}
		i := strings.IndexByte(name, '.')
		if i < 0 {
			return false
		}
		name = name[i+1:]
	}
}

// mendCertificate rewrites DescribeCertificate's answer for a certificate
// whose DNS validation public DNS cannot reach: the certificate and each
// unreached name are PENDING_VALIDATION, and it has no issue date.
func (d *publicDNS) mendCertificate(req *request, answer []byte) []byte {
	if req.Service != "acm" || req.Operation != "DescribeCertificate" || d.delegated.Load() == nil {
		return answer
	}
	var doc map[string]any
	if json.Unmarshal(answer, &doc) != nil {
		return answer
	}
	cert, _ := doc["Certificate"].(map[string]any)
	if cert == nil || cert["Type"] != "AMAZON_ISSUED" || cert["Status"] != "ISSUED" {
		return answer
	}
	pending := false
	opts, _ := cert["DomainValidationOptions"].([]any)
	for _, o := range opts {
		o, _ := o.(map[string]any)
		if o == nil || o["ValidationMethod"] != "DNS" {
			continue
		}
		if name, _ := o["DomainName"].(string); !d.reached(name) {
			o["ValidationStatus"] = "PENDING_VALIDATION"
			pending = true
		}
	}
	if !pending {
		return answer
	}
	cert["Status"] = "PENDING_VALIDATION"
	delete(cert, "IssuedAt")
	delete(cert, "NotBefore")
	delete(cert, "NotAfter")
	out, err := json.Marshal(doc)
	if err != nil {
		return answer
	}
	return out
}
