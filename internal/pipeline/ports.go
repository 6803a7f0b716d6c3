package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Credentials are AWS credentials; the zero value means the runner's own
// (ambient) identity: the pipeline's role, through IRSA in its cluster.
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
	OU    string // an OU path such as /platform/staging/eu-west-1/management
	// Tags are the account's regionctl tags (region, environment, cluster,
	// request id). An account found by name is adopted only when its
	// region, environment and cluster tags are these.
	Tags map[string]string
	// CreateOU lets the step create the OUs of the path that are missing;
	// only the central pipeline may.
	CreateOU bool
}

// Account is what the account step found or made.
type Account struct {
	ID      string
	Created bool // CreateAccount was called (or an earlier run's request was resumed)
	Moved   bool // the account was moved into its OU
	Tags    map[string]string
}

// Org is the organisation: its id, root and management account.
type Org struct {
	ID, RootID, Management string
}

// Organizations finds or creates accounts and OUs.
type Organizations interface {
	EnsureAccount(ctx context.Context, creds Credentials, spec AccountSpec) (Account, error)
	// EnsureOU returns the id of an OU path, creating what is missing when
	// create is set.
	EnsureOU(ctx context.Context, creds Credentials, path string, create bool) (string, error)
	Organization(ctx context.Context, creds Credentials) (Org, error)
	// FindAccount finds an account by name ("" when there is none) and
	// returns its tags.
	FindAccount(ctx context.Context, creds Credentials, name string) (id string, tags map[string]string, err error)
	TagAccount(ctx context.Context, creds Credentials, id string, tags map[string]string) error
	// EnsureGuardrailFeatures turns on what the organisation's guardrails
	// and the deploy roles' StackSets need, once for the organisation: SCPs
	// and RCPs on its root, AWS CloudFormation StackSets' and IAM's trusted
	// access, and centralized root access (new accounts without root user
	// credentials). It reports what it turned on.
	EnsureGuardrailFeatures(ctx context.Context, creds Credentials) (string, error)
}

// AssumeRequest is one sts:AssumeRole call.
type AssumeRequest struct {
	RoleARN     string
	ExternalID  string
	SessionName string
	Tags        map[string]string // session tags
	Policy      string            // a session policy, limiting the session further
	Base        Credentials       // whose credentials make the call; zero: ambient
}

// Identity is who a set of credentials is.
type Identity struct {
	Account, ARN string
}

// Roles assumes roles and says who a set of credentials is. The runner
// makes no role: the deploy role arrives through AWS CloudFormation.
type Roles interface {
	AssumeRole(ctx context.Context, req AssumeRequest) (Credentials, error)
	Caller(ctx context.Context, creds Credentials) (Identity, error)
}

// Object names an S3 object and the account that must own its bucket:
// every access checks the owner (x-amz-expected-bucket-owner), so a
// bucket of the same name in another account is never used.
type Object struct {
	Bucket, Key, Owner string
}

func (o Object) String() string { return "s3://" + o.Bucket + "/" + o.Key }

// Storage holds Terraform state buckets, run leases and state reads.
type Storage interface {
	// EnsureBucket creates a versioned, private bucket when it is missing;
	// an existing one must belong to owner.
	EnsureBucket(ctx context.Context, creds Credentials, bucket, region, owner string) (created bool, err error)
	// CheckBucket fails unless the bucket exists and belongs to owner.
	CheckBucket(ctx context.Context, creds Credentials, bucket, owner string) error
	// PutIfAbsent writes the object only when it does not exist; it returns
	// ErrExists when it does.
	PutIfAbsent(ctx context.Context, creds Credentials, o Object, body []byte) error
	Put(ctx context.Context, creds Credentials, o Object, body []byte) error
	Get(ctx context.Context, creds Credentials, o Object) ([]byte, error) // ErrNotFound when absent
	Delete(ctx context.Context, creds Credentials, o Object) error
	// GetVersion reads an object with its ETag, for a conditional write.
	GetVersion(ctx context.Context, creds Credentials, o Object) (body []byte, etag string, err error)
	// PutIfMatch replaces the object only while its ETag is etag (S3's
	// If-Match); ErrChanged when another writer came first, ErrNotFound
	// when it is gone.
	// It returns the new ETag.
	PutIfMatch(ctx context.Context, creds Credentials, o Object, body []byte, etag string) (string, error)
	// DeleteIfMatch removes the object only while its ETag is etag;
	// ErrChanged when another writer came first.
	DeleteIfMatch(ctx context.Context, creds Credentials, o Object, etag string) error
}

// Parameters reads SSM parameters (the central pipeline's handoff).
type Parameters interface {
	Parameter(ctx context.Context, creds Credentials, name string) (string, error) // ErrNotFound when absent
}

// Cloud is everything the runner asks of AWS.
type Cloud interface {
	Organizations
	Roles
	Storage
	Parameters
	Tasks
}

// ErrExists and ErrNotFound are returned by Storage and Parameters.
var (
	ErrExists   = errors.New("object exists")
	ErrNotFound = errors.New("not found")
	ErrChanged  = errors.New("object changed since it was read")
)

// DocumentsDir is where a root reads the rendered documents a job stages
// beside its files (terraform/central-bootstrap: iam/).
const DocumentsDir = "iam"

// TerraformJob is one init + apply (or destroy) of a root for a cluster.
// Terraform acts with the runner's own identity for its state and through
// the role in Vars (assume_role_arn) for the resources.
type TerraformJob struct {
	Cluster string // region/cluster, the prefix of its log lines
	Root    string // root name, e.g. management-cluster
	VarFile string // absolute path of the rendered tfvars
	// Documents is the absolute path of the rendered documents the root
	// reads from DocumentsDir beside its files (the region's IAM
	// documents), or "".
	Documents string
	// Vars are the root's run-time variables (terraform.Runtime).
	Vars    map[string]string
	Backend map[string]string
	Region  string
	Destroy bool
	Log     io.Writer // Terraform's output, already prefixed by the caller
	// SavedPlan, when set, is a plan of these inputs made before (and
	// reviewed): Run applies exactly it, and fails with ErrStalePlan when
	// the state changed since it was made.
	SavedPlan []byte
}

// Terraform runs Terraform roots.
type Terraform interface {
	// Run inits the root with its S3 backend and applies (or destroys) it,
	// returning its outputs. A held state lock is a *LockedError.
	Run(ctx context.Context, job TerraformJob) (outputs map[string]string, err error)
	ForceUnlock(ctx context.Context, job TerraformJob, lockID string) error
	// Plan inits the root like Run and plans it (a destroy when
	// job.Destroy), changing nothing; the result's summary has its ID.
	Plan(ctx context.Context, job TerraformJob) (*PlanResult, error)
	// InputID identifies everything a plan of job is made from but the
	// state: the root's and modules' files, the variables (the session
	// name aside) and the command.
	InputID(job TerraformJob) (string, error)
}

// ErrStalePlan says Terraform refused a saved plan because the state
// changed since the plan was made.
var ErrStalePlan = errors.New("the saved plan is stale")

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
}

// Registry registers management clusters with the platform API, signing
// with the runner's own identity.
type Registry interface {
	// Register waits for GET /api/v0/live, then POSTs the cluster. outcome is
	// "created" or "already registered".
	Register(ctx context.Context, reg Registration) (outcome string, err error)
}
