package ci

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage keeps docs/architecture.md whole: every
// package of the module has its paragraph (its directory in bold), and the
// page names no package that is gone.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\*\*([a-z][a-z0-9/-]*)\*\*`).FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	var packages []string
	err = filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", p)
		if d.IsDir() {
			base := d.Name()
			// Other modules, tests' data and what is not Go are not the module's packages.
			if rel != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "node_modules" || fileExists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dir := filepath.ToSlash(filepath.Dir(rel))
			if !slices.Contains(packages, dir) {
				packages = append(packages, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if dir := "docs/ci"; !slices.Contains(packages, dir) {
		packages = append(packages, dir) // a package of tests only
	}
	if len(packages) < 40 {
		t.Fatalf("only %d packages found: %v", len(packages), packages)
	}
	for _, p := range packages {
		if !named[p] {
			t.Errorf("docs/architecture.md has no paragraph for the package %s (write **%s**: what it owns)", p, p)
		}
	}
	for n := range named {
		if strings.Contains(n, "/") || n == "schema" || n == "terraform" {
			if !slices.Contains(packages, n) {
				t.Errorf("docs/architecture.md names %s, which is no package of the module", n)
			}
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestShippedBinaryLinksNoEmulator: the emulator, the IAM gate, the judges
// and the demo are test infrastructure; regionctl never links them (the
// demo is cmd/regionctl-demo).
func TestShippedBinaryLinksNoEmulator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/regionctl").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"/internal/awsemu", "/internal/demo", "/internal/iamjudge", "/internal/e2e", "/internal/mdjudge", "/internal/testrepo", "/internal/tftest", "/internal/kube/kubetest", "/internal/prcomment/prcommenttest"} {
			if strings.HasSuffix(p, "regionctl/regionctl"+banned) || strings.Contains(p, "regionctl/regionctl"+banned+"/") {
				t.Errorf("cmd/regionctl links %s", p)
			}
		}
	}
}
