package argocd

import (
	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// MaestroBroker is the name Maestro's server and agents reach their
// region's broker (AWS IoT Core of the regional account) at: a custom
// domain in the platform API's zone, which the regional root serves
// (modules/maestro-iot), because the account's own IoT endpoint is known
// only once the account exists. "" when c's effective config names no
// platform_api.domain.
func MaestroBroker(c *config.Cluster) string {
	if v := c.Effective.Lookup("platform_api", "domain"); v != nil && v.Kind == config.String && v.Str != "" {
		return "mqtt." + v.Str
	}
	return ""
}

// maestroPort is IoT Core's MQTT over TLS port.
const maestroPort = "8883"

// maestroValues are what render gives the upstream Maestro charts
// (openshift-online/maestro charts/maestro-agent and charts/maestro-server,
// values.yaml and templates/secret.yaml, mqtt.yaml): the broker's name and
// port, TLS with the client certificate and CA that secrets-sync brings in
// (<component>-certs, mounted at /secrets/mqtt-certs), no user name (IoT
// Core authenticates the certificate); for an agent, its consumer name as
// both consumer and MQTT client id, which its IoT policy admits alone
// (modules/maestro-agent). A config that sets any of these is refused: two
// sources would disagree.
func maestroValues(c *config.Cluster, name string, values map[string]any, at diag.Pos) []Problem {
	if MaestroSecret(name, c) == "" {
		return nil
	}
	owned := []string{"messageBroker"}
	if name == "maestro-agent" {
		owned = append(owned, "consumerName", "cloudeventsClientId")
	}
	for _, k := range owned {
		if _, set := values[k]; set {
			return problem(at, "render gives the Maestro charts their broker, TLS files and (for an agent) consumer name and client id, from platform_api.domain and maestro.consumer_name; remove values."+k+".",
				"component %s sets %s", name, k)
		}
	}
	broker := MaestroBroker(c)
	if broker == "" {
		return problem(at, "Maestro reaches its region's broker at mqtt.<platform_api.domain>; set platform_api.domain in the region's layer (config/regions/), where every cluster of the region sees it.",
			"%s has no platform_api.domain for its Maestro broker", c.ID())
	}
	files := "/secrets/mqtt-certs/"
	switch name {
	case "maestro-agent":
		consumer := c.Name
		if v := c.Effective.Lookup("maestro", "consumer_name"); v != nil && v.Kind == config.String {
			consumer = v.Str
		}
		values["consumerName"] = consumer
		values["cloudeventsClientId"] = consumer
		values["messageBroker"] = map[string]any{"type": "mqtt", "mqtt": map[string]any{
			"host": broker, "port": maestroPort, "user": "",
			"rootCert": files + "ca.crt", "clientCert": files + "client.crt", "clientKey": files + "client.key"}}
	case "maestro-server":
		values["messageBroker"] = map[string]any{"type": "mqtt", "mqtt": map[string]any{
			"host": broker, "port": maestroPort,
			"tls": map[string]any{"enabled": true, "caFile": files + "ca.crt", "clientCertFile": files + "client.crt", "clientKeyFile": files + "client.key"}}}
	}
	return nil
}
