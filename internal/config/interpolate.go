package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/diag"
)

// Interpolate replaces ${name} in every string of v with vars[name]; $${
// stands for a literal ${. An unknown name is an error at the string's
// position. Unchanged subtrees are shared with v.
func Interpolate(v *Value, vars map[string]string) (*Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := interpolate(v, vars, &diags)
	return out, diags
}

func interpolate(v *Value, vars map[string]string, diags *diag.Diagnostics) *Value {
	switch v.Kind {
	case String:
		if !strings.Contains(v.Str, "${") {
			return v
		}
		s, err := expand(v.Str, vars)
		if err != nil {
			*diags = append(*diags, diag.Errorf(v.Origin.Pos, err.detail, "%s", err.summary))
			return v
		}
		out := *v
		out.Str = s
		out.Template = v.Str
		return &out
	case Map:
		var fields []Field
		for i, f := range v.Fields {
			nv := interpolate(f.Value, vars, diags)
			if nv != f.Value && fields == nil {
				fields = append(make([]Field, 0, len(v.Fields)), v.Fields[:i]...)
			}
			if fields != nil {
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
	case List:
		var items []*Value
		for i, it := range v.Items {
			nv := interpolate(it, vars, diags)
			if nv != it && items == nil {
				items = append(make([]*Value, 0, len(v.Items)), v.Items[:i]...)
			}
			if items != nil {
				items = append(items, nv)
			}
		}
		if items == nil {
			return v
		}
		out := *v
		out.Items = items
		return &out
	}
	return v
}

type expandError struct{ summary, detail string }

// expand performs the substitution on one string.
func expand(s string, vars map[string]string) (string, *expandError) {
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
