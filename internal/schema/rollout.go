package schema

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"golang.org/x/mod/semver"
)

// RolloutKeys lists the dotted paths of the versioned values the schema
// marks @rollout(), which roll out sector by sector; "*" stands for any key
// of a map (components.*.image).
func RolloutKeys() ([]string, error) {
	orders, err := RolloutOrders()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(orders))
	for k := range orders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// Orders of versioned values (@rollout(order=...)).
const (
	Unordered = ""       // digests: a new value is neither newer nor older
	Semver    = "semver" // 1.31 < 1.32; v0.1.58 < v0.2.0; a prefix up to the last / is ignored
)

// RolloutOrders maps each rollout key (as RolloutKeys lists them) to the
// order its values declare: Semver, or Unordered. The embedded schema is
// read for them once a process (a review asks twice, and compiling it is
// 3 ms of a 0.45 s one); each caller gets a map of its own.
func RolloutOrders() (map[string]string, error) {
	orders, err := rolloutOrders()
	return maps.Clone(orders), err
}

var rolloutOrders = sync.OnceValues(readRolloutOrders)

// readRolloutOrders is RolloutOrders, read from a compiled schema.
func readRolloutOrders() (map[string]string, error) {
	w, err := compileEmbedded()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(v cue.Value, prefix []string)
	var bad error
	walk = func(v cue.Value, prefix []string) {
		if a := v.Attribute("rollout"); a.Err() == nil && len(prefix) > 0 {
			order, _, err := a.Lookup(0, "order")
			if err != nil || (order != Unordered && order != Semver) {
				bad = fmt.Errorf("schema: %s has @rollout(order=%q): the orders are semver or none", strings.Join(prefix, "."), order)
			}
			out[strings.Join(prefix, ".")] = order
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
	return out, bad
}

// Older reports whether value a comes before b in the order: for Semver,
// when both parse (after any prefix up to the last / and an optional v)
// and a < b. Values that do not parse, or an unordered key, are never older.
func Older(order, a, b string) bool {
	if order != Semver {
		return false
	}
	va, vb := semverOf(a), semverOf(b)
	return va != "" && vb != "" && semver.Compare(va, vb) < 0
}

func semverOf(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if !strings.HasPrefix(s, "v") {
		s = "v" + s
	}
	if !semver.IsValid(s) {
		return ""
	}
	return s
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

// RolloutOrderOf is the order of the values of path (Semver or
// Unordered), when path is a versioned value (one of RolloutOrders' keys,
// as MatchRolloutKey matches them); otherwise an error that names every
// versioned value.
func RolloutOrderOf(path string) (string, error) {
	orders, err := RolloutOrders()
	if err != nil {
		return "", err
	}
	var keys []string
	for k, o := range orders {
		if MatchRolloutKey(k, path) {
			return o, nil
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "", &NotVersionedError{Path: path, Keys: keys}
}

// NotVersionedError is a path that is not a versioned value.
type NotVersionedError struct {
	Path string
	Keys []string // every versioned value, sorted
}

func (e *NotVersionedError) Error() string {
	return e.Path + " is not a versioned value; versioned values are " + strings.Join(e.Keys, ", ")
}
