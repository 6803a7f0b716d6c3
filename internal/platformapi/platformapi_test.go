package platformapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/regionctl/regionctl/internal/pipeline"
	"github.com/regionctl/regionctl/internal/platformapi"
)

var creds = aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", SessionToken: "token"}

func setup(t *testing.T, inject func(*http.Request) int) (*platformapi.Server, *platformapi.Client, pipeline.Registration) {
	s := &platformapi.Server{Credentials: creds, Inject: inject}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c := &platformapi.Client{Credentials: credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken),
		LiveWait: 2 * time.Second, Backoff: 10 * time.Millisecond, Retryer: quickRetryer(4)}
	reg := pipeline.Registration{Endpoint: ts.URL, Name: "mc01", Region: "eu-west-1", RequestID: "req-1",
		Labels: map[string]string{"cluster_type": "management", "region": "eu-west-1"}}
	return s, c, reg
}

func TestRegisterOnceThenConflict(t *testing.T) {
	s, c, reg := setup(t, nil)
	for i, want := range []string{"created", "already registered"} {
		got, err := c.Register(context.Background(), reg)
		if err != nil || got != want {
			t.Fatalf("registration %d: %q, %v; want %q", i+1, got, err, want)
		}
	}
	r := s.Registered()
	if len(r) != 1 || r[0].Name != "mc01" || r[0].RequestID != "req-1" || r[0].Region != "eu-west-1" || r[0].Labels["cluster_type"] != "management" {
		t.Fatalf("registered %+v", r)
	}
}

func TestWrongCredentialsAreRefused(t *testing.T) {
	_, c, reg := setup(t, nil)
	c.Credentials = credentials.NewStaticCredentialsProvider("AKIDTEST", "not-the-secret", "")
	c.LiveWait = 50 * time.Millisecond
	_, err := c.Register(context.Background(), reg)
	if err == nil || !strings.Contains(err.Error(), "signature does not match") {
		t.Fatalf("a bad signature: %v", err)
	}
}

func TestRetriesThrottlingAnd5xx(t *testing.T) {
	var posts atomic.Int32
	s, c, reg := setup(t, func(r *http.Request) int {
		if r.Method == http.MethodPost {
			switch posts.Add(1) {
			case 1:
				return http.StatusTooManyRequests
			case 2:
				return http.StatusInternalServerError
			}
		}
		return 0
	})
	if got, err := c.Register(context.Background(), reg); err != nil || got != "created" {
		t.Fatalf("%q %v", got, err)
	}
	if posts.Load() != 3 || len(s.Registered()) != 1 {
		t.Fatalf("%d posts, %d registrations", posts.Load(), len(s.Registered()))
	}
}

// Only 201 and 409 mean registered: a 200, or a 400, 403 or 502 whose body
// happens to say "already exists", is not.
func TestOnlyCreatedAndConflictRegister(t *testing.T) {
	_, c, reg := setup(t, nil)
	c.Backoff, c.Retryer = time.Millisecond, quickRetryer(2)
	for _, tc := range []struct {
		status int
		body   string
		want   string // "" for a failure
	}{
		{http.StatusCreated, `{"name":"mc01"}`, "created"},
		{http.StatusConflict, `{"error":"consumer mc01 already exists"}`, "already registered"},
		{http.StatusOK, `{"name":"mc01"}`, ""},
		{http.StatusBadRequest, `{"error":"Consumer mc01 already exists"}`, ""},
		{http.StatusForbidden, `{"message":"already exists"}`, ""},
		{http.StatusBadGateway, `already exists`, ""},
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				return // live
			}
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		reg.Endpoint = ts.URL
		got, err := c.Register(context.Background(), reg)
		ts.Close()
		if tc.want == "" && err == nil {
			t.Errorf("HTTP %d %s: registered (%q)", tc.status, tc.body, got)
		}
		if tc.want != "" && (err != nil || got != tc.want) {
			t.Errorf("HTTP %d: %q %v, want %q", tc.status, got, err, tc.want)
		}
	}
}

// --live-wait bounds the whole wait, a call that never answers included.
func TestLiveWaitBoundsAHangingAPI(t *testing.T) {
	_, c, reg := setup(t, nil)
	hang := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(hang)
	reg.Endpoint = ts.URL
	c.LiveWait = 200 * time.Millisecond
	c.HTTP = &http.Client{} // no timeout of its own: only the wait bounds the call
	done := make(chan error, 1)
	go func() { _, err := c.Register(context.Background(), reg); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not live after 200ms") {
			t.Fatalf("an API that never answers: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Register still waits on an API that never answers, far past its 200ms wait")
	}
}

func TestWaitsForLiveThenGivesUp(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	s, c, reg := setup(t, func(r *http.Request) int {
		if down.Load() {
			return http.StatusServiceUnavailable
		}
		return 0
	})
	c.LiveWait = 100 * time.Millisecond
	if _, err := c.Register(context.Background(), reg); err == nil || !strings.Contains(err.Error(), "is not live after") {
		t.Fatalf("an API that stays down: %v", err)
	}
	go func() { time.Sleep(100 * time.Millisecond); down.Store(false) }()
	c.LiveWait = 5 * time.Second
	if got, err := c.Register(context.Background(), reg); err != nil || got != "created" {
		t.Fatalf("an API that comes up: %q %v", got, err)
	}
	if len(s.Registered()) != 1 {
		t.Fatal(s.Registered())
	}
}

// A refusal of the pipeline's identity ends the wait at once: waiting
// does not change who the caller is.
func TestLiveRefusalEndsTheWait(t *testing.T) {
	_, c, reg := setup(t, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"User is not authorized"}`))
	}))
	defer ts.Close()
	reg.Endpoint = ts.URL
	c.LiveWait = time.Hour
	done := make(chan error, 1)
	go func() { _, err := c.Register(context.Background(), reg); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "refuses the pipeline's identity") || !strings.Contains(err.Error(), "HTTP 403") {
			t.Fatalf("a 403 on GET /api/v0/live: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Register keeps waiting on an API that refuses the caller")
	}
}

// quickRetryer is the SDK's standard retryer with attempts attempts and a
// fixed 10ms delay, for tests.
func quickRetryer(attempts int) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = attempts
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 10 * time.Millisecond, nil })
		o.Retryables = append(o.Retryables, retry.RetryableHTTPStatusCode{Codes: map[int]struct{}{429: {}, 500: {}, 502: {}, 503: {}, 504: {}}})
		o.RateLimiter = ratelimit.None
	})
}

// A throttled POST waits what the API's Retry-After asks, longer than the
// retryer's own delay, before it tries again.
func TestRetryAfterIsHonoured(t *testing.T) {
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusOK)
			return
		}
		if posts.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(ts.Close)
	c := &platformapi.Client{Credentials: credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, ""),
		LiveWait: 2 * time.Second, Backoff: 10 * time.Millisecond, Retryer: quickRetryer(3)}
	start := time.Now()
	got, err := c.Register(context.Background(), pipeline.Registration{Endpoint: ts.URL, Name: "mc01", Region: "eu-west-1", RequestID: "r"})
	if err != nil || got != "created" || posts.Load() != 2 {
		t.Fatalf("%q %v after %d posts", got, err, posts.Load())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %s, before the Retry-After of 1s", waited)
	}
}

// The default retryer is the SDK's: it retries throttling, 5xx and a
// broken connection, never a 4xx the API means.
func TestDefaultRetryerRetriesWhatPasses(t *testing.T) {
	r := platformapi.DefaultRetryer()
	for status, want := range map[int]bool{429: true, 500: true, 502: true, 503: true, 504: true, 400: false, 403: false, 404: false, 200: false} {
		if got := r.IsErrorRetryable(&platformapi.StatusError{Status: status}); got != want {
			t.Errorf("HTTP %d retried: %v, want %v", status, got, want)
		}
	}
	if r.MaxAttempts() != 6 {
		t.Errorf("%d attempts", r.MaxAttempts())
	}
}
