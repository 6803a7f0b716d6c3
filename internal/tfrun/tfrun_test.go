package tfrun

import (
	"errors"
	"testing"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// terraform 1.11's answer when the S3 lock file is held; the S3 error
// before "Lock Info" carries a RequestID that must not be taken for the
// lock's ID.
const lockedOutput = `exit status 1

Error: Error acquiring the state lock

Error message: operation error S3: PutObject, https response error
StatusCode: 412, RequestID: 2NLOgRohgsvESYUoKmovRYq0jSZE7ESWQ9FgW23UG9Z2hT92rMMR,
api error PreconditionFailed: At least one of the pre-conditions you
specified did not hold
Lock Info:
  ID:        382a8928-28c4-748d-e9b1-393fcced0df3
  Path:      regionctl-tfstate-eu-west-1-mc01/management-cluster/eu-west-1/mc01.tfstate
  Operation: OperationTypeApply
  Who:       root@vm
`

func TestClassifyLock(t *testing.T) {
	var locked *pipeline.LockedError
	if err := classify("terraform apply", errors.New(lockedOutput)); !errors.As(err, &locked) || locked.ID != "382a8928-28c4-748d-e9b1-393fcced0df3" {
		t.Fatalf("a held lock: %v", err)
	}
	if err := classify("terraform apply", errors.New("exit status 1\n\nError: injected")); errors.As(err, &locked) {
		t.Fatalf("another failure taken for a lock: %v", err)
	}
}
