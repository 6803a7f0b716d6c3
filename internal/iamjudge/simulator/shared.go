package simulator

import (
	"errors"
	"os"
	"sync"
	"testing"
)

var (
	sharedOnce  sync.Once
	sharedJudge *Judge
	sharedErr   error
)

// Shared is one judge for the whole process (a test binary), started on
// first use.
func Shared() (*Judge, error) {
	sharedOnce.Do(func() {
		dir, err := Dir()
		if err != nil {
			sharedErr = err
			return
		}
		sharedJudge, sharedErr = Start(dir)
	})
	return sharedJudge, sharedErr
}

// Required says whether a missing judge fails rather than skips: on CI
// (CI=true) and wherever REGIONCTL_REQUIRE_JUDGES=1.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("REGIONCTL_REQUIRE_JUDGES") == "1"
}

// Require is the shared judge for a test: a test without it skips, naming
// the command that installs it, or fails where judges are required.
func Require(tb testing.TB) *Judge {
	tb.Helper()
	j, err := Shared()
	if err == nil {
		return j
	}
	if errors.Is(err, ErrMissing) && !Required() {
		tb.Skipf("skipping: %v", err)
	}
	tb.Fatalf("the second IAM judge: %v", err)
	return nil
}
