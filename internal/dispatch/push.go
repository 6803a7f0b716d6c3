package dispatch

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/history"
)

// Push is what a push (or the periodic reconcile) asks of one scope's
// dispatch: the pipeline of the scope (central, or regional in Region),
// the commits before and after it, and the deploy branch. Every field
// comes from a webhook body through the EventListener, so none is trusted
// before Check.
type Push struct {
	Scope, Region string
	Before, After string
	Branch        string
	Reconcile     bool // no Before: start what the head needs
}

// FieldError is a field of a Push (or a clone's) that is not what it
// must be; Field is the field's name.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + " " + e.Msg }

// Check refuses a push whose fields could reach a label selector, a Task
// argument or git as anything but what they name: a scope, an AWS region
// name, full commit ids, a branch name (history.ValidBranch).
func (p Push) Check() error {
	switch {
	case p.Scope != "central" && p.Scope != "regional":
		return &FieldError{"scope", "must be central or regional, not " + strconv.Quote(p.Scope)}
	case p.Scope == "regional" && p.Region == "":
		return &FieldError{"scope", "regional needs a region"}
	case p.Scope == "central" && p.Region != "":
		return &FieldError{"region", "goes with the regional scope only"}
	case p.Region != "" && !regionRE.MatchString(p.Region):
		return &FieldError{"region", strconv.Quote(p.Region) + " is not an AWS region name"}
	case !IsCommit(p.After):
		return &FieldError{"after", "must be a full commit id, not " + strconv.Quote(p.After)}
	case !p.Reconcile && !IsCommit(p.Before):
		return &FieldError{"before", "must be a full commit id, not " + strconv.Quote(p.Before)}
	case !history.ValidBranch(p.Branch):
		return &FieldError{"branch", "must name the deploy branch, not " + strconv.Quote(p.Branch)}
	}
	return nil
}

// Selector selects the PipelineRuns of the push's scope (and region).
func (p Push) Selector() string {
	s := LabelPipeline + "=" + p.Scope
	if p.Region != "" {
		s += "," + LabelRegion + "=" + p.Region
	}
	return s
}

// InScope says whether a cluster of pipeline in region is the push's to
// start.
func (p Push) InScope(pipeline, region string) bool {
	return pipeline == p.Scope && (p.Region == "" || region == p.Region)
}

// IsCommit says whether c is a full commit id (SHA-1 or SHA-256), as a
// push's before and after hold.
func IsCommit(c string) bool { return commitRE.MatchString(c) }

// ZeroCommit says whether c is the all-zero id a push gives for a branch
// that did not exist before it (Before) or no longer exists (After).
func ZeroCommit(c string) bool { return strings.Trim(c, "0") == "" }

var (
	commitRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	// regionRE is an AWS region name, as it reaches a label selector.
	regionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
)

// CheckClone refuses what a clone of the fleet must not be given: a URL
// other than https, ssh or file, or holding characters a shell or git
// option would read; a branch that is not one; a revision that is neither
// a full commit id nor the branch ("" is the branch). It gives the
// revision to check out.
func CheckClone(rawURL, branch, revision string) (*url.URL, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "ssh" && u.Scheme != "file") || u.Host == "" && u.Scheme != "file" || strings.ContainsAny(rawURL, " \t\n\"'`$()") {
		return nil, "", &FieldError{"url", strconv.Quote(rawURL) + " is not a clone URL"}
	}
	if !history.ValidBranch(branch) {
		return nil, "", &FieldError{"branch", strconv.Quote(branch) + " is not a branch name"}
	}
	if revision == "" {
		revision = branch
	}
	if !IsCommit(revision) && revision != branch {
		return nil, "", &FieldError{"revision", strconv.Quote(revision) + " is neither a commit nor the deploy branch " + branch}
	}
	return u, revision, nil
}

// BaseOf is the commit a push from before to after is compared with, or
// "" when every cluster of the scope runs, with the reason: a new branch
// (before is all zeros), a before this checkout lacks, or a force push
// (before is not an ancestor of after). A pushed commit the checkout lacks
// is an error.
func BaseOf(repo *gitbase.Repo, before, after string) (base, why string, err error) {
	if ZeroCommit(before) {
		return "", "a new branch", nil
	}
	a, err := repo.Commit(after)
	if err != nil {
		return "", "", fmt.Errorf("the pushed commit: %w", err)
	}
	b, err := repo.Commit(before)
	if err != nil {
		return "", "the commit before the push (" + abbrev(before) + ") is not in this checkout", nil
	}
	if ok, err := b.IsAncestor(a); err != nil || !ok {
		return "", "a force push (" + abbrev(before) + " is not an ancestor of " + abbrev(after) + ")", nil
	}
	return before, "", nil
}

// abbrev is a commit id's first 12 characters, or all of a shorter one.
func abbrev(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
