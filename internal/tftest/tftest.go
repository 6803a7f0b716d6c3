// Package tftest prepares the real terraform binary for tests: it finds it,
// writes a CLI configuration that installs providers only from the
// machine's filesystem mirror (scripts/terraformrc) with a shared plugin
// cache, and decides whether a test without them skips or fails.
//
// Entry point: Setup.
package tftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Env is a ready terraform.
type Env struct {
	Exec      string   // path of the terraform binary
	CLIConfig string   // TF_CLI_CONFIG_FILE to use
	Vars      []string // environment for terraform processes
}

var (
	once   sync.Once
	env    *Env
	reason string
)

// Setup returns the terraform environment, or skips t when terraform or
// the provider mirror are missing. With REGIONCTL_REQUIRE_TERRAFORM=1 (CI
// sets it) their absence fails the test instead. repoRoot is the path of
// the repository root from the test's package directory.
func Setup(t testing.TB, repoRoot string) *Env {
	t.Helper()
	once.Do(func() { env, reason = setup(repoRoot) })
	if env == nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" {
			t.Fatalf("terraform is required here: %s", reason)
		}
		t.Skipf("skipping: %s (set REGIONCTL_REQUIRE_TERRAFORM=1 to fail instead)", reason)
	}
	return env
}

func setup(repoRoot string) (*Env, string) {
	bin, err := exec.LookPath("terraform")
	if err != nil {
		return nil, "terraform is not on PATH"
	}
	dir := filepath.Join(os.TempDir(), "regionctl-terraform")
	cache := filepath.Join(dir, "plugin-cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err.Error()
	}
	out, err := exec.Command(filepath.Join(repoRoot, "scripts", "terraformrc"), cache).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, "no provider mirror: " + msg
	}
	cfg := filepath.Join(dir, "terraformrc")
	if err := os.WriteFile(cfg, out, 0o644); err != nil {
		return nil, err.Error()
	}
	// terraform-exec sets TF_IN_AUTOMATION and TF_INPUT itself.
	//
	// GOGC=400 is for the tests' CPU alone (the product sets nothing of
	// Terraform's): the aws provider, started some ten times an apply (each
	// alias, each walk), spent a third of its CPU in Go's collector. With
	// it, internal/e2e took 557 s of the provider's CPU and 279 s of
	// terraform's against 634 and 311 s without (a whole run each, process
	// accounting), the provider's peak some 100 MiB higher.
	vars := []string{"TF_CLI_CONFIG_FILE=" + cfg, "CHECKPOINT_DISABLE=1", "GOGC=400"}
	return &Env{Exec: bin, CLIConfig: cfg, Vars: vars}, ""
}

// EnvMap returns Vars as a map, as terraform-exec's SetEnv takes them.
func (e *Env) EnvMap() map[string]string {
	m := map[string]string{}
	for _, kv := range e.Vars {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return m
}

// CopyDir copies the tree at src to dst (files only, modes kept).
func CopyDir(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			if info.Name() == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode())
	})
}
