package config

import (
	"fmt"
	"strings"

	"github.com/regionctl/regionctl/internal/secrets"
)

// Explained is one effective leaf with where it came from.
type Explained struct {
	Path     string    `json:"path"`
	Value    any       `json:"value"`
	Text     string    `json:"text"`               // the value as people read it
	Template string    `json:"template,omitempty"` // as written, before ${...} interpolation
	Origin   Origin    `json:"-"`
	Overrode []*Value  `json:"-"`
	Layers   []Layered `json:"origins"` // Origin first, then what it overrode
}

// Layered is one layer's say on a value.
type Layered struct {
	Layer string `json:"layer"`
	Pos   string `json:"pos"`
	Text  string `json:"value"`
}

// Explain lists the leaves of c's effective config under the dotted path
// (all of them when path is empty) with their origins. It fails when path
// names nothing.
func Explain(c *Cluster, path string) ([]Explained, error) {
	v := c.Effective
	prefix := ""
	if path != "" {
		v = v.Lookup(strings.Split(path, ".")...)
		prefix = path
		if v == nil {
			return nil, fmt.Errorf("%s has no key %q in its effective config", c.ID(), path)
		}
	}
	var out []Explained
	v.Walk(prefix, func(p string, leaf *Value) {
		leaf = redacted(p, leaf)
		e := Explained{Path: p, Value: leaf.Interface(), Text: leaf.Scalar(), Template: secrets.Mask(leaf.Template), Origin: leaf.Origin}
		e.Layers = append(e.Layers, Layered{Layer: leaf.Origin.Layer.String(), Pos: leaf.Origin.Pos.String(), Text: leaf.Scalar()})
		for _, o := range leaf.Overrode() {
			o = redacted(p, o)
			e.Overrode = append(e.Overrode, o)
			e.Layers = append(e.Layers, Layered{Layer: o.Origin.Layer.String(), Pos: o.Origin.Pos.String(), Text: o.Scalar()})
		}
		out = append(out, e)
	})
	return out, nil
}

// redacted is v with a string that looks like a secret replaced, for
// showing: explain never prints secret material, even of a config that
// fails validation for holding it.
func redacted(path string, v *Value) *Value {
	if v == nil || v.Kind != String {
		return v
	}
	if s := secrets.Redact(path, v.Str); s != v.Str {
		c := *v
		c.Str, c.Template = s, ""
		return &c
	}
	return v
}
