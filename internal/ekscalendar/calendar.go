// Package ekscalendar holds EKS's Kubernetes version support calendar as
// data, with its sources, and checks a fleet's eks.version values against
// it at a given date: a version past its end of extended support cannot be
// created (and EKS upgrades existing control planes on its own), so it is
// an error; one within 90 days of that end is a warning.
//
// A new EKS version needs a new row in calendar.json, not a schema change;
// a version newer than every row is let through with a warning that its
// dates are not known here.
package ekscalendar

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

//go:embed calendar.json
var calendarJSON []byte

// Version is one row of the calendar.
type Version struct {
	Version              string `json:"version"`
	Release              string `json:"eks_release"`
	EndOfStandardSupport string `json:"end_of_standard_support"`
	EndOfExtendedSupport string `json:"end_of_extended_support"`
	Source               string `json:"source"`
}

// Calendar is EKS's support calendar as regionctl knows it.
type Calendar struct {
	Sources  map[string]string `json:"sources"`
	Read     string            `json:"read"` // when the sources were read
	Versions []Version         `json:"versions"`
}

// Warn is how long before a version's end of extended support its use is
// a warning.
const Warn = 90 * 24 * time.Hour

// Load is the embedded calendar, newest version first.
func Load() (*Calendar, error) {
	var c Calendar
	if err := json.Unmarshal(calendarJSON, &c); err != nil {
		return nil, fmt.Errorf("the EKS support calendar: %w", err)
	}
	for _, v := range c.Versions {
		if _, ok := minor(v.Version); !ok {
			return nil, fmt.Errorf("the EKS support calendar: version %q is not 1.<minor>", v.Version)
		}
		for _, d := range []string{v.Release, v.EndOfStandardSupport, v.EndOfExtendedSupport} {
			if _, err := time.Parse(time.DateOnly, d); err != nil {
				return nil, fmt.Errorf("the EKS support calendar: %s: %w", v.Version, err)
			}
		}
		if _, ok := c.Sources[v.Source]; !ok {
			return nil, fmt.Errorf("the EKS support calendar: %s cites no source %q", v.Version, v.Source)
		}
	}
	sort.Slice(c.Versions, func(i, j int) bool {
		a, _ := minor(c.Versions[i].Version)
		b, _ := minor(c.Versions[j].Version)
		return a > b
	})
	return &c, nil
}

// minor is the minor number of "1.<minor>".
func minor(v string) (int, bool) {
	rest, ok := strings.CutPrefix(v, "1.")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == rest
}

func day(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}

// Lookup is the row of version v.
func (c *Calendar) Lookup(v string) (Version, bool) {
	for _, r := range c.Versions {
		if r.Version == v {
			return r, true
		}
	}
	return Version{}, false
}

// Supported is the oldest version in standard support at t, the one to
// move to.
func (c *Calendar) Supported(t time.Time) string {
	out := ""
	for _, r := range c.Versions { // newest first
		if !t.Before(day(r.Release)) && t.Before(day(r.EndOfStandardSupport)) {
			out = r.Version
		}
	}
	return out
}

// Check holds each eks.version of f's clusters (but those being deleted) to
// the calendar at date at, which when names (such as "the date of commit
// abc12345"). A value set once for many clusters is reported once, at the
// place that sets it.
func (c *Calendar) Check(f *config.Fleet, at time.Time, when string) diag.Diagnostics {
	type use struct {
		version  string
		pos      diag.Pos
		clusters []string
	}
	uses := map[string]*use{}
	var order []string
	for _, cl := range f.Clusters {
		if cl.Partial || cl.Effective == nil || cl.Deleting() {
			continue
		}
		v := cl.Effective.Lookup("eks", "version")
		if v == nil || v.Kind != config.String {
			continue
		}
		key := v.Str + "\x00" + v.Origin.Pos.String()
		u, ok := uses[key]
		if !ok {
			u = &use{version: v.Str, pos: v.Origin.Pos}
			uses[key] = u
			order = append(order, key)
		}
		u.clusters = append(u.clusters, cl.ID())
	}
	var out diag.Diagnostics
	for _, key := range order {
		u := uses[key]
		if d, ok := c.judge(u.version, at, when); ok {
			d.Pos, d.Path = u.pos, "eks.version"
			d.Detail = fmt.Sprintf("%s\nClusters: %s.", d.Detail, clusterList(u.clusters))
			out = append(out, d)
		}
	}
	return out
}

// judge is what the calendar says of version v at t, if anything.
func (c *Calendar) judge(v string, at time.Time, when string) (diag.Diagnostic, bool) {
	next := c.Supported(at)
	move := ""
	if next != "" {
		move = fmt.Sprintf("; move to %s or later", next)
	}
	r, known := c.Lookup(v)
	if !known {
		n, ok := minor(v)
		if !ok {
			return diag.Diagnostic{Severity: diag.Error, Summary: fmt.Sprintf("eks.version %q is not an EKS version (1.<minor>, such as %q)", v, c.Versions[0].Version)}, true
		}
		newest, _ := minor(c.Versions[0].Version)
		if n > newest {
			return diag.Diagnostic{Severity: diag.Warning,
				Summary: fmt.Sprintf("EKS %s is newer than regionctl's support calendar (read %s; newest %s): its dates are not checked", v, c.Read, c.Versions[0].Version),
				Detail:  "Check that EKS offers it (aws eks describe-cluster-versions), and add its row to internal/ekscalendar/calendar.json with its source."}, true
		}
		return diag.Diagnostic{Severity: diag.Error,
			Summary: fmt.Sprintf("EKS %s is past its end of extended support (every version before %s is, at %s)%s", v, c.Versions[len(c.Versions)-1].Version, at.Format(time.DateOnly), move),
			Detail:  "EKS creates no cluster of it and upgrades existing control planes on its own. Source: " + c.Sources["aws"]}, true
	}
	source := c.Sources[r.Source]
	switch end := day(r.EndOfExtendedSupport); {
	case at.Before(day(r.Release)):
		return diag.Diagnostic{Severity: diag.Error,
			Summary: fmt.Sprintf("EKS %s is not on EKS before %s (checked at %s, %s)", v, r.Release, at.Format(time.DateOnly), when),
			Detail:  "Source: " + source}, true
	case !at.Before(end):
		return diag.Diagnostic{Severity: diag.Error,
			Summary: fmt.Sprintf("EKS %s's extended support ended on %s (checked at %s, %s)%s", v, r.EndOfExtendedSupport, at.Format(time.DateOnly), when, move),
			Detail:  "EKS creates no cluster of it and upgrades existing control planes on its own. Source: " + source}, true
	case end.Sub(at) <= Warn:
		return diag.Diagnostic{Severity: diag.Warning,
			Summary: fmt.Sprintf("EKS %s's extended support ends on %s, in %d days (checked at %s, %s)%s", v, r.EndOfExtendedSupport, int(end.Sub(at).Hours()/24), at.Format(time.DateOnly), when, move),
			Detail:  "After that date EKS creates no cluster of it and upgrades existing control planes on its own. Source: " + source}, true
	}
	return diag.Diagnostic{}, false
}

func clusterList(ids []string) string {
	if len(ids) <= 6 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:6], ", "), len(ids)-6)
}
