package tfrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestDocumentsAreStagedAndBound: a job's rendered documents are staged
// beside its root as exactly the regular .json files of their directory
// (a removed one goes, a link is refused), and the plan input identity an
// approval binds changes with their bytes, whatever the checkout's path.
func TestDocumentsAreStagedAndBound(t *testing.T) {
	src := t.TempDir()
	root := filepath.Join(src, "central-bootstrap")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "main.tf"), []byte("# root\n"), 0o644)
	docs := func(dir string) string {
		d := filepath.Join(dir, "deploy", "production", "eu-west-1", "iam")
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "minting-role-policy.json"), []byte(`{"Version":"2012-10-17"}`), 0o644)
		os.WriteFile(filepath.Join(d, "README"), []byte("not a document"), 0o644)
		return d
	}
	checkout := t.TempDir()
	job := pipeline.TerraformJob{Cluster: "eu-west-1/regional", Root: "central-bootstrap", VarFile: filepath.Join(src, "vars.json"), Documents: docs(checkout)}
	os.WriteFile(job.VarFile, []byte("{}"), 0o644)
	r := &Runner{Source: src, WorkDir: t.TempDir()}
	first, err := r.InputID(job)
	if err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(r.Workspace(job), "central-bootstrap", pipeline.DocumentsDir)
	if names, _ := filepath.Glob(filepath.Join(staged, "*")); len(names) != 1 || filepath.Base(names[0]) != "minting-role-policy.json" {
		t.Fatalf("staged %v, want the one document", names)
	}
	// Another checkout of the same commit: the same identity.
	other := job
	other.Documents = docs(t.TempDir())
	if id, err := r.InputID(other); err != nil || id != first {
		t.Errorf("another checkout's path changed the plan's identity: %v", err)
	}
	os.WriteFile(filepath.Join(job.Documents, "minting-role-policy.json"), []byte(`{"Version":"2012-10-17","Statement":[]}`), 0o644)
	if id, err := r.InputID(job); err != nil || id == first {
		t.Errorf("a changed document left the plan's identity as it was: %v", err)
	}
	os.Remove(filepath.Join(job.Documents, "minting-role-policy.json"))
	if _, err := r.InputID(job); err != nil {
		t.Fatal(err)
	}
	if names, _ := filepath.Glob(filepath.Join(staged, "*")); len(names) != 0 {
		t.Errorf("a removed document is still staged: %v", names)
	}
	os.Symlink("/etc/passwd", filepath.Join(job.Documents, "scp-guardrails.json"))
	if _, err := r.InputID(job); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a linked document was staged: %v", err)
	}
}
