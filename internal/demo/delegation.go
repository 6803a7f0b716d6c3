package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/fleet"
)

// publicDNS is the demo's public DNS: the zones the fleet in work says a
// parent delegates (fleet.DelegatedZones), read again after each change of
// config/, so that the gate's ACM issues a certificate exactly where an
// operator's NS records would let it (awsemu.Gate.ModelPublicDNS).
type publicDNS struct {
	work  string
	zones atomic.Pointer[map[string]bool]
}

// model puts dns in front of gate's ACM, as config/ in work says now.
func (d *publicDNS) model(gate *awsemu.Gate) error {
	if err := d.read(); err != nil {
		return err
	}
	gate.ModelPublicDNS(func(name string) bool { return (*d.zones.Load())[name] })
	return nil
}

// read reads config/ in work again.
func (d *publicDNS) read() error {
	zones, err := fleet.DelegatedZonesOf(os.DirFS(d.work))
	if err != nil {
		return err
	}
	d.zones.Store(&zones)
	return nil
}

var zoneDelegated = regexp.MustCompile(`(?m)^([ \t]+zone_delegated:[ \t]*)(true|false)[ \t]*$`)

// setDelegated sets platform_api.zone_delegated in region's file of the
// fleet in work, as an operator does once the parent domain holds the
// zone's NS records (or, false, as a new region starts).
func setDelegated(work, region string, on bool) error {
	p := filepath.Join(work, "config", "regions", region+".yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if !zoneDelegated.Match(b) {
		return fmt.Errorf("%s sets no platform_api.zone_delegated", p)
	}
	return os.WriteFile(p, zoneDelegated.ReplaceAll(b, []byte(fmt.Sprintf("${1}%v", on))), 0o644)
}

// regionalState is what the regional cluster's state says of the platform
// API: its endpoint output, the delegation output and which of the
// api-gateway module's resources exist.
type regionalState struct {
	endpoint    string
	zone        string
	nameServers []string
	resources   map[string]bool // type.name in module.api_gateway
}

func readRegionalState(ctx context.Context, cfg aws.Config, region string) (*regionalState, error) {
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle, o.DisableLogOutputChecksumValidationSkipped = true, true })
	obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("regionctl-tfstate-" + region + "-regional"), Key: aws.String("regional-cluster/" + region + "/regional.tfstate")})
	if err != nil {
		return nil, fmt.Errorf("reading the regional cluster's state: %w", err)
	}
	defer obj.Body.Close()
	var state struct {
		Outputs map[string]struct {
			Value json.RawMessage `json:"value"`
		} `json:"outputs"`
		Resources []struct {
			Module, Type, Name string
		} `json:"resources"`
	}
	if err := json.NewDecoder(obj.Body).Decode(&state); err != nil {
		return nil, err
	}
	s := &regionalState{resources: map[string]bool{}}
	_ = json.Unmarshal(state.Outputs["platform_api_endpoint"].Value, &s.endpoint)
	var delegation struct {
		Zone        string   `json:"zone"`
		NameServers []string `json:"name_servers"`
	}
	if err := json.Unmarshal(state.Outputs["platform_api_delegation"].Value, &delegation); err != nil {
		return nil, fmt.Errorf("the regional state has no platform_api_delegation output: %w", err)
	}
	s.zone, s.nameServers = delegation.Zone, delegation.NameServers
	for _, r := range state.Resources {
		if r.Module == "module.api_gateway" || r.Module == "module.maestro_iot" {
			s.resources[r.Type+"."+r.Name] = true
		}
	}
	return s, nil
}

// served is what of the platform API's and the Maestro broker's serving
// the state holds: each waits for a certificate validated in the zone.
var served = []string{"aws_acm_certificate_validation.api", "aws_lb_listener.https", "aws_apigatewayv2_domain_name.api", "aws_apigatewayv2_route.api", "aws_route53_record.api",
	"aws_acm_certificate_validation.broker", "aws_iot_domain_configuration.broker", "aws_route53_record.broker"}

// checkUndelegated holds the first regional apply of a region whose zone
// no parent delegates yet to what the api-gateway and maestro-iot modules
// promise: it finished (the pipeline returned), made the zone, the
// certificates and their validation records, and nothing that waits for a
// certificate; no endpoint is handed on.
func checkUndelegated(s *regionalState) error {
	var wrong []string
	for _, r := range []string{"aws_route53_zone.api", "aws_acm_certificate.api", "aws_route53_record.validation", "aws_apigatewayv2_api.this",
		"aws_acm_certificate.broker", "aws_route53_record.broker_validation"} {
		if !s.resources[r] {
			wrong = append(wrong, "no "+r)
		}
	}
	for _, r := range served {
		if s.resources[r] {
			wrong = append(wrong, r+" made before the zone is delegated")
		}
	}
	if s.endpoint != "" {
		wrong = append(wrong, "an endpoint ("+s.endpoint+") for an API not served")
	}
	if len(s.nameServers) == 0 {
		wrong = append(wrong, "no name servers to delegate to")
	}
	if len(wrong) > 0 {
		sort.Strings(wrong)
		return fmt.Errorf("the undelegated regional apply: %s", strings.Join(wrong, "; "))
	}
	return nil
}

// checkDelegated holds the apply after the delegation to serving the API.
func checkDelegated(s *regionalState) error {
	var missing []string
	for _, r := range served {
		if !s.resources[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 || s.endpoint == "" {
		return fmt.Errorf("the regional apply after the delegation serves no API: missing %v, endpoint %q", missing, s.endpoint)
	}
	return nil
}
