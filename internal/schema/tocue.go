package schema

import (
	"math"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/regionctl/regionctl/internal/config"
)

// toCUE converts a config value to CUE syntax. With pending set (layer
// files, checked before interpolation) a string holding a ${...} reference
// becomes the type `string`, so its shape is checked now and its final text
// later, in #Cluster. Effective configs are converted with pending unset:
// any ${ left in them is literal text (written as $${).
func toCUE(v *config.Value, pending bool) ast.Expr {
	switch v.Kind {
	case config.Null:
		return ast.NewNull()
	case config.Bool:
		return ast.NewBool(v.Bool)
	case config.Int:
		return ast.NewLit(token.INT, strconv.FormatInt(v.Int, 10))
	case config.Float:
		return ast.NewLit(token.FLOAT, strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case config.String:
		if pending && strings.Contains(v.Str, "${") {
			return ast.NewIdent("string")
		}
		return ast.NewString(v.Str)
	case config.List:
		elts := make([]ast.Expr, len(v.Items))
		for i, it := range v.Items {
			elts[i] = toCUE(it, pending)
		}
		return &ast.ListLit{Elts: elts}
	case config.Map:
		decls := make([]ast.Decl, 0, len(v.Fields))
		for _, f := range v.Fields {
			if f.Value.Kind == config.Null {
				continue // "remove the inherited key": nothing to check
			}
			decls = append(decls, &ast.Field{Label: ast.NewString(f.Key), Value: toCUE(f.Value, pending)})
		}
		return &ast.StructLit{Elts: decls}
	}
	return ast.NewNull()
}

// toGo is toCUE's value as Go values for cue.Context.Encode, which builds
// it for a fraction of BuildExpr's cost: a float written without a
// fraction or exponent becomes an int, as toCUE's literal does. ok is false
// for a float that is not finite, which only toCUE's literal gives its
// meaning. TestClusterCheckIsCluster and TestToGoIsToCUE hold the two
// equal.
func toGo(v *config.Value) (any, bool) {
	switch v.Kind {
	case config.Float:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		if n, err := strconv.ParseInt(strconv.FormatFloat(f, 'g', -1, 64), 10, 64); err == nil {
			return n, true
		}
		return f, true
	case config.List:
		out := make([]any, len(v.Items))
		for i, it := range v.Items {
			x, ok := toGo(it)
			if !ok {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	case config.Map:
		out := make(map[string]any, len(v.Fields))
		for _, f := range v.Fields {
			if f.Value.Kind == config.Null {
				continue
			}
			x, ok := toGo(f.Value)
			if !ok {
				return nil, false
			}
			out[f.Key] = x
		}
		return out, true
	}
	return v.Interface(), true
}

// build is v as a CUE value in w's context: through Encode (toGo), or
// BuildExpr (toCUE) where only that gives v's meaning.
func (w *compiled) build(v *config.Value) cue.Value {
	if x, ok := toGo(v); ok {
		return w.ctx.Encode(x)
	}
	return w.ctx.BuildExpr(toCUE(v, false))
}
