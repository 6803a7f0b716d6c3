package schema

import (
	"strings"

	"cuelang.org/go/cue"

	"github.com/regionctl/regionctl/internal/config"
)

// StringTyped reports whether the layer's schema types the value at path
// (map keys; any key for a list item) as a string and nothing else, so
// that the loader can keep a plain 012345678901 there as the string it
// spells. Files decode in parallel before any check runs, so the answers
// come from the first worker's schema under a lock, memoised by path.
func (c *Checker) StringTyped(layer config.Layer, path []string) bool {
	key := layer.String() + "\x00" + strings.Join(path, "\x00")
	if v, ok := c.typed.Load(key); ok {
		return v.(bool)
	}
	c.typedMu.Lock()
	v := lookup(c.pool[0].layers[layer], path)
	typed := v.Exists() && v.IncompleteKind() == cue.StringKind
	c.typedMu.Unlock()
	c.typed.Store(key, typed)
	return typed
}

// DecodeOptions are the loader's options that need the schema.
func (c *Checker) DecodeOptions() config.DecodeOptions {
	return config.DecodeOptions{StringTyped: c.StringTyped}
}
