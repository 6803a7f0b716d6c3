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
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
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
	Backoff     time.Duration           // first delay between live checks, doubled each time (default 1s)
	// Retryer decides which failed POSTs are tried again and after how
	// long (default: the AWS SDK's standard retryer, 6 attempts, jittered
	// exponential backoff up to 20s, on 429, 5xx and broken connections);
	// a Retry-After the API sends lengthens the delay, up to a minute.
	Retryer aws.Retryer
	Now     func() time.Time
}

// retryAfterCap bounds how long a Retry-After makes a retry wait.
const retryAfterCap = time.Minute

// StatusError is an answer of the platform API that is not a success: the
// retryer reads its status (HTTPStatusCode).
type StatusError struct {
	Status     int
	Body       string
	RetryAfter time.Duration // what the answer's Retry-After asks, 0 if none
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.Status, strings.TrimSpace(e.Body))
}

// HTTPStatusCode is the answer's status, for the SDK's retryables.
func (e *StatusError) HTTPStatusCode() int { return e.Status }

// DefaultRetryer is the SDK's standard retryer for the platform API.
func DefaultRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 6
		o.MaxBackoff = 20 * time.Second
		o.Retryables = []retry.IsErrorRetryable{
			retry.RetryableConnectionError{},
			retry.RetryableHTTPStatusCode{Codes: map[int]struct{}{
				http.StatusTooManyRequests: {}, http.StatusInternalServerError: {}, http.StatusBadGateway: {},
				http.StatusServiceUnavailable: {}, http.StatusGatewayTimeout: {},
			}},
		}
		// Registrations are few: no retry quota to run out of.
		o.RateLimiter = ratelimit.None
	})
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
	retryer := c.Retryer
	if retryer == nil {
		retryer = DefaultRetryer()
	}
	for attempt := 1; ; attempt++ {
		status, answer, header, err := c.call(ctx, reg, http.MethodPost, "/api/v0/management_clusters", body)
		switch {
		case err != nil:
		case status == http.StatusCreated:
			return "created", nil
		case status == http.StatusConflict:
			return "already registered", nil
		default:
			err = &StatusError{Status: status, Body: answer, RetryAfter: retryAfter(header.Get("Retry-After"), c.now())}
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if !retryer.IsErrorRetryable(err) {
			return "", fmt.Errorf("POST %s/api/v0/management_clusters: %w", reg.Endpoint, err)
		}
		if attempt >= retryer.MaxAttempts() {
			return "", fmt.Errorf("POST %s/api/v0/management_clusters failed %d times; last: %w", reg.Endpoint, attempt, err)
		}
		delay, derr := retryer.RetryDelay(attempt, err)
		if derr != nil {
			return "", derr
		}
		var se *StatusError
		if errors.As(err, &se) && se.RetryAfter > delay {
			delay = se.RetryAfter
		}
		if err := sleep(ctx, delay); err != nil {
			return "", err
		}
	}
}

// retryAfter reads a Retry-After header (seconds, or an HTTP date), capped
// at retryAfterCap; 0 when there is none or it cannot be read.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, retryAfterCap))
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
		status, answer, _, err := c.call(callCtx, reg, http.MethodGet, "/api/v0/live", nil)
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

// call sends one signed request and returns its status, body and headers.
func (c *Client) call(ctx context.Context, reg pipeline.Registration, method, path string, body []byte) (int, string, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(reg.Endpoint, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Request-Id", reg.RequestID)
	creds, err := c.credentials(ctx, reg)
	if err != nil {
		return 0, "", nil, err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), Service, reg.Region, c.now()); err != nil {
		return 0, "", nil, fmt.Errorf("signing %s %s: %w", method, path, err)
	}
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(answer), resp.Header, nil
}

func (c *Client) credentials(ctx context.Context, _ pipeline.Registration) (aws.Credentials, error) {
	if c.Credentials == nil {
		return aws.Credentials{}, fmt.Errorf("no AWS credentials to sign the platform API calls with")
	}
	return c.Credentials.Retrieve(ctx)
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
