package schema

import (
	"strconv"
	"strings"

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
