// Package awsemu starts and stops moto_server, an AWS emulator, on a free
// loopback port, for the end-to-end tests and `make demo`. Only 127.0.0.1
// is ever used.
//
// Entry point: Start.
package awsemu

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"

	"github.com/regionctl/regionctl/internal/par"
)

// Credentials the emulator accepts (it checks none).
const (
	AccessKeyID     = "testing"
	SecretAccessKey = "testing"
)

// Emulator is a running moto_server.
type Emulator struct {
	URL string
	PID int
	// Speedups are the names of the changes of speedups.py that the
	// emulator's moto took (none with REGIONCTL_EMULATOR_SPEEDUPS=0).
	Speedups []string
	cmd      *exec.Cmd
	log      *os.File
	site     string // the directory holding speedups.py as sitecustomize.py
}

// speedups makes moto spend less CPU on what it answers the same: see
// the file. The end-to-end tests run some 20 pipelines against moto,
// whose CPU was a quarter of the suite's.
//
//go:embed speedups.py
var speedups []byte

// Speedups is every change speedups.py makes where moto has the shape it
// was written for, as Emulator.Speedups names them.
var Speedups = []string{"module-list", "managed-policies-parsed-once", "account-lookup-without-making-backends"}

// siteDir writes speedups.py as the sitecustomize module of a new
// directory, for PYTHONPATH, unless REGIONCTL_EMULATOR_SPEEDUPS=0 asks
// for moto as installed ("": none).
func siteDir() (string, error) {
	if os.Getenv("REGIONCTL_EMULATOR_SPEEDUPS") == "0" {
		return "", nil
	}
	dir, err := os.MkdirTemp("", "regionctl-moto-site-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "sitecustomize.py"), speedups, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Start runs moto_server on 127.0.0.1 at a free port and waits until it
// answers. log receives its output (nil: discarded).
func Start(ctx context.Context, logPath string) (*Emulator, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("moto_server is not on PATH (pip install 'moto[server]'): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	ownProcessGroup(cmd)
	// The deploy role attaches the AWS managed AdministratorAccess policy,
	// which moto knows only when told to load the managed policies.
	// moto never looks a DNS validation record up: it issues a requested
	// certificate once this many seconds have passed (60 by default), and
	// the roots create the record before they wait for the certificate.
	cmd.Env = append(os.Environ(), "MOTO_IAM_LOAD_MANAGED_POLICIES=true", "MOTO_ACM_VALIDATION_WAIT=1")
	site, err := siteDir()
	if err != nil {
		return nil, err
	}
	if site != "" {
		path := site
		if old := os.Getenv("PYTHONPATH"); old != "" {
			path += string(os.PathListSeparator) + old
		}
		cmd.Env = append(cmd.Env, "PYTHONPATH="+path)
	}
	e := &Emulator{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, site: site}
	if logPath != "" {
		if e.log, err = os.Create(logPath); err != nil {
			e.removeSite()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = e.log, e.log
	}
	if err := cmd.Start(); err != nil {
		e.removeSite()
		return nil, fmt.Errorf("starting moto_server: %w", err)
	}
	e.PID = cmd.Process.Pid
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(e.URL + "/moto-api/data.json")
		if err == nil {
			resp.Body.Close()
			// moto runs no container: an ECS task would only step through
			// its states one describe at a time; it stops at once here.
			if err := e.transition("ecs::task", `{"progression":"immediate"}`); err != nil {
				_ = e.Stop()
				return nil, err
			}
			if e.site != "" {
				b, _ := os.ReadFile(filepath.Join(e.site, "applied.txt"))
				e.Speedups = strings.Fields(string(b))
			}
			return e, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = e.Stop()
			return nil, fmt.Errorf("moto_server on %s did not answer within 60s: %v", e.URL, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// transition sets how moto moves a model through its states.
func (e *Emulator) transition(model, transition string) error {
	body := `{"model_name":"` + model + `","transition":` + transition + `}`
	resp, err := http.Post(e.URL+"/moto-api/state-manager/set-transition", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moto set-transition %s: HTTP %d", model, resp.StatusCode)
	}
	return nil
}

// Stop ends the emulator by its PID (its process group), waiting for it.
func (e *Emulator) Stop() error {
	if e == nil || e.cmd == nil {
		return nil
	}
	signalGroup(e.cmd, false)
	done := make(chan error, 1)
	go func() { done <- e.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		signalGroup(e.cmd, true)
		<-done
	}
	if e.log != nil {
		e.log.Close()
	}
	e.removeSite()
	e.cmd = nil
	return nil
}

func (e *Emulator) removeSite() {
	if e.site != "" {
		os.RemoveAll(e.site)
	}
}

// Reset empties every service's state.
func (e *Emulator) Reset() error {
	resp, err := http.Post(e.URL+"/moto-api/reset", "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moto reset: HTTP %d", resp.StatusCode)
	}
	return nil
}

// Env is the environment that points aws-sdk-go-v2, Terraform and the
// aws provider at the emulator.
func (e *Emulator) Env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL":          e.URL,
		"AWS_ACCESS_KEY_ID":         AccessKeyID,
		"AWS_SECRET_ACCESS_KEY":     SecretAccessKey,
		"AWS_REGION":                "us-east-1",
		"AWS_EC2_METADATA_DISABLED": "true",
	}
}

// warmCalls are one cheap read per service, as moto loads a service's
// backend (slowly, on two cores) on its first call.
var warmCalls = map[string][2]string{
	"ec2":                  {"POST", "Action=DescribeVpcs&Version=2016-11-15"},
	"iam":                  {"POST", "Action=ListRoles&Version=2010-05-08"},
	"sts":                  {"POST", "Action=GetCallerIdentity&Version=2011-06-15"},
	"eks":                  {"GET", "/clusters"},
	"apigateway":           {"GET", "/v2/apis"},
	"iot":                  {"GET", "/policies"},
	"route53":              {"GET", "/2013-04-01/hostedzone"},
	"s3":                   {"GET", "/"},
	"organizations":        {"POST", "AWSOrganizationsV20161128.ListRoots"},
	"ssm":                  {"POST", "AmazonSSM.DescribeParameters"},
	"acm":                  {"POST", "CertificateManager.ListCertificates"},
	"secretsmanager":       {"POST", "secretsmanager.ListSecrets"},
	"elasticloadbalancing": {"POST", "Action=DescribeLoadBalancers&Version=2015-12-01"},
}

// Prewarm touches each service once, in parallel.
func (e *Emulator) Prewarm(ctx context.Context, services ...string) error {
	errs := make([]error, len(services))
	par.Workers(len(services), len(services), func(_, i int) { errs[i] = e.touch(ctx, services[i]) })
	return errors.Join(errs...)
}

func (e *Emulator) touch(ctx context.Context, svc string) error {
	call, ok := warmCalls[svc]
	if !ok {
		return fmt.Errorf("no warm-up call for %s", svc)
	}
	var req *http.Request
	var body []byte
	var err error
	switch {
	case call[0] == "GET":
		req, err = http.NewRequestWithContext(ctx, "GET", e.URL+call[1], nil)
	case !strings.Contains(call[1], "="): // a JSON protocol target
		body = []byte("{}")
		req, err = http.NewRequestWithContext(ctx, "POST", e.URL+"/", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("X-Amz-Target", call[1])
			req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		}
	default:
		body = []byte(call[1])
		req, err = http.NewRequestWithContext(ctx, "POST", e.URL+"/", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return err
	}
	resp, err := send(ctx, req, body, aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey}, svc, "us-east-1")
	if err != nil {
		return fmt.Errorf("warming %s: %w", svc, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 { // a 4xx (no organisation yet) still loaded the service
		return fmt.Errorf("warming %s: HTTP %d", svc, resp.StatusCode)
	}
	return nil
}

// EKSClusters lists the EKS clusters that creds' account has in region
// (a signed GET /clusters, so that no EKS client is needed).
func (e *Emulator) EKSClusters(ctx context.Context, creds aws.Credentials, region string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", e.URL+"/clusters", nil)
	if err != nil {
		return nil, err
	}
	resp, err := send(ctx, req, nil, creds, "eks", region)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Clusters []string `json:"clusters"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("listing EKS clusters: %w", err)
	}
	sort.Strings(out.Clusters)
	return out.Clusters, nil
}

// send signs req (whose body is body) with SigV4 for svc in region and
// sends it.
func send(ctx context.Context, req *http.Request, body []byte, creds aws.Credentials, svc, region string) (*http.Response, error) {
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), svc, region, time.Now()); err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

// Config is an SDK configuration for endpoint (the gate or the emulator)
// with static credentials, retrying no answer: only a request whose
// connection broke (moto resets a kept-alive connection now and then under
// load) is sent again, so a denial or an error is seen as it was given.
// The SDK's own log is dropped: what it warns of here (a broken
// connection's unread body) the call's error says, and its default log,
// standard error, buries a failing test's report under lines of it.
func Config(endpoint, region string, creds aws.Credentials) aws.Config {
	cfg, _ := config.LoadDefaultConfig(context.Background(), config.WithRegion(region), config.WithBaseEndpoint(endpoint),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken)),
		config.WithLogger(logging.Nop{}),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.Retryables = []retry.IsErrorRetryable{retry.RetryableConnectionError{}}
				o.RateLimiter = ratelimit.None
			})
		}))
	return cfg
}

// Call sends one SigV4-signed request without a body to endpoint (the gate
// or the emulator) and returns the answer's status and body, for calls the
// project has no SDK client for.
func Call(ctx context.Context, endpoint string, creds aws.Credentials, service, region, method, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, endpoint+path, nil)
	if err != nil {
		return 0, nil, err
	}
	if creds.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", creds.SessionToken)
	}
	resp, err := send(ctx, req, nil, creds, service, region)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
