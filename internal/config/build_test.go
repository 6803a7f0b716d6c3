package config_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// besideFS is a fleet of two sectors, two regions and four clusters whose
// global file interpolates; change replaces or adds files.
func besideFS(change map[string]string) *hashingFS {
	m := fstest.MapFS{
		"config/global/a.yaml":                 {Data: []byte("eks:\n  node_min: 3\naccount:\n  name: acct-${cluster}\n")},
		"config/sectors/s1.yaml":               {Data: []byte("order: 1\nenvironment: staging\n")},
		"config/sectors/s2.yaml":               {Data: []byte("order: 2\nenvironment: production\neks:\n  node_max: 8\n")},
		"config/regions/us-east-1.yaml":        {Data: []byte("sector: s1\n")},
		"config/regions/eu-west-1.yaml":        {Data: []byte("sector: s2\n")},
		"config/regions/us-west-2.yaml":        {Data: []byte("sector: s1\n")},
		"config/clusters/us-east-1/rc01.yaml":  {Data: []byte("type: regional\n")},
		"config/clusters/us-east-1/mc01.yaml":  {Data: []byte("type: management\n")},
		"config/clusters/eu-west-1/mc01.yaml":  {Data: []byte("type: management\n")},
		"config/clusters/us-west-2/mc01.yaml":  {Data: []byte("type: management\n")},
		"config/clusters/us-west-2/mc02.yaml":  {Data: []byte("type: management\n")},
		"config/clusters/us-east-1/bad.yaml":   {Data: []byte("type: management\ntags:\n  x: ${nope}\n")},
		"config/clusters/eu-west-1/other.yaml": {Data: []byte("type: management\n")},
	}
	for p, data := range change {
		m[p] = &fstest.MapFile{Data: []byte(data)}
	}
	return &hashingFS{MapFS: m, opened: map[string]int{}}
}

// TestBuildBesideSharesOnlyWhatIsMadeOfTheSameValues: a review's base
// takes the head's effective config of exactly the clusters whose global,
// sector, region and cluster values it shares, and every cluster's config
// is what Build alone makes of the base.
func TestBuildBesideSharesOnlyWhatIsMadeOfTheSameValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change map[string]string
		shared []string // the base's clusters that take the head's config
	}{
		{"a sector, a region and a cluster changed", map[string]string{
			"config/sectors/s2.yaml":              "order: 2\nenvironment: production\neks:\n  node_max: 9\n",
			"config/regions/us-west-2.yaml":       "sector: s1\neks:\n  node_max: 5\n",
			"config/clusters/us-east-1/mc01.yaml": "type: management\neks:\n  node_max: 7\n",
		}, []string{"us-east-1/rc01"}},
		{"a cluster's type changed", map[string]string{
			"config/clusters/us-west-2/mc02.yaml": "type: regional\n",
		}, []string{"eu-west-1/mc01", "eu-west-1/other", "us-east-1/mc01", "us-east-1/rc01", "us-west-2/mc01"}},
		{"a sector's environment changed", map[string]string{
			"config/sectors/s1.yaml": "order: 1\nenvironment: integration\n",
		}, []string{"eu-west-1/mc01", "eu-west-1/other"}},
		{"a region moved to another sector", map[string]string{
			"config/regions/us-west-2.yaml": "sector: s2\n",
		}, []string{"eu-west-1/mc01", "eu-west-1/other", "us-east-1/mc01", "us-east-1/rc01"}},
		{"the global file changed", map[string]string{
			"config/global/a.yaml": "eks:\n  node_min: 2\naccount:\n  name: acct-${cluster}\n",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headDocs, _ := config.Parse(besideFS(nil), "config")
			head, _ := config.Build(headDocs)
			baseDocs, _ := config.ParseReusing(besideFS(tc.change), "config", config.DecodeOptions{}, headDocs)
			base, baseDiags := config.BuildBeside(baseDocs, head)

			aloneDocs, _ := config.Parse(besideFS(tc.change).MapFS, "config")
			alone, aloneDiags := config.Build(aloneDocs)
			if got, want := diagText(baseDiags), diagText(aloneDiags); got != want {
				t.Errorf("diagnostics beside the head:\n%s\nwant Build's:\n%s", got, want)
			}
			if len(base.Clusters) != len(alone.Clusters) {
				t.Fatalf("%d clusters, want %d", len(base.Clusters), len(alone.Clusters))
			}
			headOf := map[string]*config.Cluster{}
			for _, c := range head.Clusters {
				headOf[c.ID()] = c
			}
			want := map[string]bool{}
			for _, id := range tc.shared {
				want[id] = true
			}
			for i, c := range base.Clusters {
				a := alone.Clusters[i]
				if c.ID() != a.ID() || c.Partial != a.Partial || c.Type != a.Type {
					t.Errorf("cluster %s (partial %v, type %s), want %s (partial %v, type %s)", c.ID(), c.Partial, c.Type, a.ID(), a.Partial, a.Type)
					continue
				}
				if (c.Effective == nil) != (a.Effective == nil) ||
					c.Effective != nil && config.HashWithOrigins(c.Effective) != config.HashWithOrigins(a.Effective) {
					t.Errorf("%s: the effective config beside the head differs from Build's", c.ID())
				}
				h := headOf[c.ID()]
				if shared := h != nil && c.Effective != nil && c.Effective == h.Effective; shared != want[c.ID()] {
					t.Errorf("%s: shares the head's effective config: %v, want %v", c.ID(), shared, want[c.ID()])
				}
			}
		})
	}
}

// diagText is every diagnostic in full, one per line.
func diagText(ds diag.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds.Sorted() {
		fmt.Fprintf(&b, "%+v\n", d)
	}
	return b.String()
}
