package rollout

import (
	"fmt"
	"strings"
	"time"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/schema"
)

// Health tells whether the Applications of a sector (of one component, or
// all when component is "") are healthy and synced at or after commit.
type Health interface {
	Check(sector, component, commit string) (summary string, err error)
}

// PromoteOptions are what a promotion checks against.
type PromoteOptions struct {
	Now        time.Time
	History    Blamer
	Health     Health
	SkipHealth bool
	// Read returns a layer file's bytes (the working tree, in the CLI).
	Read func(file string) ([]byte, error)
	// Order is the key's order (schema.Semver or schema.Unordered); with
	// an order, giving a sector a value older than one it runs is a
	// downgrade, refused unless AllowDowngrade.
	Order          string
	AllowDowngrade bool
}

// Edit is one file a promotion changes.
type Edit struct {
	File          string
	Before, After []byte
}

// Promotion is the change that moves a value one step: into the next
// sector that lacks it, or, once every sector has it, into config/global
// with the sector pins removed.
type Promotion struct {
	Key     string
	Value   string
	Sector  string // the sector that gets the value; "" when it moves to global
	Edits   []Edit
	Message string // the commit message to use
}

// Refusal says why a promotion may not happen now.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

// Promote plans promoting key (a concrete path such as eks.version) to
// value. It refuses while the sector before the next one has not soaked
// since the commit that gave it the value, or its health gate fails, or
// regions or clusters of the next sector pin another value.
func Promote(f *config.Fleet, key, value string, o PromoteOptions) (*Promotion, error) {
	path := strings.Split(key, ".")
	st := NextStep(f, path, value, o.History, o.Now)
	if st.Sector == nil {
		return toGlobal(f, key, path, value, o)
	}
	if len(st.Blocked) > 0 {
		return nil, &Refusal{strings.Join(st.Blocked, "; ")}
	}
	s := st.Sector
	var newer []string
	for _, c := range clustersOf(f, s.Name) {
		if v := c.Effective.Lookup(path...); v != nil && v.Kind == config.String && schema.Older(o.Order, value, v.Str) {
			newer = append(newer, fmt.Sprintf("%s runs %s (%s)", c.ID(), v.Str, v.Origin.Pos))
		}
	}
	if len(newer) > 0 && !o.AllowDowngrade {
		return nil, &Refusal{fmt.Sprintf("%s is older than what sector %s runs: %s; a downgrade needs --allow-downgrade", value, s.Name, strings.Join(uniq(newer), "; "))}
	}
	p := &Promotion{Key: key, Value: value, Sector: s.Name}
	var why string
	if st.Prev == nil {
		why = fmt.Sprintf("%s is the first sector: the rollout of %s starts here.", s.Name, value)
	} else {
		prev, since := st.Prev, st.Since
		health := "health gate skipped (--skip-health)"
		if !o.SkipHealth {
			if o.Health == nil {
				return nil, &Refusal{"no health gate: pass --skip-health to promote without one"}
			}
			summary, err := o.Health.Check(prev.Name, component(path), since.Commit)
			if err != nil {
				return nil, &Refusal{fmt.Sprintf("health gate of sector %s: %v\nPromote once the gate passes, or without it with --skip-health (the commit message says so).", prev.Name, err)}
			}
			health = "health gate: " + summary
		}
		why = fmt.Sprintf("%s has run %s in every region since %s (%s), past its %s soak.\n%s.", prev.Name, value, short(since.Commit), since.Time.UTC().Format(time.RFC3339), prev.Soak, health)
	}
	e, err := edit(o, s.Doc.File, func(b []byte) ([]byte, error) { return SetValue(s.Doc.File, b, path, value) })
	if err != nil {
		return nil, err
	}
	p.Edits = []Edit{e}
	if len(newer) > 0 {
		why += fmt.Sprintf("\nA downgrade, allowed (--allow-downgrade): %s.", strings.Join(uniq(newer), "; "))
	}
	p.Message = fmt.Sprintf("rollout: %s %s to sector %s\n\n%s\n", key, value, s.Name, why)
	return p, nil
}

// toGlobal moves a value every sector runs into config/global and removes
// the sector pins.
func toGlobal(f *config.Fleet, key string, path []string, value string, o PromoteOptions) (*Promotion, error) {
	p := &Promotion{Key: key, Value: value}
	var globalFile string
	for _, d := range f.Docs.Global {
		if d.Value.Lookup(path...) != nil {
			globalFile = d.File
		}
	}
	if globalFile == "" && len(f.Docs.Global) > 0 {
		globalFile = f.Docs.Global[0].File
	}
	if globalFile == "" {
		return nil, &Refusal{"no file in config/global to hold the value"}
	}
	if g := f.Global.Lookup(path...); g == nil || g.Kind != config.String || g.Str != value {
		e, err := edit(o, globalFile, func(b []byte) ([]byte, error) { return SetValue(globalFile, b, path, value) })
		if err != nil {
			return nil, err
		}
		p.Edits = append(p.Edits, e)
	}
	var removed []string
	for _, s := range f.Sectors {
		if s.Doc.Value.Lookup(path...) == nil {
			continue
		}
		e, err := edit(o, s.Doc.File, func(b []byte) ([]byte, error) { return RemoveValue(s.Doc.File, b, path) })
		if err != nil {
			return nil, err
		}
		p.Edits = append(p.Edits, e)
		removed = append(removed, s.Name)
	}
	if len(p.Edits) == 0 {
		return nil, &Refusal{fmt.Sprintf("nothing to promote: every sector runs %s and config/global holds it", value)}
	}
	p.Message = fmt.Sprintf("rollout: %s %s everywhere, into config/global\n\nEvery sector runs it; the pins of %s are removed.\n", key, value, strings.Join(removed, ", "))
	return p, nil
}

func edit(o PromoteOptions, file string, fn func([]byte) ([]byte, error)) (Edit, error) {
	before, err := o.Read(file)
	if err != nil {
		return Edit{}, err
	}
	after, err := fn(before)
	if err != nil {
		return Edit{}, err
	}
	return Edit{File: file, Before: before, After: after}, nil
}

func clustersOf(f *config.Fleet, sector string) []*config.Cluster {
	var out []*config.Cluster
	for _, c := range f.Clusters {
		if c.SectorName() == sector && c.Effective != nil && !c.Bool("delete") {
			out = append(out, c)
		}
	}
	return out
}

// runs reports whether every cluster of the sector runs value at path.
func runs(f *config.Fleet, sector string, path []string, value string) bool {
	for _, c := range clustersOf(f, sector) {
		v := c.Effective.Lookup(path...)
		if v == nil || v.Kind != config.String || v.Str != value {
			return false
		}
	}
	return true
}

// component names the chart a components.<name>.* key belongs to.
func component(path []string) string {
	if len(path) > 1 && path[0] == "components" {
		return path[1]
	}
	return ""
}

func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
