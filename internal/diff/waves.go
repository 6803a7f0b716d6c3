package diff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/schema"
)

// SkippedWaves is skippedWaves for callers outside a full comparison
// (validate). A fleet compared with itself (the merge base is the checkout,
// and fleet.LoadBeside gave the head's fleet as the base's) gives no value
// anew: nothing to walk. TestSkippedWavesOfAFleetItself holds skippedWaves
// to that.
func SkippedWaves(base, head *config.Fleet, keys []string) []SkippedWave {
	if base == head {
		return nil
	}
	return skippedWaves(base, head, keys)
}

// skippedWaves finds versioned values the change newly gives a cluster
// while an earlier sector (by rollout order) runs that value nowhere. A
// sector's rollout_exceptions entry for the key and value turns the finding
// into a reasoned exception, still reported.
func skippedWaves(base, head *config.Fleet, keys []string) []SkippedWave {
	bm := clusterMap(base)
	paths := splitRolloutKeys(keys)
	type kv struct{ path, value string }
	bySector := map[string]map[kv]bool{}  // values each sector runs somewhere
	fresh := map[kv]map[string]bool{}     // new values → sectors that got them
	where := map[kv]map[string]diag.Pos{} // new values → sector → origin that sets it
	for _, c := range head.Clusters {
		if c.Effective == nil || c.Deleting() {
			continue
		}
		s := c.SectorName()
		if bySector[s] == nil {
			bySector[s] = map[kv]bool{}
		}
		now := rolloutValues(c.Effective, paths)
		var old map[string]*config.Value
		switch bc := bm[c.ID()]; {
		case bc != nil && bc.Effective == c.Effective:
			// One config on both sides (config.BuildBeside shares it):
			// its values are the base's, not read again.
			old = now
		case bc != nil && bc.Effective != nil:
			old = rolloutValues(bc.Effective, paths)
		}
		for p, v := range now {
			k := kv{p, v.Str}
			bySector[s][k] = true
			if o := old[p]; old != nil && o != nil && o.Kind == config.String && o.Str == v.Str {
				continue
			}
			if fresh[k] == nil {
				fresh[k] = map[string]bool{}
				where[k] = map[string]diag.Pos{}
			}
			fresh[k][s] = true
			if at, ok := where[k][s]; !ok || posBefore(v.Origin.Pos, at) {
				where[k][s] = v.Origin.Pos
			}
		}
	}
	var out []SkippedWave
	for k, sectors := range fresh {
		for _, s := range head.Sectors {
			if !sectors[s.Name] {
				continue
			}
			var missing []string
			for _, earlier := range head.Sectors {
				if earlier.Order >= s.Order {
					break
				}
				if len(bySector[earlier.Name]) > 0 && !bySector[earlier.Name][k] {
					missing = append(missing, earlier.Name)
				}
			}
			if len(missing) == 0 {
				continue
			}
			out = append(out, SkippedWave{Key: k.path, Value: k.value, Sector: s.Name, Missing: missing, Origin: where[k][s.Name].String(), Pos: where[k][s.Name], Exception: exception(s, k.path, k.value, keys)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return strings.Join([]string{a.Key, a.Value, a.Sector}, "\x00") < strings.Join([]string{b.Key, b.Value, b.Sector}, "\x00")
	})
	if out == nil {
		out = []SkippedWave{}
	}
	return out
}

// rolloutPaths are the rollout keys split at their dots, once a review.
type rolloutPaths []rolloutPath

type rolloutPath struct {
	key   string
	parts []string
	star  bool // some part is "*"
}

func splitRolloutKeys(keys []string) rolloutPaths {
	out := make(rolloutPaths, len(keys))
	for i, k := range keys {
		parts := strings.Split(k, ".")
		out[i] = rolloutPath{k, parts, slices.Contains(parts, "*")}
	}
	return out
}

// rolloutValues returns the strings v holds at the rollout keys' paths (a
// "*" segment standing for every key of a map), by dotted path: a key
// without "*" is its own path.
func rolloutValues(v *config.Value, keys rolloutPaths) map[string]*config.Value {
	out := make(map[string]*config.Value, len(keys))
	var walk func(v *config.Value, parts []string, path string)
	walk = func(v *config.Value, parts []string, path string) {
		if v == nil {
			return
		}
		if len(parts) == 0 {
			if v.Kind == config.String {
				out[path] = v
			}
			return
		}
		if v.Kind != config.Map {
			return
		}
		join := func(k string) string {
			if path == "" {
				return k
			}
			return path + "." + k
		}
		if parts[0] == "*" {
			for _, f := range v.Fields {
				walk(f.Value, parts[1:], join(f.Key))
			}
			return
		}
		walk(v.Get(parts[0]), parts[1:], join(parts[0]))
	}
	for _, k := range keys {
		if k.star {
			walk(v, k.parts, "")
			continue
		}
		at := v
		for _, part := range k.parts {
			at = at.Get(part) // nil past a value that is not a map
		}
		if at != nil && at.Kind == config.String {
			out[k.key] = at
		}
	}
	return out
}

// exception returns the reason a sector's rollout_exceptions gives for
// running value at path ahead of earlier sectors, or "".
func exception(s *config.Sector, path, value string, keys []string) string {
	ex := s.Doc.Value.Get("rollout_exceptions")
	if ex == nil || ex.Kind != config.List {
		return ""
	}
	for _, e := range ex.Items {
		k, v, r := e.Get("key"), e.Get("value"), e.Get("reason")
		if k == nil || v == nil || r == nil {
			continue
		}
		if (k.Str == path || schema.MatchRolloutKey(k.Str, path)) && v.Str == value {
			return r.Str
		}
	}
	return ""
}

// posBefore orders positions by file, then line, then column.
func posBefore(a, b diag.Pos) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// WaveSkips are r's affected clusters in a sector that a skipped rollout
// wave (without an exception) reaches: a push's runs that must not start,
// as LifecycleSkips are those of a deletion that skips a step.
func WaveSkips(r *Report) []Skip {
	bySector := map[string]SkippedWave{}
	for _, w := range r.Waves {
		if w.Exception == "" {
			if _, ok := bySector[w.Sector]; !ok {
				bySector[w.Sector] = w
			}
		}
	}
	var out []Skip
	for _, c := range r.Affected {
		w, ok := bySector[c.Sector]
		if !ok {
			continue
		}
		out = append(out, Skip{Cluster: c.ID, Region: c.Region, Pipeline: c.Pipeline, Diag: diag.Diagnostic{
			Severity: diag.Error, Pos: w.Pos, Path: w.Key,
			Summary: w.Reach() + " (skipped wave)",
		}})
	}
	return out
}

// Reach says what the wave skips: key "value" reaches sector S before the
// earlier sectors that run it nowhere.
func (w SkippedWave) Reach() string {
	return fmt.Sprintf("%s %q reaches sector %s before %s", w.Key, w.Value, w.Sector, strings.Join(w.Missing, ", "))
}
