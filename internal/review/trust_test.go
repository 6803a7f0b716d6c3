package review

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/render"
)

// TestTrustIndexFallsBack: each reason a committed deploy/ is not taken as
// what this renderer makes of its inputs, and the one case it is.
func TestTrustIndexFallsBack(t *testing.T) {
	const me = "sha256:0123456789abcdef0123"
	index := func() *render.Index {
		return &render.Index{Renderer: me, Files: []string{"p/r/iam/a.json", "p/r/terraform/mc01.tfvars.json"},
			Regions:  []render.IndexRegion{{Name: "r", Files: []string{"p/r/iam/a.json"}}},
			Clusters: []render.IndexCluster{{ID: "r/mc01", Files: []string{"p/r/terraform/mc01.tfvars.json"}}}}
	}
	tree := func() map[string]plumbing.Hash {
		return map[string]plumbing.Hash{"index.json": {1}, "p/r/iam/a.json": {2}, "p/r/terraform/mc01.tfvars.json": {3}}
	}
	if idx, why := trustIndex(index(), tree(), me); idx == nil || why != "" {
		t.Fatalf("a deploy/ its index describes, by this renderer: not trusted (%s)", why)
	}
	// A file no render wrote is no cluster's: the review reports it
	// against the head's render either way, so it does not cost the trust.
	foreign := tree()
	foreign["p/r/terraform/extra.tfvars.json"] = plumbing.Hash{4}
	if idx, why := trustIndex(index(), foreign, me); idx == nil {
		t.Errorf("a committed file the index does not list cost the trust: %s", why)
	}
	for _, tc := range []struct {
		name string
		idx  func() *render.Index
		tree func() map[string]plumbing.Hash
		want string
	}{
		{"no index", func() *render.Index { return nil }, tree, "no readable deploy/index.json"},
		{"an index without a renderer", func() *render.Index { x := index(); x.Renderer = ""; return x }, tree, "names no renderer"},
		{"another renderer", func() *render.Index { x := index(); x.Renderer = "sha256:ffff"; return x }, tree, "another renderer (sha256:ffff; this is sha256:0123456789ab)"},
		{"a listed file not committed", index, func() map[string]plumbing.Hash {
			m := tree()
			delete(m, "p/r/iam/a.json")
			return m
		}, "it lists p/r/iam/a.json, which is not committed"},
		{"a cluster's file outside the list", func() *render.Index {
			x := index()
			x.Clusters[0].Files = append(x.Clusters[0].Files, "p/r/terraform/mc02.tfvars.json")
			return x
		}, tree, "cluster r/mc01's p/r/terraform/mc02.tfvars.json is not among its files"},
	} {
		idx, why := trustIndex(tc.idx(), tc.tree(), me)
		if idx != nil || !strings.Contains(why, tc.want) {
			t.Errorf("%s: trusted %v, why %q, want %q", tc.name, idx != nil, why, tc.want)
		}
	}
}
