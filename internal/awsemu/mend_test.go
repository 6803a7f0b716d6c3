package awsemu

import (
	"strings"
	"testing"
)

// TestMendsForMoto: the gate makes moto understand a private zone as AWS
// does, keeps moto's invented SSH key out of node groups, and describes a
// cluster with the access configuration it was created with; everything
// else passes untouched.
func TestMendsForMoto(t *testing.T) {
	var m mends
	zone := &request{Service: "route53", Operation: "CreateHostedZone"}
	for _, tc := range []struct{ in, want string }{
		{"<CreateHostedZoneRequest><Name>a.</Name><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>",
			"<CreateHostedZoneRequest><Name>a.</Name><HostedZoneConfig><PrivateZone>true</PrivateZone></HostedZoneConfig><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>"},
		{"<CreateHostedZoneRequest><HostedZoneConfig><Comment>c</Comment></HostedZoneConfig><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>",
			"<CreateHostedZoneRequest><HostedZoneConfig><Comment>c</Comment><PrivateZone>true</PrivateZone></HostedZoneConfig><VPC><VPCId>v</VPCId></VPC></CreateHostedZoneRequest>"},
		{"<CreateHostedZoneRequest><Name>public.</Name></CreateHostedZoneRequest>", "<CreateHostedZoneRequest><Name>public.</Name></CreateHostedZoneRequest>"},
	} {
		if got := string(m.request("1", zone, []byte(tc.in))); got != tc.want {
			t.Errorf("request(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
	}
	ng := &request{Service: "eks", Operation: "DescribeNodegroup"}
	if got := string(m.answer("1", ng, []byte(`{"nodegroup":{"nodegroupName":"default","remoteAccess":{"ec2SshKey":"eksKeypair"}}}`))); strings.Contains(got, "remoteAccess") {
		t.Errorf("moto's default key kept: %s", got)
	}
	if got := string(m.answer("1", ng, []byte(`{"nodegroup":{"remoteAccess":{"ec2SshKey":"ops"}}}`))); !strings.Contains(got, `"ops"`) {
		t.Errorf("a key the caller set was removed: %s", got)
	}

	create := &request{Service: "eks", Operation: "CreateCluster", Region: "eu-west-1",
		JSON: map[string]any{"name": "mc01", "accessConfig": map[string]any{"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": false}}}
	m.request("1", create, nil)
	describe := &request{Service: "eks", Operation: "DescribeCluster", Region: "eu-west-1", Labels: map[string]string{"name": "mc01"}}
	for _, tc := range []struct{ account, region, want string }{
		{"1", "eu-west-1", `"accessConfig":{"authenticationMode":"API","bootstrapClusterCreatorAdminPermissions":false}`},
		// Another account's cluster of the same name was made without one:
		// AWS's defaults.
		{"2", "eu-west-1", `"accessConfig":{"authenticationMode":"CONFIG_MAP","bootstrapClusterCreatorAdminPermissions":true}`},
	} {
		describe.Region = tc.region
		if got := string(m.answer(tc.account, describe, []byte(`{"cluster":{"name":"mc01"}}`))); !strings.Contains(got, tc.want) {
			t.Errorf("cluster of account %s described as %s, want %s", tc.account, got, tc.want)
		}
	}
	update := &request{Service: "eks", Operation: "UpdateClusterConfig", Region: "eu-west-1", Labels: map[string]string{"name": "mc01"},
		JSON: map[string]any{"accessConfig": map[string]any{"authenticationMode": "API_AND_CONFIG_MAP"}}}
	m.request("1", update, nil)
	describe.Region = "eu-west-1"
	if got := string(m.answer("1", describe, []byte(`{"cluster":{"name":"mc01"}}`))); !strings.Contains(got, `"authenticationMode":"API_AND_CONFIG_MAP","bootstrapClusterCreatorAdminPermissions":false`) {
		t.Errorf("after an update: %s", got)
	}
	// What moto does say is left alone.
	said := `{"cluster":{"accessConfig":{"authenticationMode":"API"},"name":"mc01"}}`
	if got := string(m.answer("2", describe, []byte(said))); got != said {
		t.Errorf("an answer with its own access configuration was changed: %s", got)
	}

	// A custom domain gets the regional endpoint AWS gives it, the same
	// for every answer about it.
	domain := &request{Service: "apigateway", Operation: "GetDomainName", Region: "eu-west-1", Path: "/v2/domainnames/api.example.com"}
	moto := `{"domainName":"api.example.com","domainNameConfigurations":[{"certificateArn":"c","endpointType":"REGIONAL"}],"mutualTlsAuthentication":{}}`
	first := string(m.answer("1", domain, []byte(moto)))
	for _, want := range []string{`"apiGatewayDomainName":"d-`, `.execute-api.eu-west-1.amazonaws.com"`, `"domainNameStatus":"AVAILABLE"`, `"hostedZoneId":"Z`, `"certificateArn":"c"`} {
		if !strings.Contains(first, want) {
			t.Errorf("custom domain described as %s, lacking %s", first, want)
		}
	}
	if strings.Contains(first, "mutualTls") {
		t.Errorf("a domain without mutual TLS described with it: %s", first)
	}
	list := &request{Service: "apigateway", Operation: "GetDomainNames", Region: "eu-west-1", Path: "/v2/domainnames"}
	if got := string(m.answer("1", list, []byte(`{"items":[`+moto+`]}`))); !strings.Contains(got, first[1:len(first)-1]) {
		t.Errorf("listed as %s, described as %s", got, first)
	}

	// An account's IoT endpoint stays what it was first said to be.
	endpoint := &request{Service: "iot", Operation: "DescribeEndpoint", Region: "eu-west-1", Query: map[string][]string{"endpointType": {"iot:Data-ATS"}}}
	a := string(m.answer("1", endpoint, []byte(`{"endpointAddress":"a-ats.iot.eu-west-1.amazonaws.com"}`)))
	b := string(m.answer("1", endpoint, []byte(`{"endpointAddress":"b-ats.iot.eu-west-1.amazonaws.com"}`)))
	c := string(m.answer("2", endpoint, []byte(`{"endpointAddress":"c-ats.iot.eu-west-1.amazonaws.com"}`)))
	if a != b || !strings.Contains(a, "a-ats") || !strings.Contains(c, "c-ats") {
		t.Errorf("IoT endpoints: %s, then %s; another account's %s", a, b, c)
	}
}

// moto's numeric container cpu and memory become ECS's strings, in every
// answer that holds tasks; other services' numbers are left alone.
func TestMendsECSContainerSizes(t *testing.T) {
	var m mends
	for _, op := range []string{"RunTask", "DescribeTasks"} {
		got := string(m.answer("1", &request{Service: "ecs", Operation: op}, []byte(`{"tasks":[{"containers":[{"name":"bootstrap","cpu":512,"memory":1024,"exitCode":0}]}]}`)))
		if !strings.Contains(got, `"cpu":"512"`) || !strings.Contains(got, `"memory":"1024"`) || !strings.Contains(got, `"exitCode":0`) {
			t.Errorf("%s: %s", op, got)
		}
	}
	got := string(m.answer("1", &request{Service: "ecs", Operation: "StopTask"}, []byte(`{"task":{"containers":[{"cpu":0,"memoryReservation":null}]}}`)))
	if !strings.Contains(got, `"cpu":"0"`) || strings.Contains(got, "memoryReservation") {
		t.Errorf("StopTask: %s", got)
	}
	if got := string(m.answer("1", &request{Service: "ecs", Operation: "DescribeTaskDefinition"}, []byte(`{"taskDefinition":{"containerDefinitions":[{"cpu":512}]}}`))); !strings.Contains(got, `"cpu":512`) {
		t.Errorf("a task definition's container cpu is a number in ECS too: %s", got)
	}
}

// moto's DeletionTaskId is a bare UUID; the mend gives it AWS's form, which
// names the role its status is authorized on.
func TestDeletionTaskNamesItsRole(t *testing.T) {
	moto := []byte("<DeleteServiceLinkedRoleResponse><DeleteServiceLinkedRoleResult><DeletionTaskId>1a2b</DeletionTaskId></DeleteServiceLinkedRoleResult></DeleteServiceLinkedRoleResponse>")
	got := string(deletionTask(moto, "arn:aws:iam::111122223333:role/aws-service-role/elasticloadbalancing.amazonaws.com/AWSServiceRoleForElasticLoadBalancing"))
	want := "<DeletionTaskId>task/aws-service-role/elasticloadbalancing.amazonaws.com/AWSServiceRoleForElasticLoadBalancing/1a2b</DeletionTaskId>"
	if !strings.Contains(got, want) {
		t.Errorf("%s", got)
	}
	if again := string(deletionTask([]byte(got), "arn:aws:iam::111122223333:role/x")); again != got {
		t.Errorf("mended twice: %s", again)
	}
}
