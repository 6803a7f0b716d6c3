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
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Registered is one management cluster the Server accepted.
type Registered struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels"`
	RequestID string            `json:"request_id"`
	Caller    string            `json:"caller"` // the access key, or the principal the gate named
	Region    string            `json:"region"`
}

// Server is a local platform API: GET /api/v0/live and POST
// /api/v0/management_clusters, each refused unless signed with SigV4 for
// execute-api by Credentials. A second registration of a name gets 409.
type Server struct {
	Credentials aws.Credentials
	// Authorize, when set, decides each request instead of Credentials, as
	// API Gateway's IAM authorization does (the IAM gate's Invoke); it
	// returns the caller.
	Authorize func(r *http.Request, body []byte) (caller string, err error)
	// Inject, when set, may answer a request with a status of its own
	// before the server handles it (0: handle it), to simulate faults.
	Inject func(r *http.Request) int

	mu         sync.Mutex
	registered []Registered
	calls      []string
}

// Registered returns the registrations accepted so far.
func (s *Server) Registered() []Registered {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Registered(nil), s.registered...)
}

// Calls returns "METHOD path status" for every request received.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, answer := s.handle(r)
	s.mu.Lock()
	s.calls = append(s.calls, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, status))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

func (s *Server) handle(r *http.Request) (int, any) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return http.StatusBadRequest, map[string]string{"error": err.Error()}
	}
	if s.Inject != nil {
		if status := s.Inject(r); status != 0 {
			return status, map[string]string{"error": "injected fault"}
		}
	}
	region, caller, err := s.authorize(r, body)
	if err != nil {
		return http.StatusForbidden, map[string]string{"message": err.Error()}
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/v0/live":
		return http.StatusOK, map[string]string{"status": "ok"}
	case r.Method == http.MethodPost && r.URL.Path == "/api/v0/management_clusters":
		var in Registered
		if err := json.Unmarshal(body, &in); err != nil || in.Name == "" {
			return http.StatusBadRequest, map[string]string{"error": "want {\"name\": ..., \"labels\": {...}}"}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, reg := range s.registered {
			if reg.Name == in.Name && reg.Labels["region"] == in.Labels["region"] {
				return http.StatusConflict, map[string]string{"error": "consumer " + in.Name + " already exists"}
			}
		}
		in.RequestID, in.Caller, in.Region = r.Header.Get("X-Request-Id"), caller, region
		s.registered = append(s.registered, in)
		return http.StatusCreated, in
	}
	return http.StatusNotFound, map[string]string{"error": "no route " + r.Method + " " + r.URL.Path}
}

func (s *Server) authorize(r *http.Request, body []byte) (region, caller string, err error) {
	if s.Authorize == nil {
		region, err := s.verify(r, body)
		return region, s.Credentials.AccessKeyID, err
	}
	if caller, err = s.Authorize(r, body); err != nil {
		return "", "", err
	}
	scope := strings.Split(strings.SplitN(r.Header.Get("Authorization"), "Credential=", 2)[1], "/")
	return scope[2], caller, nil
}

// verify signs a copy of r with the server's credentials, at the time and
// for the region the request claims, and compares the signatures.
func (s *Server) verify(r *http.Request, body []byte) (region string, err error) {
	auth := r.Header.Get("Authorization")
	const algo = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, algo) {
		return "", fmt.Errorf("missing SigV4 Authorization")
	}
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, algo), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[3] != Service || scope[4] != "aws4_request" {
		return "", fmt.Errorf("credential scope %q is not for %s", fields["Credential"], Service)
	}
	if scope[0] != s.Credentials.AccessKeyID {
		return "", fmt.Errorf("unknown access key %s", scope[0])
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "", fmt.Errorf("bad X-Amz-Date: %v", err)
	}
	if d := time.Since(at); d > 15*time.Minute || d < -15*time.Minute {
		return "", fmt.Errorf("request time %s is too far from now", at)
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	again, err := http.NewRequestWithContext(context.Background(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		if h != "host" && h != "x-amz-date" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), s.Credentials, again, hex.EncodeToString(sum[:]), Service, scope[2], at); err != nil {
		return "", err
	}
	if again.Header.Get("Authorization") != auth {
		return "", fmt.Errorf("the SigV4 signature does not match")
	}
	return scope[2], nil
}
