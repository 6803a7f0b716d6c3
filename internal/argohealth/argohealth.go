// Package argohealth is the health gate of a promotion: it asks Argo CD's
// API for the Applications of a sector (and component) and passes when all
// are Healthy and Synced at or after the commit that introduced the value.
// Applications are decoded into small structs of our own (the fields the
// gate reads), not Argo CD's Go types, which regionctl does not import.
//
// Entry point: Client.Check, which implements rollout.Health.
package argohealth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
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

// WithEnv fills in what the flags left out as the argocd CLI does: the
// server from ARGOCD_SERVER, the token from ARGOCD_AUTH_TOKEN.
func (c *Client) WithEnv(getenv func(string) string) {
	if c.Server == "" {
		c.Server = getenv("ARGOCD_SERVER")
	}
	if c.Token == "" {
		c.Token = getenv("ARGOCD_AUTH_TOKEN")
	}
}

// Application is an Argo CD Application as its API (and the Kubernetes
// API) gives it, cut to the fields the gate reads.
type Application struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		Sync struct {
			Status string `json:"status"`
			// Revision is a single-source Application's; Revisions a
			// multi-source one's, one per source.
			Revision  string   `json:"revision"`
			Revisions []string `json:"revisions"`
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

// applications lists the Applications matching a label selector.
func (c *Client) applications(selector string) ([]Application, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: c.Insecure}}}
	}
	req, err := http.NewRequest(http.MethodGet, c.base()+"/api/v1/applications?"+url.Values{"selector": {selector}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Argo CD at %s: %s", c.base(), unreachable(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("Argo CD %s answered %s for the Applications of %s", c.base(), resp.Status, selector)
	}
	var list struct {
		Items []Application `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("decoding Argo CD's Applications: %w", err)
	}
	return list.Items, nil
}

// Check implements rollout.Health against one Argo CD holding every
// Application of the sector.
func (c *Client) Check(sector, component, commit string) (string, error) {
	selector := "sector=" + sector
	if component != "" {
		selector += ",component=" + component
	}
	apps, err := c.applications(selector)
	if err != nil {
		return "", err
	}
	if len(apps) == 0 {
		return "", fmt.Errorf("no Application matches %s", selector)
	}
	if bad := c.judge(apps, apps, commit); len(bad) > 0 {
		return "", fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return fmt.Sprintf("%d Applications of %s Healthy and Synced", len(apps), selector), nil
}

// judge says what keeps the selected Applications from passing: each
// must be Healthy and Synced; each that tracks a git commit of the fleet
// repository (a root Application, a multi-source one's $values) must be at
// commit or after it, and at least one of all must.
func (c *Client) judge(selected, all []Application, commit string) []string {
	var bad []string
	for _, a := range selected {
		if h, s := a.Status.Health.Status, a.Status.Sync.Status; h != "Healthy" || s != "Synced" {
			bad = append(bad, fmt.Sprintf("%s is %s and %s", a.Metadata.Name, orUnknown(h), orUnknown(s)))
		}
	}
	if commit == "" || c.Repo == nil {
		return bad
	}
	tracked := false
	for _, a := range all {
		if a.Metadata.Labels["component"] != "root" && !contains(selected, a) {
			continue
		}
		for _, rev := range commits(a) {
			tracked = true
			if !c.atOrAfter(rev, commit) {
				bad = append(bad, fmt.Sprintf("%s is synced at %s, not at %s or later", a.Metadata.Name, short(rev), short(commit)))
			}
		}
	}
	if !tracked {
		bad = append(bad, fmt.Sprintf("no Application tracks a commit of the fleet repository, so none can show it runs %s", short(commit)))
	}
	return bad
}

func contains(apps []Application, a Application) bool {
	for _, x := range apps {
		if x.Metadata.Name == a.Metadata.Name {
			return true
		}
	}
	return false
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// commits are the git commits an Application is synced at: its revision,
// or those of its sources; chart versions are not commits.
func commits(a Application) []string {
	var out []string
	for _, r := range append([]string{a.Status.Sync.Revision}, a.Status.Sync.Revisions...) {
		if commitRE.MatchString(r) {
			out = append(out, r)
		}
	}
	return out
}

// Target is one cluster and the Argo CD that manages it.
type Target struct {
	Region, Cluster string
	Endpoint        string // https URL of that Argo CD's API
}

// Gate implements rollout.Health for a fleet: it asks, for each cluster of
// the sector, the Argo CD that manages it (its own in the per-cluster
// topology, the environment's in the central one) and names the clusters
// that block.
type Gate struct {
	// Client carries the token, TLS settings and repository; its Server is
	// replaced by each target's endpoint.
	Client  Client
	Targets func(sector string) ([]Target, error)
}

// unreachable says why a request reached no Argo CD, in a few words: the
// name that does not resolve, the connection refused, the timeout.
func unreachable(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		return fmt.Sprintf("the name %s does not resolve here", dns.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.As(err, &op) && op.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Check implements rollout.Health.
func (g *Gate) Check(sector, component, commit string) (string, error) {
	targets, err := g.Targets(sector)
	if err != nil {
		return "", err
	}
	if len(targets) == 0 {
		return "", fmt.Errorf("sector %s has no cluster to ask", sector)
	}
	var blocked []string
	n := 0
	for _, t := range targets {
		c := g.Client
		c.Server = t.Endpoint
		all, err := c.applications("sector=" + sector + ",region=" + t.Region + ",cluster=" + t.Cluster)
		if err != nil {
			blocked = append(blocked, t.Region+"/"+t.Cluster+": "+err.Error())
			continue
		}
		var selected []Application
		for _, a := range all {
			if component == "" || a.Metadata.Labels["component"] == component {
				selected = append(selected, a)
			}
		}
		if msg, ok := c.verdict(t.Region+"/"+t.Cluster, " at "+t.Endpoint, selected, all, component, commit); !ok {
			blocked = append(blocked, msg)
			continue
		}
		n += len(selected)
	}
	if len(blocked) > 0 {
		msg := blockedMessage(blocked, len(targets), sector)
		if g.Client.Token == "" {
			msg += "\nNo Argo CD token was given (--argocd-auth-token or $ARGOCD_AUTH_TOKEN)."
		}
		return "", errors.New(msg)
	}
	return fmt.Sprintf("%d Applications on %d clusters of %s Healthy and Synced", n, len(targets), sector), nil
}

// verdict judges one cluster's Applications: what blocks it, or ok.
// where says, for a cluster with no Application to judge, where they were
// looked for.
func (c *Client) verdict(id, where string, selected, all []Application, component, commit string) (string, bool) {
	if len(selected) == 0 {
		what := "no Application"
		if component != "" {
			what = "no Application of " + component
		}
		return id + ": " + what + where, false
	}
	if bad := c.judge(selected, all, commit); len(bad) > 0 {
		return id + ": " + strings.Join(bad, "; "), false
	}
	return "", true
}

func blockedMessage(blocked []string, targets int, sector string) string {
	return fmt.Sprintf("%d of %d clusters of %s block:\n  %s", len(blocked), targets, sector, strings.Join(blocked, "\n  "))
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
