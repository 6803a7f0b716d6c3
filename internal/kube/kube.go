// Package kube is the little of the Kubernetes API regionctl's dispatch
// needs: list, create and patch Tekton PipelineRuns, as the pod's
// ServiceAccount, over plain HTTPS. It keeps client-go and its dependency
// tree out of the regionctl binary.
//
// Entry points: InCluster and Client.
package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Client talks to one Kubernetes API server.
type Client struct {
	Base  string // https://host:port
	Token string
	// TokenSource, when set, gives the bearer token of each request in
	// place of Token: a token that expires (an EKS token) is made anew.
	TokenSource func(context.Context) (string, error)
	HTTP        *http.Client

	disc discovery
}

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster is the client of a pod: the API server from the environment
// Kubernetes sets, the ServiceAccount's token and CA.
func InCluster() (*Client, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("not in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset); pass --kube-api")
	}
	token, err := os.ReadFile(serviceAccountDir + "/token")
	if err != nil {
		return nil, fmt.Errorf("the pod's ServiceAccount token: %w", err)
	}
	ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		return nil, fmt.Errorf("the cluster's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s/ca.crt", serviceAccountDir)
	}
	return &Client{Base: "https://" + net.JoinHostPort(host, port), Token: strings.TrimSpace(string(token)),
		HTTP: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}, nil
}

// PipelineRun is the part of a Tekton PipelineRun dispatch reads.
type PipelineRun struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels,omitempty"`
		Annotations       map[string]string `json:"annotations,omitempty"`
		CreationTimestamp time.Time         `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Status string `json:"status,omitempty"` // PipelineRunPending, Cancelled, ...
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"conditions,omitempty"`
	} `json:"status"`
}

// State is where a run is: pending (held back), running, succeeded,
// failed or cancelled.
func (r PipelineRun) State() string {
	for _, c := range r.Status.Conditions {
		if c.Type != "Succeeded" {
			continue
		}
		switch {
		case c.Status == "True":
			return "succeeded"
		case c.Status == "False" && strings.Contains(c.Reason, "Cancelled"):
			return "cancelled"
		case c.Status == "False":
			return "failed"
		}
	}
	switch r.Spec.Status {
	case "PipelineRunPending":
		return "pending"
	case "Cancelled", "CancelledRunFinally", "StoppedRunFinally":
		return "cancelled"
	}
	return "running"
}

func (c *Client) path(namespace string) string {
	return c.Base + "/apis/tekton.dev/v1/namespaces/" + url.PathEscape(namespace) + "/pipelineruns"
}

// List lists the PipelineRuns of namespace that match a label selector.
func (c *Client) List(ctx context.Context, namespace, selector string) ([]PipelineRun, error) {
	var out struct {
		Items []PipelineRun `json:"items"`
	}
	err := c.do(ctx, http.MethodGet, c.path(namespace)+"?labelSelector="+url.QueryEscape(selector), "", nil, &out)
	return out.Items, err
}

// Create creates a PipelineRun (JSON) and returns its name.
func (c *Client) Create(ctx context.Context, namespace string, run []byte) (string, error) {
	var out PipelineRun
	if err := c.do(ctx, http.MethodPost, c.path(namespace), "application/json", run, &out); err != nil {
		return "", err
	}
	return out.Metadata.Name, nil
}

// Patch applies a JSON merge patch to a PipelineRun.
func (c *Client) Patch(ctx context.Context, namespace, name string, patch []byte) error {
	return c.do(ctx, http.MethodPatch, c.path(namespace)+"/"+url.PathEscape(name), "application/merge-patch+json", patch, nil)
}

func (c *Client) do(ctx context.Context, method, u, ctype string, body []byte, into any) error {
	_, err := c.doStatus(ctx, method, u, ctype, body, into)
	return err
}

// doStatus is do that also returns the HTTP status (0 when none came).
func (c *Client) doStatus(ctx context.Context, method, u, ctype string, body []byte, into any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	token := c.Token
	if c.TokenSource != nil {
		if token, err = c.TokenSource(ctx); err != nil {
			return 0, fmt.Errorf("%s %s: the bearer token: %w", method, strings.TrimPrefix(u, c.Base), err)
		}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, strings.TrimPrefix(u, c.Base), err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode >= 300 {
		var status struct{ Message string }
		_ = json.Unmarshal(b, &status)
		return resp.StatusCode, fmt.Errorf("%s %s: HTTP %d: %s", method, strings.TrimPrefix(u, c.Base), resp.StatusCode, status.Message)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, strings.TrimPrefix(u, c.Base), err)
		}
	}
	return resp.StatusCode, nil
}
