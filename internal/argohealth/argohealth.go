// Package argohealth is the health gate of a promotion: it asks Argo CD's
// API for the Applications of a sector (and component) and passes when all
// are Healthy and Synced at or after the commit that introduced the value.
// Applications are decoded into small structs of our own (the fields the
// gate reads), not Argo CD's Go types, which regionctl does not import.
//
// Entry point: Client.Check, which implements rollout.Health.
package argohealth

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/gitbase"
)

// Client talks to one Argo CD API server.
type Client struct {
	Server    string // https://argocd.example.com, or host:port as the argocd CLI takes it
	Token     string
	Insecure  bool // skip TLS verification
	Plaintext bool // http instead of https
	HTTP      *http.Client
	// Repo, when set, checks that each Application's synced revision is the
	// introducing commit or a descendant of it.
	Repo *gitbase.Repo
}

type application struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
	} `json:"status"`
}

func (c *Client) base() string {
	s := strings.TrimRight(c.Server, "/")
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return s
	}
	if c.Plaintext {
		return "http://" + s
	}
	return "https://" + s
}

// Check implements rollout.Health.
func (c *Client) Check(sector, component, commit string) (string, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: c.Insecure}}}
	}
	selector := "sector=" + sector
	if component != "" {
		selector += ",component=" + component
	}
	req, err := http.NewRequest(http.MethodGet, c.base()+"/api/v1/applications?"+url.Values{"selector": {selector}}.Encode(), nil)
	if err != nil {
		return "", err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("asking Argo CD for the Applications of %s: %w", selector, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("Argo CD answered %s for the Applications of %s", resp.Status, selector)
	}
	var list struct {
		Items []application `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", fmt.Errorf("decoding Argo CD's Applications: %w", err)
	}
	if len(list.Items) == 0 {
		return "", fmt.Errorf("no Application matches %s", selector)
	}
	var bad []string
	for _, a := range list.Items {
		h, s := a.Status.Health.Status, a.Status.Sync.Status
		switch {
		case h != "Healthy" || s != "Synced":
			bad = append(bad, fmt.Sprintf("%s is %s and %s", a.Metadata.Name, orUnknown(h), orUnknown(s)))
		case commit != "" && c.Repo != nil && !c.atOrAfter(a.Status.Sync.Revision, commit):
			bad = append(bad, fmt.Sprintf("%s is synced at %s, not at %s or later", a.Metadata.Name, short(a.Status.Sync.Revision), short(commit)))
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return fmt.Sprintf("%d Applications of %s Healthy and Synced", len(list.Items), selector), nil
}

// atOrAfter reports whether revision is commit or descends from it.
func (c *Client) atOrAfter(revision, commit string) bool {
	if revision == commit {
		return true
	}
	rc, err := c.Repo.Commit(revision)
	if err != nil {
		return false
	}
	cc, err := c.Repo.Commit(commit)
	if err != nil {
		return false
	}
	ok, err := cc.IsAncestor(rc)
	return err == nil && ok
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

func short(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}
