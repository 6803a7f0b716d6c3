package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Credentials are AWS credentials; the zero value means the runner's own
// (ambient) credentials.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Expires         time.Time
}

// AccountSpec names the account the account step finds or creates.
type AccountSpec struct {
	Name  string
	Email string
	OU    string // an OU path such as /platform/staging
	Tags  map[string]string
}

// Account is what the account step found or made.
type Account struct {
	ID      string
	Created bool // CreateAccount was called (or an earlier run's request was resumed)
	Moved   bool // the account was moved into its OU
}

// AssumeRequest is one sts:AssumeRole call.
type AssumeRequest struct {
	RoleARN     string
	ExternalID  string
	SessionName string
	Tags        map[string]string
	Base        Credentials // whose credentials make the call; zero: ambient
}

// RoleSpec is an IAM role the runner makes sure exists.
type RoleSpec struct {
	Name      string
	TrustJSON string
	Tags      map[string]string
	Policies  []string // managed policy ARNs to attach
}

// Organizations finds or creates accounts by name and places them in OUs.
type Organizations interface {
	EnsureAccount(ctx context.Context, spec AccountSpec) (Account, error)
}

// Roles assumes roles and makes sure roles exist.
type Roles interface {
	AssumeRole(ctx context.Context, req AssumeRequest) (Credentials, error)
	EnsureRole(ctx context.Context, creds Credentials, spec RoleSpec) (created bool, err error)
	// CallerAccount is the account id of creds (zero: the ambient ones).
	CallerAccount(ctx context.Context, creds Credentials) (string, error)
}

// Storage holds Terraform state buckets, run leases and state reads.
type Storage interface {
	EnsureBucket(ctx context.Context, creds Credentials, bucket, region string) (created bool, err error)
	// PutIfAbsent writes key only when it does not exist; it returns
	// ErrExists when it does.
	PutIfAbsent(ctx context.Context, creds Credentials, bucket, key string, body []byte) error
	Get(ctx context.Context, creds Credentials, bucket, key string) ([]byte, error) // ErrNotFound when absent
	Delete(ctx context.Context, creds Credentials, bucket, key string) error
}

// Cloud is everything the runner asks of AWS.
type Cloud interface {
	Organizations
	Roles
	Storage
}

// ErrExists and ErrNotFound are returned by Storage.
var (
	ErrExists   = errors.New("object exists")
	ErrNotFound = errors.New("object not found")
)

// TerraformJob is one init + apply (or destroy) of a root for a cluster.
type TerraformJob struct {
	Cluster string // region/cluster, the prefix of its log lines
	Root    string // root name, e.g. management-cluster
	VarFile string // absolute path of the rendered tfvars
	Backend map[string]string
	Region  string
	Creds   Credentials
	Destroy bool
	Log     io.Writer // Terraform's output, already prefixed by the caller
}

// Terraform runs Terraform roots.
type Terraform interface {
	// Run inits the root with its S3 backend and applies (or destroys) it,
	// returning its outputs. A held state lock is a *LockedError.
	Run(ctx context.Context, job TerraformJob) (outputs map[string]string, err error)
	ForceUnlock(ctx context.Context, job TerraformJob, lockID string) error
}

// LockedError says Terraform found the state locked.
type LockedError struct {
	ID  string // Terraform's lock ID
	Err error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("the state is locked (lock ID %s): %v", e.ID, e.Err)
}
func (e *LockedError) Unwrap() error { return e.Err }

// Registration is one management cluster registration with the platform API.
type Registration struct {
	Endpoint  string
	Name      string
	Labels    map[string]string
	Region    string // signing region
	RequestID string
	Creds     Credentials
}

// Registry registers management clusters with the platform API.
type Registry interface {
	// Register waits for GET /api/v0/live, then POSTs the cluster. outcome is
	// "created" or "already registered".
	Register(ctx context.Context, reg Registration) (outcome string, err error)
}
