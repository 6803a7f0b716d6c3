package argocd

import (
	"sort"

	"github.com/regionctl/regionctl/internal/config"
)

// SecretsSync is the component (a chart of this repository) whose
// ExternalSecrets bring the Secrets Manager values of the cluster's
// components into the cluster; render gives it their list as its
// secrets value.
const SecretsSync = "secrets-sync"

// SyncedSecret is one Secrets Manager secret of a component and the
// Kubernetes Secret External Secrets Operator makes of it.
type SyncedSecret struct {
	Namespace string // the component's namespace
	Name      string // the Kubernetes Secret its chart mounts
	Remote    string // the Secrets Manager secret, as the Terraform roots name it
	// Data maps each key of the Kubernetes Secret to the property of the
	// secret's JSON value it takes.
	Data map[string]string
}

// mqttCerts are the keys of the Secret the Maestro charts mount their MQTT
// client certificate and the broker's CA from (<component>-certs,
// /secrets/mqtt-certs/client.crt, client.key and ca.crt in their
// values.yaml), from the properties the roots write (modules/mqtt-client:
// certificate, private_key, ca_certificate).
var mqttCerts = map[string]string{"client.crt": "certificate", "client.key": "private_key", "ca.crt": "ca_certificate"}

// SyncedSecrets are the secrets of the components comps of cluster c, in
// namespace and name order.
func SyncedSecrets(c *config.Cluster, comps []Component) []SyncedSecret {
	var out []SyncedSecret
	for _, comp := range comps {
		if remote := MaestroSecret(comp.Name, c); remote != "" {
			out = append(out, SyncedSecret{Namespace: comp.Namespace, Name: comp.Name + "-certs", Remote: remote, Data: mqttCerts})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// secretsValue is the secrets value of the secrets-sync chart.
func secretsValue(secrets []SyncedSecret) []any {
	out := []any{}
	for _, s := range secrets {
		keys := make([]string, 0, len(s.Data))
		for k := range s.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		data := []any{}
		for _, k := range keys {
			data = append(data, map[string]any{"key": k, "property": s.Data[k]})
		}
		out = append(out, map[string]any{"namespace": s.Namespace, "name": s.Name, "remote": s.Remote, "data": data})
	}
	return out
}
