package config

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sort"
	"sync"
)

// Hash returns a digest of v's content (kinds, keys and values, not
// origins): equal configs hash equal wherever they were written.
func Hash(v *Value) [32]byte { return hash(v, false) }

// HashWithOrigins is Hash plus each value's origin file and layer and its
// template: what a rendering that shows origins depends on.
func HashWithOrigins(v *Value) [32]byte { return hash(v, true) }

// RememberingHashWithOrigins returns HashWithOrigins remembering its
// answer for each value, safe for concurrent use: the two fleets of a
// review share most clusters' configs, each digested once.
func RememberingHashWithOrigins() func(*Value) [32]byte {
	var mu sync.Mutex
	known := map[*Value][32]byte{}
	return func(v *Value) [32]byte {
		mu.Lock()
		h, ok := known[v]
		mu.Unlock()
		if !ok {
			h = HashWithOrigins(v)
			mu.Lock()
			known[v] = h
			mu.Unlock()
		}
		return h
	}
}

func hash(v *Value, origins bool) [32]byte {
	if v == nil {
		return sha256.Sum256(nil)
	}
	bp := hashBuffers.Get().(*[]byte)
	buf := appendHashed((*bp)[:0], v, origins)
	sum := sha256.Sum256(buf)
	if cap(buf) <= 1<<20 {
		*bp = buf
		hashBuffers.Put(bp)
	}
	return sum
}

// hashBuffers hold what hash digests: the bytes of a whole value, digested
// at once (a write to the digest for each node cost more than the node).
var hashBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// appendHashed appends the bytes hash digests of v: each node's kind, its
// scalar or length (and, with origins, its layer, file and template), then
// its items, or its keys each before its value.
func appendHashed(buf []byte, v *Value, origins bool) []byte {
	buf = append(buf, byte(v.Kind))
	switch v.Kind {
	case Bool:
		if v.Bool {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	case Int:
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v.Int))
	case Float:
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float()))
	case String:
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v.Str)))
		buf = append(buf, v.Str...)
	case List:
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v.Items)))
	case Map:
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v.Fields)))
	}
	if origins {
		buf = append(buf, byte(v.Origin.Layer))
		buf = append(buf, v.Origin.Pos.File...)
		buf = append(buf, 0)
		buf = append(buf, v.Template...)
		buf = append(buf, 0)
	}
	for _, it := range v.Items {
		buf = appendHashed(buf, it, origins)
	}
	for _, f := range v.Fields {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(f.Key)))
		buf = append(buf, f.Key...)
		buf = appendHashed(buf, f.Value, origins)
	}
	return buf
}

// FromInterface builds a Value from plain Go values (as decoded from JSON),
// every node with origin o.
func FromInterface(x any, o Origin) *Value {
	switch t := x.(type) {
	case nil:
		return &Value{Kind: Null, Origin: o}
	case bool:
		return &Value{Kind: Bool, Bool: t, Origin: o}
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return &Value{Kind: Int, Int: int64(t), Origin: o}
		}
		return NewFloat(t, o)
	case int64:
		return &Value{Kind: Int, Int: t, Origin: o}
	case int:
		return &Value{Kind: Int, Int: int64(t), Origin: o}
	case string:
		return &Value{Kind: String, Str: t, Origin: o}
	case []any:
		items := make([]*Value, len(t))
		for i, it := range t {
			items[i] = FromInterface(it, o)
		}
		return &Value{Kind: List, Items: items, Origin: o}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fields := make([]Field, len(keys))
		for i, k := range keys {
			fields[i] = Field{Key: k, KeyPos: o.Pos, Value: FromInterface(t[k], o)}
		}
		return &Value{Kind: Map, Fields: fields, Origin: o}
	}
	return &Value{Kind: Null, Origin: o}
}
