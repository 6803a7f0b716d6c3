package review

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// TestCommittedCheckoutTrustsOnlyWhatTheDeployBranchChecked: a clean
// checkout of main whose index names this renderer and describes its
// deploy/ needs no render; each thing that breaks the rule renders.
func TestCommittedCheckoutTrustsOnlyWhatTheDeployBranchChecked(t *testing.T) {
	r, head := fleetRepo(t)
	c, ok := CommittedCheckout(r.Dir, "main", testRenderer)
	if !ok || c.Commit != head.String()[:12] {
		t.Fatalf("a clean checkout of main: %+v, %v", c, ok)
	}
	d := readCommitted(r.Dir, head)
	if c.Files != len(d.hashes) || c.Files != len(d.index.Files)+1 {
		t.Errorf("it counts %d files; deploy/ holds %d, the index lists %d", c.Files, len(d.hashes), len(d.index.Files))
	}
	if _, ok := CommittedCheckout(r.Dir, "main", "sha256:another-renderer"); ok {
		t.Error("another renderer's deploy/ was trusted")
	}
	const tfvars = deployDir + "/production/us-east-1/terraform/mc01.tfvars.json"
	for _, tc := range []struct {
		name   string
		change func() (undo func())
	}{
		{"an uncommitted input", func() func() {
			old := r.Read(sectorFile)
			r.Edit(sectorFile, "order: 7", "order: 7 # edited")
			return func() { r.Write(sectorFile, old) }
		}},
		{"a file added to deploy/", func() func() {
			p := filepath.Join(r.Dir, deployDir, "extra.yaml")
			r.Write(deployDir+"/extra.yaml", "x: 1\n")
			return func() { os.Remove(p) }
		}},
		{"a rendered file edited", func() func() {
			old := r.Read(tfvars)
			r.Write(tfvars, "{}\n")
			return func() { r.Write(tfvars, old) }
		}},
	} {
		undo := tc.change()
		if _, ok := CommittedCheckout(r.Dir, "main", testRenderer); ok {
			t.Errorf("%s: trusted", tc.name)
		}
		undo()
		if _, ok := CommittedCheckout(r.Dir, "main", testRenderer); !ok {
			t.Fatalf("%s: undone, still not trusted", tc.name)
		}
	}

	// A file committed to deploy/ that the index does not list: a render
	// would report it, so it is not a checked commit's.
	r.Write(deployDir+"/extra.yaml", "x: 1\n")
	r.Commit("a foreign file")
	if _, ok := CommittedCheckout(r.Dir, "main", testRenderer); ok {
		t.Error("a committed file the index does not list was trusted")
	}
	r.Remove(deployDir + "/extra.yaml")
	r.Commit("without it")
	if _, ok := CommittedCheckout(r.Dir, "main", testRenderer); !ok {
		t.Fatal("the foreign file removed, not trusted")
	}

	// A commit of another branch.
	if err := r.WT.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true}); err != nil {
		t.Fatal(err)
	}
	r.Edit(sectorFile, "order: 7", "order: 7 # on a branch")
	r.Commit("branch")
	if _, ok := CommittedCheckout(r.Dir, "main", testRenderer); ok {
		t.Error("a commit off main was trusted")
	}
}
