package view

import (
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/diff"
	"github.com/regionctl/regionctl/internal/mdjudge"
)

// manifestsReport holds rendered-manifest changes whose names, note and
// diff a hostile chart or config could write.
func manifestsReport() *diff.Report {
	return &diff.Report{Base: "main", Head: "HEAD", Affected: []diff.AffectedCluster{{ID: "eu-west-1/mc01"}},
		Files:         []diff.FileDiff{{Path: "staging/eu-west-1/argocd/mc01/apps/x.yaml", Status: "changed", Unified: "-a\n+b\n"}},
		ManifestNotes: []string{"x: " + hostileName + " is not a tag or commit of this clone (1 cluster)"},
		Manifests: []diff.ManifestChange{
			{Application: "app</summary><img src=x>", Object: "ConfigMap " + hostileName, Status: "changed",
				Unified:  "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a: 1\n+a: \"```\\n</details><img src=x onerror=alert(2)>\"\n",
				Clusters: []string{"eu-west-1/mc01", "eu-west-1/mc02"}, Varies: true, Shown: "eu-west-1/mc01"},
			{Application: "app", Object: "Deployment.apps web", Status: "added", Unified: "+kind: Deployment\n", Clusters: []string{"eu-west-1/mc01"}},
		}}
}

// TestManifestsAsGitHubShowsThem: the second judge, markdown-it with
// GitHub's extensions and raw HTML on, shows the object names, the note
// and each object's diff as text: one folded block per object change, and
// no tag of theirs on the page.
func TestManifestsAsGitHubShowsThem(t *testing.T) {
	md := diffMarkdown(manifestsReport())
	page := mdjudge.Render(t, md, true)
	for _, bad := range []string{"<img", "<h1", "</summary><img"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %s:\n%s", bad, page)
		}
	}
	// One block per object and one for the file.
	if n := strings.Count(page, "<details>"); n != 3 {
		t.Errorf("%d <details> on the page, want 3:\n%s", n, page)
	}
	for _, want := range []string{"onerror=alert(2)&gt;", "changed <code>ConfigMap mc`01|&lt;/details&gt;&lt;img",
		"shown for eu-west-1/mc01", "added <code>Deployment.apps web</code> of <code>app</code> on 1 cluster"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q:\n%s", want, page)
		}
	}
}
