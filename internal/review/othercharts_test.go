package review

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/manifests"
	"github.com/regionctl/regionctl/internal/manifests/manifeststest"
)

// TestChartsRenderedAsEachSidePinsThem: another project's chart is read
// from the cache only as the side's own lock pins it; one its lock does
// not pin is read with a note, and one the cache does not hold, or holds
// otherwise than the lock pins, is left out saying why, as are a
// kustomization and a source the review does not fetch.
func TestChartsRenderedAsEachSidePinsThem(t *testing.T) {
	const repo = "https://charts.example.com"
	cache := manifests.Cache{Dir: t.TempDir()}
	archive := manifeststest.Pack(t, filepath.Join("..", "manifests", "testdata", "c"), "eso", "1.2.3")
	if err := cache.Put(repo, "eso", "1.2.3", archive); err != nil {
		t.Fatal(err)
	}
	held := fmt.Sprintf("%x", sha256.Sum256(archive))
	pinned := func(digest string) *manifests.Lock {
		l := &manifests.Lock{}
		l.Set(manifests.Locked{Repo: repo, Chart: "eso", Revision: "1.2.3", SHA256: digest})
		return l
	}
	other := strings.Repeat("0", 64)
	eso := &application{RepoURL: repo, Chart: "eso", Revision: "1.2.3"}
	const self = "https://git.example.com/fleet.git"
	// The example fleet's argo-cd Application, as render writes it.
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "production", "us-east-1", "argocd", "mc01", "apps", "argo-cd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	argo, err := parseApplication(b, "argo-cd", "1.33")
	if err != nil || argo == nil {
		t.Fatalf("the argo-cd Application: %v", err)
	}
	none := otherCharts{cache: cache, locks: [2]*manifests.Lock{{}, {}}}
	for name, tc := range map[string]struct {
		o         otherCharts
		a         *application
		head      bool
		why, note string
	}{
		"pinned and held":                    {otherCharts{cache: cache, locks: [2]*manifests.Lock{pinned(held), pinned(held)}}, eso, true, "", ""},
		"held, pinned otherwise":             {otherCharts{cache: cache, locks: [2]*manifests.Lock{pinned(held), pinned(other)}}, eso, true, "the chart cache holds eso 1.2.3 of " + repo + " at sha256 " + held + ", but the head's charts.lock pins " + other, ""},
		"the base's pin is its own":          {otherCharts{cache: cache, locks: [2]*manifests.Lock{pinned(other), pinned(held)}}, eso, false, "but the base's charts.lock pins", ""},
		"not pinned":                         {otherCharts{cache: cache, locks: [2]*manifests.Lock{{}, {}}}, eso, true, "", "eso 1.2.3 of " + repo + " is not pinned in the head's charts.lock"},
		"the base's lock unread":             {otherCharts{cache: cache, locks: [2]*manifests.Lock{{}, {}}, unread: "the base's charts.lock:1: bad"}, eso, false, "", "rendered unpinned: the base's charts.lock:1: bad"},
		"not cached":                         {otherCharts{cache: cache, locks: [2]*manifests.Lock{{}, {}}}, &application{RepoURL: repo, Chart: "eso", Revision: "9.9.9"}, true, "is not in the chart cache", ""},
		"a git chart not cached":             {otherCharts{cache: cache, locks: [2]*manifests.Lock{{}, {}}}, &application{RepoURL: "https://g.example.com/x.git", Path: "charts/x", Revision: "v1"}, true, "chart charts/x at v1 of https://g.example.com/x.git is not in the chart cache", ""},
		"a kustomization":                    {none, argo, true, "chart manifests/cluster-install at v3.6.1 of https://github.com/argoproj/argo-cd.git is not in the chart cache", ""},
		"a kustomization of this repository": {none, &application{RepoURL: self, Path: "deploy/x", Revision: "v1", Kustomize: true}, true, "is a kustomization the chart cache does not take", ""},
		"this repository's chart":            {none, &application{RepoURL: self, Path: "charts/platform-api", Revision: "v1"}, true, "", ""},
		"this repository, not a chart":       {none, &application{RepoURL: self, Path: "deploy/x", Revision: "v1"}, true, "which the review does not fetch", ""},
		"ssh":                                {none, &application{RepoURL: "git@github.com:o/x.git", Path: "charts/x", Revision: "v1"}, true, "which the review does not fetch", ""},
		"no cache directory":                 {otherCharts{locks: [2]*manifests.Lock{pinned(held), pinned(held)}}, eso, true, "is not in the chart cache", ""},
	} {
		t.Run(name, func(t *testing.T) {
			why, note := tc.o.renderable(tc.a, self, tc.head)
			if tc.why == "" && why != "" || !strings.Contains(why, tc.why) || tc.note == "" && note != "" || !strings.Contains(note, tc.note) {
				t.Errorf("why %q, note %q; want %q, %q", why, note, tc.why, tc.note)
			}
		})
	}
	// What the cache holds is read once for all the clusters naming it.
	memo := otherCharts{cache: cache, locks: [2]*manifests.Lock{pinned(held), pinned(held)}, held: map[string]string{}}
	if why, _ := memo.renderable(eso, self, true); why != "" {
		t.Fatal(why)
	}
	if err := os.RemoveAll(cache.Dir); err != nil {
		t.Fatal(err)
	}
	if why, _ := memo.renderable(eso, self, false); why != "" {
		t.Errorf("the cache was read again for the next Application: %s", why)
	}
}
