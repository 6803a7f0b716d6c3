package schema

import (
	"sort"
	"strings"

	"cuelang.org/go/cue"
)

// RolloutKeys lists the dotted paths of the versioned values the schema
// marks @rollout(), which roll out sector by sector; "*" stands for any key
// of a map (components.*.image).
func RolloutKeys() ([]string, error) {
	src, err := loadSource()
	if err != nil {
		return nil, err
	}
	w, err := src.compile()
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(v cue.Value, prefix []string)
	walk = func(v cue.Value, prefix []string) {
		if a := v.Attribute("rollout"); a.Err() == nil && len(prefix) > 0 {
			out = append(out, strings.Join(prefix, "."))
			return
		}
		if v.IncompleteKind()&cue.StructKind == 0 {
			return
		}
		it, err := v.Fields(cue.Optional(true))
		if err == nil {
			for it.Next() {
				walk(it.Value(), append(append([]string(nil), prefix...), strings.TrimRight(it.Selector().String(), "?!")))
			}
		}
		// A map such as components has a pattern constraint, not fields:
		// fill in a probe key and read what the pattern gives it.
		if len(prefix) > 0 && !hasFields(v) {
			if p := v.FillPath(cue.MakePath(cue.Str("probe")), struct{}{}).LookupPath(cue.MakePath(cue.Str("probe"))); p.Exists() && p.IncompleteKind()&cue.StructKind != 0 {
				walk(p, append(append([]string(nil), prefix...), "*"))
			}
		}
	}
	walk(w.root.LookupPath(cue.ParsePath("#Settings")), nil)
	sort.Strings(out)
	return out, nil
}

func hasFields(v cue.Value) bool {
	it, err := v.Fields(cue.Optional(true))
	return err == nil && it.Next()
}

// MatchRolloutKey reports whether the dotted path p is an instance of the
// rollout key (as RolloutKeys lists them), where "*" stands for one key.
func MatchRolloutKey(key, p string) bool {
	kp, pp := strings.Split(key, "."), strings.Split(p, ".")
	if len(kp) != len(pp) {
		return false
	}
	for i := range kp {
		if kp[i] != "*" && kp[i] != pp[i] {
			return false
		}
	}
	return true
}
