package render_test

import (
	"fmt"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/fleetgen"
	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/schema"
)

// TestDRAccountNameOfAnotherRegionsCluster: the central pipeline finds
// accounts by name, so a region's DR account named as a cluster account of
// another region is refused, at the DR name's line, naming that cluster.
func TestDRAccountNameOfAnotherRegionsCluster(t *testing.T) {
	load := func(fsys fstest.MapFS) *config.Fleet { return loadFS(t, fsys, "the generated fleet") }
	fsys := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 2, ClustersPerRegion: 2}).FS()
	opts := render.Options{Renderer: "test", Charts: fleetgen.Charts, Pipelines: repoPipelines(t)}
	if _, diags := render.Render(load(fsys), opts); diags.HasErrors() {
		t.Fatalf("the generated fleet does not render: %v", diags)
	}
	accounts := map[string]string{}
	for _, cl := range load(fsys).Clusters {
		accounts[cl.ID()] = cl.Effective.Lookup("account", "name").Str
	}
	c, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	file := "config/clusters/us-east-1/regional.yaml"
	original := fsys[file].Data
	for _, tc := range []struct{ other, want string }{
		// Another region's cluster's account: its name names that region.
		{accounts["us-east-2/mc01"], "names another region, us-east-2"},
		// A cluster of its own region: the name is that cluster's.
		{accounts["us-east-1/mc01"], "is also us-east-1/mc01's account.name"},
	} {
		fsys[file] = &fstest.MapFile{Data: append(append([]byte{}, original...), []byte("etcd_backup:\n  account:\n    name: "+tc.other+"\n")...)}
		_, diags := fleet.Load(fsys, "config", c)
		var found bool
		for _, d := range diags {
			if strings.Contains(d.Summary, "etcd_backup.account.name "+tc.other) && strings.Contains(d.Summary, tc.want) && d.Pos.File == file {
				found = true
			}
		}
		if !found {
			t.Errorf("a DR account named %s was not refused at %s: %v", tc.other, file, diags)
		}
	}
}

// TestEveryCommercialRegionUnderIAMQuotas: a fleet of every AWS commercial
// region regionctl knows (and more, named like them) renders documents all
// under AWS's size limits, the central pipeline's policy among them,
// though it names each region's central state bucket.
func TestEveryCommercialRegionUnderIAMQuotas(t *testing.T) {
	fsys := fleetgen.Generate(fleetgen.Options{Sectors: 2, RegionsPerSector: 20, ClustersPerRegion: 4}).FS()
	f := loadFS(t, fsys, "the generated fleet")
	out, diags := render.Render(f, render.Options{Renderer: "test", Charts: fleetgen.Charts, Pipelines: repoPipelines(t)})
	if diags.HasErrors() {
		t.Fatalf("%d regions do not render: %v", len(f.Regions), diags)
	}
	worst, worstFile := 0.0, ""
	for p, b := range out.ByPath() {
		if !strings.Contains(p, "/iam/") || !strings.HasSuffix(p, ".json") {
			continue
		}
		doc, err := iampolicy.Parse(iampolicy.Substitute(b, nil))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		size, problem := iam.CheckQuota(p, doc)
		if problem != "" {
			t.Error(problem)
		}
		if r := float64(size) / float64(iam.QuotaOf(path.Base(p)).Limit); r > worst {
			worst, worstFile = r, p
		}
	}
	t.Logf("%d regions: the fullest document is %s, at %.0f%% of its limit", len(f.Regions), worstFile, 100*worst)
	if len(f.Regions) < 38 {
		t.Errorf("only %d regions", len(f.Regions))
	}
}

// TestQuotaOverflowIsRefused: a document that would be over AWS's limit
// is refused at render, naming the file, its size and the limit.
func TestQuotaOverflowIsRefused(t *testing.T) {
	fsys := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 1, ClustersPerRegion: 2}).FS()
	var approvers strings.Builder
	approvers.WriteString("gitops:\n  approvers:\n")
	for i := range 40 {
		fmt.Fprintf(&approvers, "    - arn:aws:iam::123456789012:role/platform-approvers-of-the-on-call-rotation-%02d\n", i)
	}
	fsys["config/global/zz-approvers.yaml"] = &fstest.MapFile{Data: []byte(approvers.String())}
	_, diags := render.Render(loadFS(t, fsys, "the generated fleet"), render.Options{Renderer: "test", Charts: fleetgen.Charts, Pipelines: repoPipelines(t)})
	for _, d := range diags {
		if strings.Contains(d.Detail, "approver-trust.json is ") && strings.Contains(d.Detail, "over AWS's limit of 2048 for a role trust policy") {
			return
		}
	}
	t.Errorf("a trust policy of 40 approvers was not refused: %v", diags)
}

// TestARegionHasOneHealthBucketAndAPIDomain: the central pipeline makes
// the health bucket its regional cluster names, and the regional root
// serves the Maestro broker in its API domain's zone; a management cluster
// naming another of either is refused at its line, since its reports would
// never reach the gate and its agent would never reach the broker.
func TestARegionHasOneHealthBucketAndAPIDomain(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"argocd:\n  health_bucket: another-health-bucket\n", "us-east-1/mc01: argocd.health_bucket another-health-bucket is not its region's regionctl-argocd-health-"},
		{"platform_api:\n  domain: api.elsewhere.example.com\n", "us-east-1/mc01: platform_api.domain api.elsewhere.example.com is not its region's "},
	} {
		fsys := fleetgen.Generate(fleetgen.Options{Sectors: 1, RegionsPerSector: 1, ClustersPerRegion: 2}).FS()
		opts := render.Options{Renderer: "test", Charts: fleetgen.Charts, Pipelines: repoPipelines(t)}
		file := "config/clusters/us-east-1/mc01.yaml"
		fsys[file] = &fstest.MapFile{Data: append(append([]byte{}, fsys[file].Data...), []byte(tc.set)...)}
		_, diags := render.Render(loadFS(t, fsys, "the generated fleet"), opts)
		var found bool
		for _, d := range diags {
			if strings.Contains(d.Summary, tc.want) && d.Pos.File == file {
				found = true
			}
		}
		if !found {
			t.Errorf("%q in %s was not refused at its line: %v", tc.set, file, diags)
		}
	}
}
