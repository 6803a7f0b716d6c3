package argohealth

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/regionctl/regionctl/internal/render/iam"
)

// A Report is what a cluster's reporter (regionctl argocd report, a
// CronJob of the argocd-health-reporter chart) says about the Applications
// its own Argo CD holds: the fields the gate reads, as Argo CD's API gives
// them. The seeds' clusters are private, so nothing outside reaches their
// Argo CD; each reports outward instead, into its region's health bucket,
// under its own account's prefix (the bucket's policy admits nothing else).
type Report struct {
	Version      int           `json:"version"`
	Region       string        `json:"region"`
	Cluster      string        `json:"cluster"`
	ReportedAt   time.Time     `json:"reported_at"`
	Applications []Application `json:"applications"`
}

// ReportVersion is the version of Report this build writes and reads.
const ReportVersion = 1

// ReportObject is the object of a report in the region's health bucket,
// under the reporting account's prefix.
const ReportObject = iam.HealthReport

// maxReport bounds what the gate reads of one report: a cluster's
// Applications are a few dozen, a few KB.
const maxReport = 1 << 20

// reportKeyRE is a report's key: a 12-digit account id and the object.
var reportKeyRE = regexp.MustCompile(`^[0-9]{12}/` + regexp.QuoteMeta(ReportObject) + `$`)

// Kube reads Argo CD's Applications from the Kubernetes API of the cluster
// the reporter runs in, as the ServiceAccount the pod runs as.
type Kube struct {
	Server string // https://host:port
	Token  string
	CA     *x509.CertPool
	HTTP   *http.Client
}

// ServiceAccountDir is where Kubernetes mounts a pod's ServiceAccount token
// and the API server's CA.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster is the Kube of the pod this runs in: the API server from
// KUBERNETES_SERVICE_HOST and _PORT, the token and CA from dir.
func InCluster(getenv func(string) string, dir string) (*Kube, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	token, err := os.ReadFile(filepath.Join(dir, "token"))
	if err != nil {
		return nil, fmt.Errorf("reading the pod's ServiceAccount token: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("reading the API server's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no PEM certificate", filepath.Join(dir, "ca.crt"))
	}
	return &Kube{Server: "https://" + net.JoinHostPort(host, port), Token: string(bytes.TrimSpace(token)), CA: pool}, nil
}

func (k *Kube) client() *http.Client {
	if k.HTTP != nil {
		return k.HTTP
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: k.CA, MinVersion: tls.VersionTLS12}}}
}

// Applications lists the Applications of namespace that carry cluster's
// label, a page at a time.
func (k *Kube) Applications(ctx context.Context, namespace, cluster string) ([]Application, error) {
	var out []Application
	next := ""
	for {
		q := url.Values{"labelSelector": {"cluster=" + cluster}, "limit": {"250"}}
		if next != "" {
			q.Set("continue", next)
		}
		u := k.Server + "/apis/argoproj.io/v1alpha1/namespaces/" + url.PathEscape(namespace) + "/applications?" + q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+k.Token)
		req.Header.Set("Accept", "application/json")
		resp, err := k.client().Do(req)
		if err != nil {
			return nil, fmt.Errorf("cannot reach the Kubernetes API at %s: %s", k.Server, unreachable(err))
		}
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []Application `json:"items"`
		}
		err = decodeOK(resp, &page)
		if err != nil {
			return nil, fmt.Errorf("listing the Applications of namespace %s: %w", namespace, err)
		}
		out = append(out, page.Items...)
		if next = page.Metadata.Continue; next == "" {
			return out, nil
		}
	}
}

func decodeOK(resp *http.Response, v any) error {
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, 64<<20)
	if resp.StatusCode != http.StatusOK {
		var status struct {
			Message string `json:"message"`
		}
		_ = json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&status)
		if status.Message != "" {
			return fmt.Errorf("%s: %s", resp.Status, status.Message)
		}
		return errors.New(resp.Status)
	}
	return json.NewDecoder(body).Decode(v)
}

// Collect is the report of one cluster: its Applications, each cut to the
// fields the gate reads (the labels it selects on, health, sync status and
// revisions), so that nothing else Argo CD holds leaves the cluster.
func Collect(ctx context.Context, k *Kube, namespace, region, cluster string, now time.Time) (Report, error) {
	apps, err := k.Applications(ctx, namespace, cluster)
	if err != nil {
		return Report{}, err
	}
	r := Report{Version: ReportVersion, Region: region, Cluster: cluster, ReportedAt: now.UTC(), Applications: make([]Application, 0, len(apps))}
	for _, a := range apps {
		labels := map[string]string{}
		for _, k := range []string{"component", "sector", "region", "cluster"} {
			if v, ok := a.Metadata.Labels[k]; ok {
				labels[k] = v
			}
		}
		a.Metadata.Labels = labels
		r.Applications = append(r.Applications, a)
	}
	return r, nil
}

// DecodeApplications reads a JSON list of Applications as Argo CD's API
// and the Kubernetes API give them, keeping the fields the gate reads.
func DecodeApplications(b []byte) ([]Application, error) {
	var out []Application
	err := json.Unmarshal(b, &out)
	return out, err
}

// ReportKey is where account's report goes in its region's bucket.
func ReportKey(account string) string { return account + "/" + ReportObject }
