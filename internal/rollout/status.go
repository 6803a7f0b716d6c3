// Package rollout reports where each versioned value (a schema field
// marked @rollout()) stands in the progressive, sector-by-sector rollout:
// which sectors and regions run which value, since which commit, and what
// blocks the next sector.
//
// Entry point: Status. History comes through a Blamer (go-git's blame in
// the CLI), the clock through a parameter.
package rollout

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/schema"
)

// Introduced is the commit that wrote a line.
type Introduced struct {
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"`
}

// Blamer finds the commit that introduced line of file, if it knows.
type Blamer interface {
	Blame(file string, line int) (commit string, when time.Time, ok bool)
}

// KeyStatus is the rollout state of one versioned key.
type KeyStatus struct {
	Key     string         `json:"key"`
	Target  string         `json:"target"` // the value the first sector runs: where the rollout is heading
	Sectors []SectorStatus `json:"sectors"`
	Next    string         `json:"next,omitempty"` // the next sector to promote, "" when done
	Blocked []string       `json:"blocked,omitempty"`
	Done    bool           `json:"done"`
}

// SectorStatus is what one sector runs for a key.
type SectorStatus struct {
	Sector      string        `json:"sector"`
	Order       int           `json:"order"`
	Environment string        `json:"environment"`
	Soak        string        `json:"soak,omitempty"`
	Values      []ValueStatus `json:"values"`
}

// ValueStatus is one value a sector runs, where, and since when.
type ValueStatus struct {
	Value   string      `json:"value"`
	Regions []string    `json:"regions"`
	Origin  string      `json:"origin"` // file:line:col that sets it
	Since   *Introduced `json:"since,omitempty"`
}

// Status reports every key matching keys (schema.RolloutKeys; "*" is one
// map key) or only key when it is not empty, at time now.
func Status(f *config.Fleet, keys []string, only string, history Blamer, now time.Time) ([]KeyStatus, error) {
	paths := concrete(f, keys)
	if only != "" {
		var kept []string
		for _, p := range paths {
			if p == only {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%q is not a versioned value of this fleet; versioned values: %s", only, strings.Join(paths, ", "))
		}
		paths = kept
	}
	var out []KeyStatus
	for _, p := range paths {
		out = append(out, status(f, p, history, now))
	}
	return out, nil
}

// concrete expands rollout keys to the paths the fleet actually sets.
func concrete(f *config.Fleet, keys []string) []string {
	seen := map[string]bool{}
	for _, c := range f.Clusters {
		if c.Effective == nil {
			continue
		}
		c.Effective.Walk("", func(p string, v *config.Value) {
			for _, k := range keys {
				if schema.MatchRolloutKey(k, p) && v.Kind == config.String {
					seen[p] = true
				}
			}
		})
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func status(f *config.Fleet, path string, history Blamer, now time.Time) KeyStatus {
	ks := KeyStatus{Key: path}
	parts := strings.Split(path, ".")
	for _, s := range f.Sectors {
		ss := SectorStatus{Sector: s.Name, Order: s.Order, Environment: s.Environment}
		if s.Soak > 0 {
			ss.Soak = s.Soak.String()
		}
		byValue := map[string]*ValueStatus{}
		for _, c := range f.Clusters {
			if c.SectorName() != s.Name || c.Effective == nil || c.Bool("delete") {
				continue
			}
			v := c.Effective.Lookup(parts...)
			if v == nil || v.Kind != config.String {
				continue
			}
			vs := byValue[v.Str]
			if vs == nil {
				vs = &ValueStatus{Value: v.Str, Origin: v.Origin.Pos.String()}
				if history != nil && v.Origin.Pos.Line > 0 {
					if commit, when, ok := history.Blame(v.Origin.Pos.File, v.Origin.Pos.Line); ok {
						vs.Since = &Introduced{Commit: commit, Time: when}
					}
				}
				byValue[v.Str] = vs
			}
			vs.Regions = appendUniq(vs.Regions, c.Region.Name)
		}
		for _, vs := range byValue {
			ss.Values = append(ss.Values, *vs)
		}
		sort.Slice(ss.Values, func(i, j int) bool { return ss.Values[i].Value < ss.Values[j].Value })
		if len(ss.Values) > 0 {
			ks.Sectors = append(ks.Sectors, ss)
		}
	}
	if len(ks.Sectors) == 0 {
		return ks
	}
	// The target is what the first sector runs in every one of its regions
	// (a canary on one cluster does not make it two rollouts); of several
	// such values, the one introduced last.
	first := ks.Sectors[0]
	var target *ValueStatus
	for i, v := range first.Values {
		if !covers(v, regionsOf(f, first.Sector)) {
			continue
		}
		if target == nil || (v.Since != nil && (target.Since == nil || v.Since.Time.After(target.Since.Time))) {
			target = &first.Values[i]
		}
	}
	if target == nil {
		ks.Blocked = []string{fmt.Sprintf("no value runs in every region of sector %s, where the rollout starts", first.Sector)}
		return ks
	}
	ks.Target = target.Value
	// What comes next is what promote would do.
	st := NextStep(f, parts, ks.Target, history, now)
	if st.Sector == nil {
		ks.Done = true
		return ks
	}
	ks.Next = st.Sector.Name
	ks.Blocked = st.Blocked
	return ks
}

func regionsOf(f *config.Fleet, sector string) []string {
	var out []string
	for _, r := range f.Regions {
		if r.Sector != nil && r.Sector.Name == sector {
			out = append(out, r.Name)
		}
	}
	return out
}

func covers(v ValueStatus, regions []string) bool {
	have := map[string]bool{}
	for _, r := range v.Regions {
		have[r] = true
	}
	for _, r := range regions {
		if !have[r] {
			return false
		}
	}
	return true
}

func short(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

func appendUniq(s []string, x string) []string {
	for _, y := range s {
		if y == x {
			return s
		}
	}
	s = append(s, x)
	sort.Strings(s)
	return s
}
