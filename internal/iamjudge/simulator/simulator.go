// Package simulator is regionctl's second IAM judge: the IAM simulator
// @cloud-copilot/iam-simulate, built from AWS's published service data and
// maintained by others, run by Node.js from tools/iamsim. The project's own
// evaluator (internal/iamjudge) and this one are asked the same questions;
// where they differ, AWS's documentation decides.
//
// Entry points: Start (or Shared, for tests) runs the judge; Judge.Simulate
// decides one request, Judge.Validate holds a policy document to the
// service data, and Compare asks both judges about one iamjudge
// authorization. The simulator is AGPL-3.0 and test-only: it is installed
// by `make iamsim` into tools/iamsim/node_modules and never shipped.
package simulator

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// InstallCommand is what installs the judge on a machine without it.
const InstallCommand = "make iamsim   (npm ci in tools/iamsim; Node.js 20 or newer)"

// Judge is a running simulator. It is safe for concurrent use: requests are
// answered one at a time, in order.
type Judge struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	// stderr keeps what node said, for the error of a judge that died.
	stderr *strings.Builder
}

// Dir finds tools/iamsim: REGIONCTL_IAMSIM, or tools/iamsim of the module
// the working directory is in (tests run in their package's directory).
func Dir() (string, error) {
	if d := os.Getenv("REGIONCTL_IAMSIM"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/regionctl/regionctl\n") {
			return filepath.Join(d, "tools", "iamsim"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no regionctl module above %s to find tools/iamsim in", wd)
		}
	}
}

// ErrMissing says the judge is not installed here.
var ErrMissing = errors.New("the IAM simulator is not installed")

// Start runs the judge of dir.
func Start(dir string) (*Judge, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: no node on PATH; install Node.js, then %s", ErrMissing, InstallCommand)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@cloud-copilot", "iam-simulate", "package.json")); err != nil {
		return nil, fmt.Errorf("%w in %s: run %s", ErrMissing, dir, InstallCommand)
	}
	cmd := exec.Command(node, filepath.Join(dir, "judge.mjs"))
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &limited{w: &stderr, n: 64 << 10}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the IAM simulator: %w", err)
	}
	j := &Judge{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: &stderr}
	if _, err := j.Versions(); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// limited writes at most n bytes to w.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}

// Close stops the judge.
func (j *Judge) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.in.Close()
	return j.cmd.Wait()
}

// call sends one request and reads its answer into v.
func (j *Judge) call(req any, v any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("the IAM simulator: %w (%s)", err, j.stderr.String())
	}
	line, err := j.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("the IAM simulator: %w (%s)", err, j.stderr.String())
	}
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(line, &failed) == nil && failed.Error != "" {
		return fmt.Errorf("the IAM simulator: %s", failed.Error)
	}
	return json.Unmarshal(line, v)
}

// Versions are the simulator's packages and their versions.
func (j *Judge) Versions() (map[string]string, error) {
	var a struct {
		Versions map[string]string `json:"versions"`
	}
	err := j.call(map[string]string{"op": "version"}, &a)
	return a.Versions, err
}

// Kind is what a policy document is, for its syntax rules.
type Kind string

const (
	Identity Kind = "identity"
	Boundary Kind = "boundary"
	Resource Kind = "resource"
	Trust    Kind = "trust"
	SCP      Kind = "scp"
	RCP      Kind = "rcp"
	Session  Kind = "session"
)

// Validate holds doc, a policy of kind, to the policy syntax and AWS's
// service authorization data; each problem names its statement.
func (j *Judge) Validate(kind Kind, doc []byte) ([]string, error) {
	var policy any
	if err := json.Unmarshal(doc, &policy); err != nil {
		return nil, fmt.Errorf("the policy is not JSON: %w", err)
	}
	var a struct {
		Problems []string `json:"problems"`
	}
	err := j.call(map[string]any{"op": "validate", "kind": kind, "policy": policy}, &a)
	return a.Problems, err
}

// Simulation is one request with everything the simulator weighs, in its
// own terms (its Simulation type).
type Simulation struct {
	Request                    Request       `json:"request"`
	SessionPolicy              any           `json:"sessionPolicy,omitempty"`
	IdentityPolicies           []Named       `json:"identityPolicies"`
	ServiceControlPolicies     []OrgPolicies `json:"serviceControlPolicies"`
	ResourceControlPolicies    []OrgPolicies `json:"resourceControlPolicies"`
	ResourcePolicy             any           `json:"resourcePolicy,omitempty"`
	PermissionBoundaryPolicies []Named       `json:"permissionBoundaryPolicies,omitempty"`
}

// Request is the request of a Simulation. Principal is an ARN, or the
// anonymous marker (AnonymousPrincipal).
type Request struct {
	Principal        any                 `json:"principal"`
	Action           string              `json:"action"`
	Resource         RequestResource     `json:"resource"`
	ContextVariables map[string][]string `json:"contextVariables"`
}

// RequestResource is the resource of a request and its account.
type RequestResource struct {
	Resource  string `json:"resource"`
	AccountID string `json:"accountId"`
}

// AnonymousPrincipal is the simulator's marker of an unsigned request.
var AnonymousPrincipal = map[string]string{"type": "Anonymous"}

// Named is a policy with its name.
type Named struct {
	Name   string `json:"name"`
	Policy any    `json:"policy"`
}

// OrgPolicies are the SCPs or RCPs of one level of the organisation: the
// root, an OU, or the account itself.
type OrgPolicies struct {
	OrgIdentifier string  `json:"orgIdentifier"`
	Policies      []Named `json:"policies"`
}

// Answer is the simulator's decision: Result is Allowed,
// ImplicitlyDenied or ExplicitlyDenied, unless Errors says it refused the
// request (an unknown action, a resource the action does not authorize
// on, ...).
type Answer struct {
	Result             string          `json:"result"`
	Errors             json.RawMessage `json:"errors,omitempty"`
	IgnoredContextKeys []string        `json:"ignoredContextKeys,omitempty"`
	Denials            map[string]any  `json:"denials,omitempty"`
	// Wildcard says the request's resource was "*" for an action AWS
	// authorizes on resource types: the simulator answered for any
	// resource at once, which is not one request AWS decides.
	Wildcard bool `json:"wildcard,omitempty"`
}

// Refused says the simulator would not decide the request, and why.
func (a Answer) Refused() string {
	if len(a.Errors) == 0 {
		return ""
	}
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(a.Errors, &e)
	if e.Message != "" {
		return e.Message + " " + string(a.Errors)
	}
	return string(a.Errors)
}

// Simulate decides one request.
func (j *Judge) Simulate(s Simulation) (Answer, error) {
	if s.IdentityPolicies == nil {
		s.IdentityPolicies = []Named{}
	}
	if s.ServiceControlPolicies == nil {
		s.ServiceControlPolicies = []OrgPolicies{}
	}
	if s.ResourceControlPolicies == nil {
		s.ResourceControlPolicies = []OrgPolicies{}
	}
	if s.Request.ContextVariables == nil {
		s.Request.ContextVariables = map[string][]string{}
	}
	var a Answer
	err := j.call(map[string]any{"op": "simulate", "simulation": s}, &a)
	return a, err
}
