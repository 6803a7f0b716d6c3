package config

// Merge returns upper layered over lower: maps merge key by key, scalars and
// lists replace, and an explicit null in upper removes the inherited key.
// Neither input is modified; unchanged subtrees are shared.
func Merge(lower, upper *Value) *Value {
	switch {
	case upper == nil:
		return lower
	case lower == nil:
		return dropNulls(upper)
	case upper.Kind == Map && lower.Kind == Map:
		out := &Value{Kind: Map, Origin: upper.Origin, Fields: make([]Field, 0, mergedLen(lower.Fields, upper.Fields))}
		var removed []Field
		i, j := 0, 0
		for i < len(lower.Fields) || j < len(upper.Fields) {
			switch {
			case j == len(upper.Fields) || (i < len(lower.Fields) && lower.Fields[i].Key < upper.Fields[j].Key):
				out.Fields = append(out.Fields, lower.Fields[i])
				i++
			case i == len(lower.Fields) || upper.Fields[j].Key < lower.Fields[i].Key:
				if u := upper.Fields[j]; u.Value.Kind != Null {
					out.Fields = append(out.Fields, Field{Key: u.Key, KeyPos: u.KeyPos, Value: dropNulls(u.Value)})
				}
				j++
			default:
				if u := upper.Fields[j]; u.Value.Kind != Null {
					out.Fields = append(out.Fields, Field{Key: u.Key, KeyPos: u.KeyPos, Value: Merge(lower.Fields[i].Value, u.Value)})
				} else {
					removed = append(removed, Field{Key: u.Key, KeyPos: u.KeyPos, Value: lower.Fields[i].Value})
				}
				i++
				j++
			}
		}
		for _, r := range lower.Removed() {
			if out.Get(r.Key) == nil && upper.Get(r.Key) == nil {
				removed = append(removed, r)
			}
		}
		if removed != nil {
			out.merged = &merged{removed: removed}
		}
		return out
	}
	out := *dropNulls(upper)
	overrode := make([]*Value, 0, 1+len(lower.Overrode()))
	overrode = append(overrode, lower)
	overrode = append(overrode, lower.Overrode()...)
	// upper's own history (a map's removals) stays; what it overrode
	// is lower's.
	out.merged = &merged{removed: out.Removed(), overrode: overrode}
	return &out
}

// mergedLen is how many fields Merge gives two maps' fields: each key of
// either, but a key upper sets to null. The merged fields are made to that
// size, not to the two lengths' sum, which leaves room for every key the
// two share: a cluster's merged maps outlive the merge (its effective
// config, the schema's defaults layered under it), one set a cluster.
func mergedLen(lower, upper []Field) int {
	n, i, j := 0, 0, 0
	for i < len(lower) || j < len(upper) {
		switch {
		case j == len(upper) || (i < len(lower) && lower[i].Key < upper[j].Key):
			n++
			i++
		case i == len(lower) || upper[j].Key < lower[i].Key:
			if upper[j].Value.Kind != Null {
				n++
			}
			j++
		default:
			if upper[j].Value.Kind != Null {
				n++
			}
			i++
			j++
		}
	}
	return n
}

// dropNulls removes null map entries, which only mean "remove the inherited
// key" and have nothing to remove when nothing is inherited. A map with no
// null anywhere beneath it is returned as it is, not copied: values are
// never modified once built.
func dropNulls(v *Value) *Value {
	if v.Kind != Map {
		return v
	}
	var fields []Field
	for i, f := range v.Fields {
		nv := f.Value
		if nv.Kind != Null {
			nv = dropNulls(nv)
		}
		if (nv.Kind == Null || nv != f.Value) && fields == nil {
			fields = append(make([]Field, 0, len(v.Fields)), v.Fields[:i]...)
		}
		if fields != nil && nv.Kind != Null {
			f.Value = nv
			fields = append(fields, f)
		}
	}
	if fields == nil {
		return v
	}
	out := *v
	out.Fields = fields
	return &out
}
