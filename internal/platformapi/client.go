// Package platformapi talks to the platform API: Client registers
// management clusters (pipeline.Registry) with SigV4-signed calls for the
// execute-api service; Server is a local platform API that verifies those
// signatures and records registrations, for tests and `make demo`.
//
// Entry points: Client.Register and NewServer.
package platformapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// Service is the SigV4 service name of the platform API.
const Service = "execute-api"

// Client registers management clusters.
type Client struct {
	HTTP        *http.Client
	Credentials aws.CredentialsProvider // the pipeline's own identity
	LiveWait    time.Duration           // bound on waiting for GET /api/v0/live (default 5m)
	Attempts    int                     // POST attempts on 5xx and throttling (default 6)
	Backoff     time.Duration           // first retry delay, doubled each time (default 1s)
	Now         func() time.Time
}

var _ pipeline.Registry = (*Client)(nil)

// firstCall bounds the first GET /api/v0/live when the wait is shorter.
const firstCall = 5 * time.Second

// Register waits for the API to be live, then registers the cluster. Only
// 201 Created and 409 Conflict (the API's answer for a name it holds) mean
// the cluster is registered; any other answer, whatever its body says, is
// a failure (5xx and 429 are retried).
func (c *Client) Register(ctx context.Context, reg pipeline.Registration) (string, error) {
	if err := c.waitLive(ctx, reg); err != nil {
		return "", err
	}
	body, err := json.Marshal(map[string]any{"name": reg.Name, "labels": reg.Labels})
	if err != nil {
		return "", err
	}
	delay := c.backoff()
	var last string
	for attempt := 1; attempt <= c.attempts(); attempt++ {
		status, answer, err := c.call(ctx, reg, http.MethodPost, "/api/v0/management_clusters", body)
		switch {
		case err != nil:
			last = err.Error()
		case status == http.StatusCreated:
			return "created", nil
		case status == http.StatusConflict:
			return "already registered", nil
		case status == http.StatusTooManyRequests || status >= 500:
			last = fmt.Sprintf("HTTP %d %s", status, strings.TrimSpace(answer))
		default:
			return "", fmt.Errorf("POST %s/api/v0/management_clusters: HTTP %d: %s", reg.Endpoint, status, strings.TrimSpace(answer))
		}
		if attempt < c.attempts() {
			if err := sleep(ctx, delay); err != nil {
				return "", err
			}
			delay *= 2
		}
	}
	return "", fmt.Errorf("POST %s/api/v0/management_clusters failed %d times; last: %s", reg.Endpoint, c.attempts(), last)
}

func (c *Client) waitLive(ctx context.Context, reg pipeline.Registration) error {
	wait := c.LiveWait
	if wait == 0 {
		wait = 5 * time.Minute
	}
	deadline := time.Now().Add(wait)
	delay := c.backoff()
	for first := true; ; first = false {
		// The wait bounds every call too, so an API that never answers
		// cannot hold the pipeline past it; the first call, however short
		// the wait, gets up to firstCall.
		bound := deadline
		if first && time.Until(bound) < firstCall {
			bound = time.Now().Add(firstCall)
		}
		callCtx, cancel := context.WithDeadline(ctx, bound)
		status, answer, err := c.call(callCtx, reg, http.MethodGet, "/api/v0/live", nil)
		timedOut := callCtx.Err() != nil && ctx.Err() == nil
		cancel()
		if timedOut {
			return fmt.Errorf("the platform API at %s is not live after %s (GET /api/v0/live: no answer)", reg.Endpoint, wait)
		}
		if err == nil && (status == http.StatusForbidden || status == http.StatusUnauthorized) {
			// A refusal of the caller's identity does not end by waiting.
			return fmt.Errorf("the platform API at %s refuses the pipeline's identity: GET /api/v0/live: HTTP %d %s", reg.Endpoint, status, strings.TrimSpace(answer))
		}
		if err == nil && status == http.StatusOK {
			return nil
		}
		why := fmt.Sprintf("HTTP %d %s", status, strings.TrimSpace(answer))
		if err != nil {
			why = err.Error()
		}
		if time.Now().Add(delay).After(deadline) {
			return fmt.Errorf("the platform API at %s is not live after %s (GET /api/v0/live: %s)", reg.Endpoint, wait, why)
		}
		if err := sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(delay*2, 15*time.Second)
	}
}

// call sends one signed request and returns its status and body.
func (c *Client) call(ctx context.Context, reg pipeline.Registration, method, path string, body []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(reg.Endpoint, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Request-Id", reg.RequestID)
	creds, err := c.credentials(ctx, reg)
	if err != nil {
		return 0, "", err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), Service, reg.Region, c.now()); err != nil {
		return 0, "", fmt.Errorf("signing %s %s: %w", method, path, err)
	}
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(answer), nil
}

func (c *Client) credentials(ctx context.Context, _ pipeline.Registration) (aws.Credentials, error) {
	if c.Credentials == nil {
		return aws.Credentials{}, fmt.Errorf("no AWS credentials to sign the platform API calls with")
	}
	return c.Credentials.Retrieve(ctx)
}

func (c *Client) attempts() int {
	if c.Attempts > 0 {
		return c.Attempts
	}
	return 6
}

func (c *Client) backoff() time.Duration {
	if c.Backoff > 0 {
		return c.Backoff
	}
	return time.Second
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
