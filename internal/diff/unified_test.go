package diff

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every file diff of a review applies with git apply and turns the base's
// deploy/ into the head's, byte for byte.
func TestFileDiffsApplyWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := map[string][]byte{
		"production/eu-west-1/terraform/mc01.tfvars.json": []byte("{\n  \"a\": 1,\n  \"b\": 2\n}\n"),
		"production/eu-west-1/argocd/mc01/apps/gone.yaml": []byte("kind: Application\nname: gone\n"),
		"production/eu-west-1/iam/no-newline.json":        []byte("{\"x\": 1}"),
		"production/eu-west-1/iam/gains-newline.json":     []byte("{\"y\": 1}"),
		"production/eu-west-1/iam/loses-newline.json":     []byte("{\"z\": 1}\n"),
		"production/eu-west-1/iam/unchanged.json":         []byte("same\n"),
		"production/eu-west-1/iam/emptied.json":           []byte("line\n"),
	}
	head := map[string][]byte{
		"production/eu-west-1/terraform/mc01.tfvars.json": []byte("{\n  \"a\": 1,\n  \"b\": 3\n}\n"),
		"production/eu-west-1/argocd/mc01/apps/new.yaml":  []byte("kind: Application\nname: new\n"),
		"production/eu-west-1/iam/no-newline.json":        []byte("{\"x\": 2}"),
		"production/eu-west-1/iam/gains-newline.json":     []byte("{\"y\": 1}\n"),
		"production/eu-west-1/iam/loses-newline.json":     []byte("{\"z\": 1}"),
		"production/eu-west-1/iam/unchanged.json":         []byte("same\n"),
		"production/eu-west-1/iam/emptied.json":           []byte(""),
		"production/eu-west-1/iam/added-empty.json":       []byte(""),
	}
	files, pruned := fileDiffs(base, head)
	if len(pruned) != 1 || pruned[0] != "production/eu-west-1/argocd/mc01/apps/gone.yaml" {
		t.Errorf("pruned = %v", pruned)
	}
	dir := t.TempDir()
	for p, b := range base {
		write(t, filepath.Join(dir, "deploy", p), b)
	}
	var patch bytes.Buffer
	for _, f := range files {
		patch.WriteString(f.Unified)
	}
	cmd := exec.Command("git", "apply", "--verbose", "-")
	cmd.Dir = dir
	cmd.Stdin = &patch
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply refuses the review's diffs: %v\n%s\n%s", err, out, patch.String())
	}
	for p, want := range head {
		got, err := os.ReadFile(filepath.Join(dir, "deploy", p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s after git apply: %q, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "deploy", "production/eu-west-1/argocd/mc01/apps/gone.yaml")); !os.IsNotExist(err) {
		t.Errorf("the removed file is still there after git apply (%v)", err)
	}
}

func write(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A report never carries secret material out: a base committed before the
// scanner may hold some, in a value or a rendered file.
func TestRedactReport(t *testing.T) {
	r := &Report{
		Changes: []ValueChange{{Path: "components.x.values.password", Old: `"Tr0ub4dor&3"`, New: `"(unset)"`}},
		Waves:   []SkippedWave{{Key: "components.x.image", Value: "ghp_0123456789abcdefghijABCDEFGHIJ012345"}},
		Files:   []FileDiff{{Path: "a", Unified: "-  key: AKIAIOSFODNN7EXAMPLE\n+  key: ssm:///k\n"}},
	}
	Redact(r)
	for _, s := range []string{r.Changes[0].Old, r.Waves[0].Value, r.Files[0].Unified} {
		if strings.Contains(s, "Tr0ub4dor") || strings.Contains(s, "ghp_") || strings.Contains(s, "AKIA") {
			t.Errorf("not redacted: %q", s)
		}
	}
	if r.Changes[0].New != `"(unset)"` || !strings.Contains(r.Files[0].Unified, "ssm:///k") {
		t.Errorf("redacted too much: %+v", r)
	}
}
