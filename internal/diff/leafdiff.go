package diff

import (
	"strings"

	"github.com/regionctl/regionctl/internal/config"
)

// leafChange is a leaf that differs between two configs: ov nil when it
// was added, nv nil when it was removed.
type leafChange struct {
	path   string
	ov, nv *config.Value
}

// changedLeaves lists the leaves (as Value.Walk gives them: scalars, lists
// and empty maps, by dotted path) whose value differs between old and now,
// as comparing every leaf of one with the other's finds them, but walking
// the two trees side by side: a subtree both share is skipped whole, and
// no path is spelt but a changed one's. ok is false, with nothing listed,
// when some key holds a dot or is empty: two paths could then read alike,
// and only the leaf-by-leaf comparison (changedLeavesByPath) says which
// of them stands.
func changedLeaves(old, now *config.Value) (out []leafChange, ok bool) {
	if !plainKeys(old) || !plainKeys(now) {
		return nil, false
	}
	sideBySide("", old, now, &out)
	return out, true
}

// plainKeys says no key under v holds a dot or is empty.
func plainKeys(v *config.Value) bool {
	if v == nil || v.Kind != config.Map {
		return true
	}
	for _, f := range v.Fields {
		if f.Key == "" || strings.IndexByte(f.Key, '.') >= 0 || !plainKeys(f.Value) {
			return false
		}
	}
	return true
}

func isLeaf(v *config.Value) bool { return v.Kind != config.Map || len(v.Fields) == 0 }

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// sideBySide adds the changes between o and n, at path p (either may be
// nil: absent).
func sideBySide(p string, o, n *config.Value, out *[]leafChange) {
	switch {
	case o == n:
		return
	case o == nil:
		n.Walk(p, func(q string, leaf *config.Value) { *out = append(*out, leafChange{q, nil, leaf}) })
	case n == nil:
		o.Walk(p, func(q string, leaf *config.Value) { *out = append(*out, leafChange{q, leaf, nil}) })
	case isLeaf(o) && isLeaf(n):
		if !sameScalar(o, n) {
			*out = append(*out, leafChange{p, o, n})
		}
	case isLeaf(o) || isLeaf(n):
		// A leaf on one side, a map of leaves below it on the other: no
		// path is on both.
		sideBySide(p, o, nil, out)
		sideBySide(p, nil, n, out)
	default:
		i, j := 0, 0
		for i < len(o.Fields) || j < len(n.Fields) {
			switch {
			case j == len(n.Fields) || (i < len(o.Fields) && o.Fields[i].Key < n.Fields[j].Key):
				sideBySide(joinPath(p, o.Fields[i].Key), o.Fields[i].Value, nil, out)
				i++
			case i == len(o.Fields) || n.Fields[j].Key < o.Fields[i].Key:
				sideBySide(joinPath(p, n.Fields[j].Key), nil, n.Fields[j].Value, out)
				j++
			default:
				sideBySide(joinPath(p, o.Fields[i].Key), o.Fields[i].Value, n.Fields[j].Value, out)
				i++
				j++
			}
		}
	}
}

// sameScalar is o.Scalar() == n.Scalar(), without spelling either when
// both are of a kind whose text is its value alone.
func sameScalar(o, n *config.Value) bool {
	if o.Kind == n.Kind {
		switch o.Kind {
		case config.Null:
			return true
		case config.Bool:
			return o.Bool == n.Bool
		case config.Int:
			return o.Int == n.Int
		case config.String:
			return o.Str == n.Str
		}
	}
	return o.Scalar() == n.Scalar()
}

// changedLeavesByPath is changedLeaves by comparing every leaf of old with
// now's at the same path, which any keys allow.
func changedLeavesByPath(old, now *config.Value) []leafChange {
	o, n := leaves(old), leaves(now)
	var out []leafChange
	for p, nv := range n {
		if ov := o[p]; ov == nil || ov.Scalar() != nv.Scalar() {
			out = append(out, leafChange{p, ov, nv})
		}
	}
	for p, ov := range o {
		if n[p] == nil {
			out = append(out, leafChange{p, ov, nil})
		}
	}
	return out
}

func leaves(v *config.Value) map[string]*config.Value {
	m := map[string]*config.Value{}
	v.Walk("", func(p string, leaf *config.Value) { m[p] = leaf })
	return m
}
