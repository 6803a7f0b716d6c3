// Package apiserver runs a real Kubernetes control plane for tests, the
// envtest way: the kube-apiserver built from the k8s.io/kubernetes module
// (tools/kube-apiserver, make kube-apiserver) and Debian's etcd, on
// loopback, with RBAC and the PodSecurity admission plugin on. Rendered
// objects are judged by it: what it admits, refuses and warns about is
// Kubernetes' own answer, not regionctl's model of it.
//
// Binaries are found in $KUBEBUILDER_ASSETS (kube-apiserver, etcd), as
// controller-runtime's envtest expects them, else kube-apiserver in
// regionctl's cache (Dir) and etcd on PATH. Test infrastructure: nothing
// shipped imports it.
package apiserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/kube"
)

// Version is the Kubernetes release tools/kube-apiserver/go.mod pins.
const Version = "v1.37.2"

// Install is the command that builds the API server into Dir.
const Install = "make kube-apiserver (builds tools/kube-apiserver, about 6 minutes of CPU once; apt-get install etcd-server for etcd)"

// Dir is where make kube-apiserver leaves the binary: the user cache
// directory, by version, so that every clone of the repository shares it.
func Dir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "regionctl", "envtest", Version)
}

// Binaries are the paths of kube-apiserver and etcd, or an error naming
// the one missing and how to get it.
func Binaries() (apiserver, etcd string, err error) {
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		apiserver, etcd = filepath.Join(assets, "kube-apiserver"), filepath.Join(assets, "etcd")
	} else {
		apiserver = filepath.Join(Dir(), "kube-apiserver")
		if etcd, err = exec.LookPath("etcd"); err != nil {
			return "", "", fmt.Errorf("no etcd on PATH: apt-get install etcd-server")
		}
	}
	for _, p := range []string{apiserver, etcd} {
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("no %s: %s", p, Install)
		}
	}
	return apiserver, etcd, nil
}

// Server is a running control plane.
type Server struct {
	// URL is the API server's https URL on loopback.
	URL string
	// AdminToken authenticates as a member of system:masters.
	AdminToken string
	client     *http.Client
	procs      []*exec.Cmd
	dir        string
	logs       []*os.File
}

// Start starts etcd and the API server in dir (their data, keys and logs)
// and waits until /readyz answers.
func Start(ctx context.Context, dir string) (*Server, error) {
	apiserverBin, etcdBin, err := Binaries()
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, AdminToken: randomToken()}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	if err := s.start(etcdBin, "etcd", "--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", etcdURL,
		"--advertise-client-urls", etcdURL, "--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", ports[1]), "--quota-backend-bytes", "268435456"); err != nil {
		return nil, err
	}
	key := filepath.Join(dir, "sa.key")
	if err := writeKey(key); err != nil {
		s.Stop()
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(s.AdminToken+",admin,admin,system:masters\n"), 0o600); err != nil {
		s.Stop()
		return nil, err
	}
	certs := filepath.Join(dir, "certs")
	if err := s.start(apiserverBin, "kube-apiserver", "--etcd-servers", etcdURL, "--bind-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(ports[2]), "--cert-dir", certs, "--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", key, "--service-account-signing-key-file", key, "--token-auth-file", tokens,
		"--authorization-mode", "RBAC", "--enable-admission-plugins", "PodSecurity", "--service-cluster-ip-range", "10.96.0.0/12"); err != nil {
		s.Stop()
		return nil, err
	}
	s.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	// The server's own self-signed certificate, once it wrote it.
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec: loopback test server, no CA yet
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if err := s.ready(ctx); err == nil {
			break
		} else if time.Now().After(deadline) || ctx.Err() != nil {
			s.Stop()
			return nil, fmt.Errorf("the API server was not ready within 3 minutes (%v); its log: %s", err, filepath.Join(dir, "kube-apiserver.log"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if pool, err := certPool(certs); err == nil {
		s.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
		if err := s.ready(ctx); err != nil {
			s.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // #nosec: loopback
		}
	}
	return s, nil
}

func (s *Server) start(bin, name string, args ...string) error {
	log, err := os.Create(filepath.Join(s.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	s.procs = append(s.procs, cmd)
	s.logs = append(s.logs, log)
	return nil
}

// Stop stops the API server, then etcd, by PID.
func (s *Server) Stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	for _, l := range s.logs {
		l.Close()
	}
	s.procs, s.logs = nil, nil
}

func (s *Server) ready(ctx context.Context) error {
	resp, err := s.Do(ctx, "GET", "/readyz", nil, nil)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("/readyz: %d %s", resp.Status, resp.Body)
	}
	return nil
}

// Response is an answer of the API server: its status, body and the
// Warning headers admission added (PodSecurity's warn mode among them).
type Response struct {
	Status   int
	Body     []byte
	Warnings []string
}

// Do sends a request as the admin (or as headers' Authorization or
// impersonation say).
func (s *Server) Do(ctx context.Context, method, path string, body any, headers http.Header) (*Response, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, vs := range headers {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Body: b, Warnings: resp.Header.Values("Warning")}, nil
}

// Create creates obj (a decoded manifest) at path (the collection), and
// returns the answer: a refusal is a Response, not an error.
func (s *Server) Create(ctx context.Context, path string, obj map[string]any) (*Response, error) {
	return s.Do(ctx, "POST", path, obj, nil)
}

// DryRun creates obj at path with ?dryRun=All: admission and validation
// decide in full, and nothing is stored (objects of the same name, of
// different clusters, can all be judged in one namespace).
func (s *Server) DryRun(ctx context.Context, path string, obj map[string]any) (*Response, error) {
	return s.Do(ctx, "POST", path+"?dryRun=All", obj, nil)
}

// InstallCRDs creates CustomResourceDefinitions (decoded manifests) and
// waits until each is Established, so that its kind can be created.
func (s *Server) InstallCRDs(ctx context.Context, crds []map[string]any) error {
	var names []string
	for _, crd := range crds {
		resp, err := s.Create(ctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
		if err != nil {
			return err
		}
		if resp.Status != http.StatusCreated {
			return fmt.Errorf("creating a CRD: %d %s", resp.Status, resp.Message())
		}
		names = append(names, crd["metadata"].(map[string]any)["name"].(string))
	}
	deadline := time.Now().Add(time.Minute)
	for _, name := range names {
		for {
			resp, err := s.Do(ctx, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil, nil)
			if err != nil {
				return err
			}
			var crd struct {
				Status struct {
					Conditions []struct{ Type, Status string } `json:"conditions"`
				} `json:"status"`
			}
			_ = json.Unmarshal(resp.Body, &crd)
			established := false
			for _, c := range crd.Status.Conditions {
				established = established || c.Type == "Established" && c.Status == "True"
			}
			if established {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not established within a minute", name)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// As are the headers that make a request on user's behalf (the admin may
// impersonate anyone), with the groups its token would carry: the API
// server authorizes and admits it as that user.
func As(user string) http.Header {
	h := http.Header{"Impersonate-User": {user}}
	for _, g := range groups(user) {
		h.Add("Impersonate-Group", g)
	}
	return h
}

// groups are the groups Kubernetes puts a user's token in: every
// ServiceAccount is in system:serviceaccounts and that of its namespace.
func groups(user string) []string {
	out := []string{"system:authenticated"}
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		ns, _, _ := strings.Cut(rest, ":")
		out = append(out, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	}
	return out
}

// Apply server-side applies obj (a decoded manifest) as manager, the way
// kubectl apply --server-side and Argo CD's server-side sync do, into ns
// when its kind is namespaced and it names none; with dryRun, admission
// and validation decide in full and nothing is stored. A refusal is a
// Response, not an error.
func (s *Server) Apply(ctx context.Context, obj map[string]any, ns, manager string, dryRun bool, headers http.Header) (*Response, error) {
	p, err := s.ObjectPath(ctx, obj, ns)
	if err != nil {
		return nil, err
	}
	q := "?fieldManager=" + manager + "&force=true"
	if dryRun {
		q += "&dryRun=All"
	}
	h := http.Header{"Content-Type": {"application/apply-patch+yaml"}}
	for k, v := range headers {
		h[k] = v
	}
	return s.Do(ctx, "PATCH", p+q, obj, h)
}

// ObjectPath is obj's REST path, its kind's resource found by the API
// server's discovery (regionctl's own client, as the bootstrap finds it),
// in its own namespace or else ns when namespaced.
func (s *Server) ObjectPath(ctx context.Context, obj map[string]any, ns string) (string, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if n, _ := meta["namespace"].(string); n != "" {
		ns = n
	}
	// A client per call: discovery is asked afresh, after any CRD.
	c := &kube.Client{Base: s.URL, Token: s.AdminToken, HTTP: s.client}
	return c.ObjectPath(ctx, apiVersion, kind, ns, name)
}

// Can asks the API server's own authorizer (a SubjectAccessReview)
// whether user may verb the resource of group in ns ("" for a
// cluster-scoped resource or every namespace).
func (s *Server) Can(ctx context.Context, user, verb, group, resource, ns string) (bool, error) {
	resp, err := s.Create(ctx, "/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": map[string]any{"user": user, "groups": groups(user), "resourceAttributes": map[string]any{
			"namespace": ns, "verb": verb, "group": group, "resource": resource}},
	})
	if err != nil {
		return false, err
	}
	var review struct {
		Status struct {
			Allowed bool `json:"allowed"`
		} `json:"status"`
	}
	if resp.Status != http.StatusCreated || json.Unmarshal(resp.Body, &review) != nil {
		return false, fmt.Errorf("a SubjectAccessReview: %d %s", resp.Status, resp.Message())
	}
	return review.Status.Allowed, nil
}

// HTTPClient is a client that trusts the server's certificate, for a
// caller that brings its own credentials (a ServiceAccount's token).
func (s *Server) HTTPClient() *http.Client { return s.client }

// Message is the message of a refusal's Status body.
func (r *Response) Message() string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(r.Body, &st) == nil && st.Message != "" {
		return st.Message
	}
	return strings.TrimSpace(string(r.Body))
}

func freePorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func writeKey(path string) error {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	return os.WriteFile(path, b, 0o600)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func certPool(dir string) (*x509.CertPool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "apiserver.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no certificate in apiserver.crt")
	}
	return pool, nil
}

// Required reports whether a missing API server fails a test rather than
// skipping it: on CI (CI=true) and wherever REGIONCTL_REQUIRE_JUDGES=1.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("REGIONCTL_REQUIRE_JUDGES") == "1"
}

// StartTest starts a control plane for t in a temporary directory and
// stops it when t ends; without one, t skips with the command that builds
// it, or fails where the judge is required.
func StartTest(t testing.TB) *Server {
	t.Helper()
	if _, _, err := Binaries(); err != nil {
		if Required() {
			t.Fatalf("the Kubernetes API server judge: %v", err)
		}
		t.Skipf("no Kubernetes API server: %v", err)
	}
	s, err := Start(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}
