package awsemu

import (
	"strings"
	"testing"
)

// TestMendsForMoto: the gate makes moto understand a private zone as AWS
// does, and keeps moto's invented SSH key out of node groups; everything
// else passes untouched.
func TestMendsForMoto(t *testing.T) {
	zone := &request{Service: "route53", Operation: "CreateHostedZone"}
	for _, tc := range []struct{ in, want string }{
		{"<CreateHostedZoneRequest><Name>a.</Name><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>",
			"<CreateHostedZoneRequest><Name>a.</Name><HostedZoneConfig><PrivateZone>true</PrivateZone></HostedZoneConfig><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>"},
		{"<CreateHostedZoneRequest><HostedZoneConfig><Comment>c</Comment></HostedZoneConfig><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>",
			"<CreateHostedZoneRequest><HostedZoneConfig><Comment>c</Comment><PrivateZone>true</PrivateZone></HostedZoneConfig><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>"},
		{"<CreateHostedZoneRequest><Name>public.</Name></CreateHostedZoneRequest>", "<CreateHostedZoneRequest><Name>public.</Name></CreateHostedZoneRequest>"},
	} {
		if got := string(mendForMoto(zone, []byte(tc.in))); got != tc.want {
			t.Errorf("mendForMoto(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
	}
	ng := &request{Service: "eks", Operation: "DescribeNodegroup"}
	if got := string(mendAnswer(ng, []byte(`{"nodegroup":{"nodegroupName":"default","remoteAccess":{"ec2SshKey":"eksKeypair"}}}`))); strings.Contains(got, "remoteAccess") {
		t.Errorf("moto's default key kept: %s", got)
	}
	if got := string(mendAnswer(ng, []byte(`{"nodegroup":{"remoteAccess":{"ec2SshKey":"ops"}}}`))); !strings.Contains(got, `"ops"`) {
		t.Errorf("a key the caller set was removed: %s", got)
	}
}
