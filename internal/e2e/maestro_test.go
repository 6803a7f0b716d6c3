package e2e

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/regionctl/regionctl/internal/awsemu"
)

// maestroChecklist is Milestone 1's Maestro over IoT, asked of the accounts
// as they are: the agent's credentials are in its management cluster's
// account, in the secret its rendered Application names, for the broker of
// the regional account; its pods' role reads them through the IAM gate and
// no other role of the account does; its certificate is admitted by one
// policy, to its own consumer's topics only.
func (e *env) maestroChecklist(regional, mc01, cluster string, mcOutputs, regionalOutputs map[string]string) {
	t := e.t
	ctx := context.Background()
	secret := region + "-" + cluster + "-maestro-agent-mqtt" // argocd.MaestroSecret, as render writes it into the Application
	if arn := mcOutputs["maestro_agent_secret_arn"]; !strings.Contains(arn, ":"+mc01+":secret:"+secret+"-") {
		t.Errorf("the agent's secret %s is not %s of mc01's account", arn, secret)
	}
	if mcOutputs["maestro_mqtt_endpoint"] != regionalOutputs["maestro_mqtt_endpoint"] || !strings.HasPrefix(mcOutputs["maestro_mqtt_endpoint"], "mqtts://") {
		t.Errorf("the agent's broker %q is not the regional account's %q", mcOutputs["maestro_mqtt_endpoint"], regionalOutputs["maestro_mqtt_endpoint"])
	}
	// A pod of the ServiceAccount holds the role of its EKS Pod Identity
	// association, as the agent gives it: the test names no role.
	read := func(namespace, sa string) (string, error) {
		creds, err := e.gate.PodIdentitySession(ctx, mc01, region, mcOutputs["cluster_name"], namespace, sa, sa+"-0")
		if err != nil {
			return "", err
		}
		out, err := secretsmanager.NewFromConfig(awsemu.Config(e.gate.URL, region, creds)).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(secret)})
		if err != nil {
			return "", err
		}
		return aws.ToString(out.SecretString), nil
	}
	value, err := read("maestro", "maestro-agent")
	if err != nil {
		t.Fatalf("the agent's pods reading their credentials: %v", err)
	}
	var creds struct {
		Endpoint    string `json:"endpoint"`
		ClientID    string `json:"client_id"`
		Certificate string `json:"certificate"`
		PrivateKey  string `json:"private_key"`
		CA          string `json:"ca_certificate"`
	}
	if err := json.Unmarshal([]byte(value), &creds); err != nil {
		t.Fatalf("the agent's credentials: %v", err)
	}
	if creds.Endpoint != regionalOutputs["maestro_mqtt_endpoint"] || creds.ClientID != cluster ||
		!strings.Contains(creds.Certificate, "BEGIN CERTIFICATE") || !strings.Contains(creds.PrivateKey, "PRIVATE KEY") {
		t.Errorf("the agent's credentials: endpoint %q, client %q, certificate %.30q, key present %v", creds.Endpoint, creds.ClientID, creds.Certificate, creds.PrivateKey != "")
	}
	if block, _ := pem.Decode([]byte(creds.CA)); block == nil {
		t.Errorf("the agent's credentials hold no broker CA: %.60q", creds.CA)
	} else if ca, err := x509.ParseCertificate(block.Bytes); err != nil || ca.Subject.CommonName != "Amazon Root CA 1" {
		t.Errorf("the agent's broker CA: %v %v", err, ca)
	}
	// The broker's own name, served by IoT Core's domain configuration in
	// the delegated API zone, is what render gave the agent's chart.
	res := strings.Join(e.stateResources("regionctl-tfstate-eu-west-1-regional", "regional-cluster/eu-west-1/regional.tfstate"), " ")
	for _, want := range []string{"aws_iot_domain_configuration.broker", "aws_route53_record.broker ", "aws_acm_certificate_validation.broker"} {
		if !strings.Contains(res, want) {
			t.Errorf("the regional state lacks %s: %s", want, res)
		}
	}
	if host := regionalOutputs["maestro_broker_host"]; host != "mqtt.api.eu-west-1.stage.hcp.example.com" {
		t.Errorf("the regional root serves the broker at %q", host)
	}
	// External Secrets Operator's controller, which brings them into the
	// cluster as the Secret the agent's chart mounts (charts/secrets-sync),
	// reads them with its own association's role.
	if synced, err := read("external-secrets", "external-secrets"); err != nil || synced != value {
		t.Errorf("External Secrets Operator's controller reading the agent's credentials: %v", err)
	}
	e.gate.Ledger().Expect(func(en awsemu.Entry) bool { return strings.Contains(en.Resource, ":secret:"+secret) })
	if _, err := read("hypershift", "operator"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("the HyperShift operator read the agent's credentials: %v", err)
	}

	// The certificate's one policy, in the regional account: its own
	// client id and its own consumer's topics.
	policies := e.iotAttached(regional, creds.Certificate)
	want := region + "-maestro-agent-" + cluster
	if len(policies) != 1 || policies[0] != want {
		t.Fatalf("policies of the agent's certificate: %v, want [%s]", policies, want)
	}
	doc := e.iotPolicy(regional, want)
	for _, s := range []string{":client/" + cluster + `"`, "topicfilter/sources/maestro/consumers/" + cluster + "/sourceevents", "topic/sources/maestro/consumers/" + cluster + "/agentevents"} {
		if !strings.Contains(doc, s) {
			t.Errorf("the agent's IoT policy lacks %s: %s", s, doc)
		}
	}
	if strings.Contains(doc, "consumers/*") || strings.Contains(doc, "consumers/+") {
		t.Errorf("the agent's IoT policy reaches other consumers: %s", doc)
	}
	// On the regional cluster, the operator's role reads the server's
	// credentials and nothing else of the regional account: not CLM's
	// database password, which AWS keeps in the same Secrets Manager.
	regionalRead := func(arn string) error {
		creds, err := e.gate.PodIdentitySession(ctx, regional, region, regionalOutputs["cluster_name"], "external-secrets", "external-secrets", "external-secrets-0")
		if err != nil {
			return err
		}
		_, err = secretsmanager.NewFromConfig(awsemu.Config(e.gate.URL, region, creds)).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		return err
	}
	if arn := regionalOutputs["maestro_server_secret_arn"]; arn == "" {
		t.Error("the regional root has no maestro_server_secret_arn output")
	} else if err := regionalRead(arn); err != nil {
		t.Errorf("External Secrets Operator's controller on the regional cluster reading the server's credentials: %v", err)
	}
	if arn := regionalOutputs["clm_database_secret_arn"]; arn != "" {
		e.gate.Ledger().Expect(func(en awsemu.Entry) bool { return en.Resource == arn })
		if err := regionalRead(arn); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
			t.Errorf("External Secrets Operator's controller read CLM's database password: %v", err)
		}
	}
	// The server's policy connects only the certificate attached to the
	// server's thing, which no regional principal may attach one to.
	server := e.iotPolicy(regional, region+"-maestro")
	if !strings.Contains(server, `"iot:Connection.Thing.IsAttached":"true"`) || !strings.Contains(server, `"iot:Connection.Thing.ThingName":"`+region+`-maestro-server"`) {
		t.Errorf("the Maestro server's IoT policy admits a certificate not attached to its thing: %s", server)
	}
}

// iotAttached lists the IoT policies attached to the certificate whose PEM
// is given, in account.
func (e *env) iotAttached(account, pem string) []string {
	e.t.Helper()
	creds, err := e.in(account).Credentials.Retrieve(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	status, body, err := awsemu.Call(context.Background(), e.emu.URL, creds, "iot", region, "GET", "/certificates")
	if err != nil || status != 200 {
		e.t.Fatalf("listing certificates of %s: %d %v %s", account, status, err, body)
	}
	var certs struct {
		Certificates []struct{ CertificateArn, CertificateId string }
	}
	_ = json.Unmarshal(body, &certs)
	for _, c := range certs.Certificates {
		status, body, err := awsemu.Call(context.Background(), e.emu.URL, creds, "iot", region, "GET", "/certificates/"+c.CertificateId)
		if err != nil || status != 200 || !strings.Contains(strings.ReplaceAll(string(body), `\n`, "\n"), strings.TrimSpace(pem)) {
			continue
		}
		status, body, err = awsemu.Call(context.Background(), e.emu.URL, creds, "iot", region, "POST", "/attached-policies/"+url.PathEscape(c.CertificateArn))
		if err != nil || status != 200 {
			e.t.Fatalf("the policies of %s: %d %v %s", c.CertificateArn, status, err, body)
		}
		var out struct{ Policies []struct{ PolicyName string } }
		_ = json.Unmarshal(body, &out)
		var names []string
		for _, p := range out.Policies {
			names = append(names, p.PolicyName)
		}
		return names
	}
	e.t.Fatalf("no certificate of %s is the agent's", account)
	return nil
}

// iotPolicy is the document of an IoT policy of account.
func (e *env) iotPolicy(account, name string) string {
	e.t.Helper()
	creds, err := e.in(account).Credentials.Retrieve(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	status, body, err := awsemu.Call(context.Background(), e.emu.URL, creds, "iot", region, "GET", "/policies/"+name)
	if err != nil || status != 200 {
		e.t.Fatalf("IoT policy %s: %d %v %s", name, status, err, body)
	}
	var out struct{ PolicyDocument string }
	_ = json.Unmarshal(body, &out)
	return out.PolicyDocument
}
