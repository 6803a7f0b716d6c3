package schema

import (
	"strings"
	"sync"

	"cuelang.org/go/cue"

	"github.com/regionctl/regionctl/internal/config"
)

// typedSchema answers StringTyped from its own compiled schema: a CUE
// context is not safe for concurrent use, and files decode in parallel.
var typedSchema struct {
	once    sync.Once
	mu      sync.Mutex
	c       *compiled
	answers sync.Map // layer + path → bool
}

// StringTyped reports whether the layer's schema types the value at path
// (map keys; any key for a list item) as a string and nothing else, so
// that the loader can keep a plain 012345678901 there as the string it
// spells. Options for the decoder: DecodeOptions().
func StringTyped(layer config.Layer, path []string) bool {
	key := layer.String() + "\x00" + strings.Join(path, "\x00")
	if v, ok := typedSchema.answers.Load(key); ok {
		return v.(bool)
	}
	typedSchema.once.Do(func() { typedSchema.c, _ = compileEmbedded() })
	if typedSchema.c == nil {
		return false
	}
	typedSchema.mu.Lock()
	v := lookup(typedSchema.c.layers[layer], path)
	typed := v.Exists() && v.IncompleteKind() == cue.StringKind
	typedSchema.mu.Unlock()
	typedSchema.answers.Store(key, typed)
	return typed
}

// DecodeOptions are the loader's options that need the schema.
func DecodeOptions() config.DecodeOptions {
	return config.DecodeOptions{StringTyped: StringTyped}
}
