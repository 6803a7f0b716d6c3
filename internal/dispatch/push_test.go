package dispatch

import (
	"errors"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/testrepo"
)

func TestPushCheckRefusesWhatIsNotWhatItNames(t *testing.T) {
	commit := strings.Repeat("a1", 20)
	ok := Push{Scope: "regional", Region: "eu-west-1", Before: commit, After: commit, Branch: "main"}
	if err := ok.Check(); err != nil {
		t.Fatalf("a regular push: %v", err)
	}
	for _, tc := range []struct {
		change func(*Push)
		field  string
	}{
		{func(p *Push) { p.Scope = "all" }, "scope"},
		{func(p *Push) { p.Region = "" }, "scope"},
		{func(p *Push) { p.Scope = "central" }, "region"},
		{func(p *Push) { p.Region = "eu-west-1,regionctl.io/cluster=x" }, "region"},
		{func(p *Push) { p.After = "HEAD" }, "after"},
		{func(p *Push) { p.After = commit[:39] }, "after"},
		{func(p *Push) { p.Before = "$(id)" }, "before"},
		{func(p *Push) { p.Branch = "--upload-pack=x" }, "branch"},
		{func(p *Push) { p.Branch = "main..x" }, "branch"},
	} {
		p := ok
		tc.change(&p)
		var fe *FieldError
		if err := p.Check(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want an error of %s", p, err, tc.field)
		}
	}
	r := ok
	r.Reconcile, r.Before = true, ""
	if err := r.Check(); err != nil {
		t.Errorf("a reconcile needs no before: %v", err)
	}
	if got := ok.Selector(); got != LabelPipeline+"=regional,"+LabelRegion+"=eu-west-1" {
		t.Errorf("Selector() = %q", got)
	}
	if !ok.InScope("regional", "eu-west-1") || ok.InScope("regional", "us-east-1") || ok.InScope("central", "eu-west-1") {
		t.Error("InScope lets in another region's or scope's cluster, or not its own")
	}
	if c := (Push{Scope: "central"}); !c.InScope("central", "us-east-1") || c.Selector() != LabelPipeline+"=central" {
		t.Error("the central scope is every region's central pipeline")
	}
	if !ZeroCommit(strings.Repeat("0", 40)) || ZeroCommit(commit) {
		t.Error("ZeroCommit")
	}
}

func TestCheckCloneTakesOnlyCloneURLsBranchesAndCommits(t *testing.T) {
	commit := strings.Repeat("b2", 20)
	if _, rev, err := CheckClone("https://git.example.com/fleet.git", "main", ""); err != nil || rev != "main" {
		t.Errorf("the branch's head: %q, %v", rev, err)
	}
	if _, rev, err := CheckClone("ssh://git@git.example.com/fleet.git", "main", commit); err != nil || rev != commit {
		t.Errorf("a commit: %q, %v", rev, err)
	}
	for _, tc := range []struct{ url, branch, revision, field string }{
		{"http://git.example.com/fleet.git", "main", "", "url"},
		{"https://git.example.com/fleet.git $(id)", "main", "", "url"},
		{"ext::sh -c id", "main", "", "url"},
		{"https:///fleet.git", "main", "", "url"},
		{"https://git.example.com/fleet.git", "-x", "", "branch"},
		{"https://git.example.com/fleet.git", "main", "other", "revision"},
	} {
		var fe *FieldError
		if _, _, err := CheckClone(tc.url, tc.branch, tc.revision); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want an error of %s", tc, err, tc.field)
		}
	}
}

func TestBaseOfAPush(t *testing.T) {
	r := testrepo.New(t, nil)
	r.Write("a.txt", "1\n")
	c1 := r.Commit("one").String()
	r.Write("a.txt", "2\n")
	c2 := r.Commit("two").String()
	repo, err := gitbase.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	missing := strings.Repeat("c3", 20)
	for _, tc := range []struct {
		before, after, base, why string
	}{
		{c1, c2, c1, ""},
		{strings.Repeat("0", 40), c2, "", "a new branch"},
		{missing, c2, "", "is not in this checkout"},
		{c2, c1, "", "a force push"},
	} {
		base, why, err := BaseOf(repo, tc.before, tc.after)
		if err != nil || base != tc.base || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("%s..%s: base %q, why %q, %v; want %q, %q", tc.before[:6], tc.after[:6], base, why, err, tc.base, tc.why)
		}
	}
	if _, _, err := BaseOf(repo, c1, missing); err == nil {
		t.Error("a pushed commit the checkout lacks gave no error")
	}
	// Unchecked ids (a caller that skipped Push.Check) do not panic.
	if _, why, _ := BaseOf(repo, "c3", c2); !strings.Contains(why, "(c3)") {
		t.Errorf("a short missing before: %q", why)
	}
}
