package config

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/regionctl/regionctl/internal/diag"
)

// Interpolate replaces ${name} in every string of v with vars[name]; $${
// stands for a literal ${. An unknown name is an error at the string's
// position. Unchanged subtrees are shared with v.
func Interpolate(v *Value, vars map[string]string) (*Value, diag.Diagnostics) {
	return interpolateShared(v, vars, nil)
}

// interpolateShared is Interpolate, taking from shared (when not nil) the
// result of any subtree of v interpolated before, by another cluster, to
// the same strings: most of a fleet's references name a region or an
// environment, or a cluster name that every region repeats.
func interpolateShared(v *Value, vars map[string]string, shared *interpolated) (*Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out, _ := interpolate(v, vars, &diags, shared)
	return out, diags
}

// interpolated holds the subtrees interpolated so far, safe for
// concurrent use: each by the subtree it was made from and every string
// it was given (sig, from interpolate). Values are never modified once
// built, so the clusters share them. The map is kept in shards, by the
// subtree's address, each behind a lock of its own: every core builds
// effective configs at once, and one lock kept them waiting on each other.
type interpolated struct {
	shards [interpolatedShards]interpolatedShard
	// plain holds the maps and lists of the roots newInterpolated was
	// given that have no ${ in any string beneath them (true), and those
	// that have (false). It is only read once made: interpolation returns
	// a plain subtree as it is without visiting it. Every cluster of a
	// region shares most of its region's merged values, whose strings it
	// would otherwise look through one by one (at 19,215 clusters, a
	// thousand lines of global values each).
	plain map[*Value]bool
}

const interpolatedShards = 32

type interpolatedShard struct {
	mu sync.Mutex
	m  map[interpolatedKey]*Value
}

type interpolatedKey struct {
	from *Value
	sig  string
}

func newInterpolated(roots ...*Value) *interpolated {
	s := &interpolated{plain: map[*Value]bool{}}
	for i := range s.shards {
		s.shards[i].m = map[interpolatedKey]*Value{}
	}
	for _, r := range roots {
		if r != nil {
			s.learn(r)
		}
	}
	return s
}

// learn records in s.plain whether each map and list under v (v too) is
// plain, visiting a subtree the roots share once, and reports whether v
// is: a string is unless it holds ${ (interpolate's own test).
func (s *interpolated) learn(v *Value) bool {
	switch v.Kind {
	case String:
		return !strings.Contains(v.Str, "${")
	case Map, List:
		if p, ok := s.plain[v]; ok {
			return p
		}
		p := true
		for _, f := range v.Fields {
			p = s.learn(f.Value) && p
		}
		for _, it := range v.Items {
			p = s.learn(it) && p
		}
		s.plain[v] = p
		return p
	}
	return true
}

// share returns the value made before from the same subtree to the same
// strings, else the one build makes, kept for the next.
func (s *interpolated) share(from *Value, sig string, build func() *Value) *Value {
	if s == nil {
		return build()
	}
	k := interpolatedKey{from, sig}
	// Values are allocated 8-byte aligned and larger than 64 bytes: the
	// address's low bits say nothing, the next ones spread the shards.
	sh := &s.shards[(uintptr(unsafe.Pointer(from))>>6)%interpolatedShards]
	sh.mu.Lock()
	v, ok := sh.m[k]
	sh.mu.Unlock()
	if ok {
		return v
	}
	v = build()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if prev, ok := sh.m[k]; ok {
		return prev
	}
	sh.m[k] = v
	return v
}

// changedChild is a child of a map or list that interpolation changed.
type changedChild struct {
	i int
	v *Value
}

// interpolate returns v interpolated. With shared, a value interpolation
// changed is the one shared holds for its subtree and content: a string's
// by the string it became, a map's or a list's by its changed children,
// each by its place and its own shared value. Shared values are one per
// subtree and content, so two maps or lists with the same changed children
// are equal, and the key of one is a few bytes a child, not every string
// under it (at 19,215 clusters, keys made of the strings beneath spent a
// fifth of the effective configs' CPU hashing them).
//
// A value that names both ${region} and ${cluster}, or holds one that
// does, is one cluster's own (own): no other cluster of a fleet makes it,
// so it is made without being looked up in shared or kept there (an
// account's name and e-mail, its buckets, and every map above them).
func interpolate(v *Value, vars map[string]string, diags *diag.Diagnostics, shared *interpolated) (out *Value, own bool) {
	switch v.Kind {
	case String:
		if !strings.Contains(v.Str, "${") {
			return v, false
		}
		var region, cluster bool
		s, err := expand(v.Str, vars, func(name string) {
			region, cluster = region || name == "region", cluster || name == "cluster"
		})
		if err != nil {
			*diags = append(*diags, diag.Errorf(v.Origin.Pos, err.detail, "%s", err.summary))
			return v, false
		}
		build := func() *Value {
			out := *v
			out.Str = s
			out.Template = v.Str
			return &out
		}
		if region && cluster {
			return build(), true
		}
		return shared.share(v, s, build), false
	case Map, List:
		if shared != nil && shared.plain[v] {
			return v, false
		}
		n := len(v.Fields)
		child := func(i int) *Value { return v.Fields[i].Value }
		if v.Kind == List {
			n, child = len(v.Items), func(i int) *Value { return v.Items[i] }
		}
		var changed []changedChild
		var sig []byte
		for i := 0; i < n; i++ {
			c := child(i)
			nv, ownChild := interpolate(c, vars, diags, shared)
			if nv == c {
				continue
			}
			changed = append(changed, changedChild{i, nv})
			// An own child's address is no signature: its parent is
			// its cluster's own too, and keeps none.
			if own = own || ownChild; !own {
				sig = appendSig(sig, i, nv)
			}
		}
		if changed == nil {
			return v, false
		}
		build := func() *Value {
			out := *v
			if v.Kind == Map {
				out.Fields = append([]Field(nil), v.Fields...)
				for _, c := range changed {
					out.Fields[c.i].Value = c.v
				}
			} else {
				out.Items = append([]*Value(nil), v.Items...)
				for _, c := range changed {
					out.Items[c.i] = c.v
				}
			}
			return &out
		}
		if own {
			return build(), true
		}
		return shared.share(v, string(sig), build), false
	}
	return v, false
}

// appendSig adds changed child i, now c, to its parent's signature: its
// place and c's address. c is the value shared holds for its subtree and
// content (interpolate), which shared keeps alive and never moves as long
// as the signature can be looked up in it, so the address names that
// content alone. Without shared the signature is not used.
func appendSig(sig []byte, i int, c *Value) []byte {
	sig = binary.AppendUvarint(sig, uint64(i))
	return binary.LittleEndian.AppendUint64(sig, uint64(uintptr(unsafe.Pointer(c))))
}

type expandError struct{ summary, detail string }

// expand performs the substitution on one string.
func expand(s string, vars map[string]string, used func(name string)) (string, *expandError) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", &expandError{"unclosed ${ reference", fmt.Sprintf("The reference at %q is not closed with '}'; write $${ for a literal ${.", s[i:])}
		}
		name := s[i+2 : i+end]
		val, ok := vars[name]
		if !ok {
			return "", &expandError{"undefined variable ${" + name + "}", fmt.Sprintf("Use one of %s, or write $${ for a literal ${.", varList(vars))}
		}
		used(name)
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

func varList(vars map[string]string) string {
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, "${"+k+"}")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
