package rollout

import (
	"fmt"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/config"
)

// Step is the next move of a value's rollout. status shows it and promote
// acts on it, so status never calls ready what promote would refuse (the
// health gate aside: only promote asks Argo CD).
type Step struct {
	// Sector is the next sector to give the value to; nil when every
	// sector runs it (the next move is into config/global).
	Sector *config.Sector
	// Prev is the sector before it, whose soak and health gate the move
	// waits on; nil when Sector is the first.
	Prev *config.Sector
	// Since is when Prev got the value: the latest of its clusters' lines
	// that set it, as the Blamer dates them (when they reached main).
	Since *Introduced
	// Blocked says why the move may not happen now.
	Blocked []string
}

// NextStep judges the next move of value at path: the first sector (in
// rollout order, with clusters) that does not run it on every cluster,
// blocked while regions or clusters of it pin another value, while when
// the sector before it got the value is unknown, or while that sector
// soaks.
func NextStep(f *config.Fleet, path []string, value string, history Blamer, now time.Time) Step {
	var sectors []*config.Sector
	for _, s := range f.Sectors {
		if len(clustersOf(f, s.Name)) > 0 {
			sectors = append(sectors, s)
		}
	}
	next := -1
	for i, s := range sectors {
		if !runs(f, s.Name, path, value) {
			next = i
			break
		}
	}
	if next < 0 {
		return Step{}
	}
	st := Step{Sector: sectors[next]}
	var pins []string
	for _, c := range clustersOf(f, st.Sector.Name) {
		v := c.Effective.Lookup(path...)
		if v != nil && v.Origin.Layer > config.LayerSector && !(v.Kind == config.String && v.Str == value) {
			pins = append(pins, fmt.Sprintf("%s pins %s at %s", c.ID(), v.Scalar(), v.Origin.Pos))
		}
	}
	if len(pins) > 0 {
		st.Blocked = append(st.Blocked, fmt.Sprintf("sector %s would still not run %s everywhere: %s; remove those pins first",
			st.Sector.Name, value, strings.Join(uniq(pins), "; ")))
	}
	if next == 0 {
		return st
	}
	st.Prev = sectors[next-1]
	for _, c := range clustersOf(f, st.Prev.Name) {
		v := c.Effective.Lookup(path...)
		if v == nil || history == nil || v.Origin.Pos.Line == 0 {
			continue
		}
		if commit, when, ok := history.Blame(v.Origin.Pos.File, v.Origin.Pos.Line); ok && (st.Since == nil || when.After(st.Since.Time)) {
			st.Since = &Introduced{Commit: commit, Time: when}
		}
	}
	switch {
	case st.Since == nil:
		st.Blocked = append(st.Blocked, fmt.Sprintf("sector %s got %s in no commit on main yet (or not in git history): merge it to main and let it soak", st.Prev.Name, value))
	case st.Since.Time.Add(st.Prev.Soak).After(now):
		left := st.Since.Time.Add(st.Prev.Soak).Sub(now).Round(time.Minute)
		if left < time.Minute {
			// Under a minute left is not "0s more".
			left = st.Since.Time.Add(st.Prev.Soak).Sub(now).Round(time.Second)
		}
		st.Blocked = append(st.Blocked, fmt.Sprintf("sector %s soaks %s more: soak %s since %s (%s)",
			st.Prev.Name, left, st.Prev.Soak, short(st.Since.Commit), st.Since.Time.UTC().Format(time.RFC3339)))
	}
	return st
}
