package schema

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// wholeCluster compiles the schema with #Cluster as one closed definition,
// #Settings embedded beside the rules, as it was checked in one step before
// clusterCheck: #ClusterRules' text without its "...", the #Cluster that
// embeds it left out.
func wholeCluster(t *testing.T) *compiled {
	t.Helper()
	src, err := loadSource()
	if err != nil {
		t.Fatal(err)
	}
	text := string(src.files["cluster.cue"])
	start := strings.Index(text, "#Cluster: {")
	end := strings.Index(text, "#ClusterRules: {")
	if start < 0 || end < start {
		t.Fatal("cluster.cue has no #Cluster before #ClusterRules")
	}
	text = text[:start] + "#ClusterRules: #Cluster\n\n#Cluster: {\n\t#Settings" + text[end+len("#ClusterRules: {"):]
	opened := regexp.MustCompile(`(?m)^\t*\.\.\.\n`)
	if n := len(opened.FindAllString(text, -1)); n < 10 {
		t.Fatalf("cluster.cue: %d open structs, want every struct of #ClusterRules", n)
	}
	text = opened.ReplaceAllString(text, "")
	files := map[string][]byte{}
	for n, b := range src.files {
		files[n] = b
	}
	files["cluster.cue"] = []byte(text)
	w, err := (&source{files: files}).compile()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// checkWhole is the one-step check: in unified with the whole #Cluster.
func checkWhole(w *compiled, in *config.Value) clusterResult {
	u := w.cluster.Unify(w.ctx.BuildExpr(toCUE(in, false)))
	if err := u.Validate(cue.Concrete(true)); err != nil {
		return clusterResult{Findings: w.findingsOf(err, w.cluster, in, "in some layer of this cluster (global, sector, region or cluster file)")}
	}
	var out clusterResult
	w.defaults(u, in, nil, &out.Defaults)
	return out
}

// TestClusterCheckIsCluster holds clusterCheck's two steps (#ClusterRules,
// then #Settings for the values no layer check saw) to the one step they
// replace, unifying with #Cluster whole: the same findings, word for word,
// and the same defaults, for every cluster of the example and a generated
// fleet and for inputs altered to break each kind of rule. Positions of
// defaults are left out: a default now points at the #ClusterRules line
// that gives it rather than at #Derived's template.
func TestClusterCheckIsCluster(t *testing.T) {
	whole := wholeCluster(t)
	c, err := New(Options{Version: "test", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := c.pool[0]
	var inputs []*config.Value
	names := []string{}
	for name, f := range testFleets(t) {
		for _, cl := range f.Clusters {
			inputs = append(inputs, w.clusterInput(cl.Effective))
			names = append(names, name+" "+cl.ID())
		}
	}
	// Each kind of rule broken, in a regional and a management cluster.
	var regional, management *config.Value
	for _, in := range inputs {
		switch in.Get("type").Str {
		case "regional":
			regional = in
		case "management":
			management = in
		}
	}
	if regional == nil || management == nil {
		t.Fatal("the fleets lack a cluster type")
	}
	str := func(s string) *config.Value { return &config.Value{Kind: config.String, Str: s} }
	interp := func(s string) *config.Value { return &config.Value{Kind: config.String, Str: s, Template: "${x}"} }
	num := func(n int64) *config.Value { return &config.Value{Kind: config.Int, Int: n} }
	long := strings.Repeat("c", 32)
	alters := []struct {
		name string
		path []string
		v    *config.Value // nil: removed
	}{
		{"no account.id_ref", []string{"account", "id_ref"}, nil},
		{"no network", []string{"network"}, nil},
		{"no eks.version", []string{"eks", "version"}, nil},
		{"node_max under node_min", []string{"eks", "node_max"}, num(1)},
		{"one private subnet", []string{"network", "private_subnets"}, &config.Value{Kind: config.List, Items: []*config.Value{str("10.0.0.0/24")}}},
		{"unknown type", []string{"type"}, str("edge")},
		{"unknown environment", []string{"environment"}, str("prod")},
		{"central-bootstrap cluster", []string{"cluster"}, str("central-bootstrap")},
		{"cluster name whose derived names are too long", []string{"cluster"}, str(long)},
		{"delete_pipeline without delete", []string{"delete_pipeline"}, &config.Value{Kind: config.Bool, Bool: true}},
		{"delete_pipeline with delete false", []string{"delete"}, &config.Value{Kind: config.Bool, Bool: false}},
		{"interpolated bucket not a bucket", []string{"hypershift", "oidc_bucket"}, interp("Not_A_Bucket")},
		{"interpolated bucket too long", []string{"hypershift", "oidc_bucket"}, interp(strings.Repeat("b", 64))},
		{"interpolated bucket valid", []string{"hypershift", "oidc_bucket"}, interp("a-valid-bucket")},
		{"interpolated e-mail not an address", []string{"account", "email"}, interp("nobody")},
		{"interpolated tag value on two lines", []string{"tags", "team"}, interp("a\nb")},
		{"interpolated tag value valid", []string{"tags", "team"}, interp("team-a")},
		{"interpolated OU", []string{"account", "ou"}, interp("platform/no-slash")},
		{"interpolated secret reference inline", []string{"account", "id_ref"}, interp("123456789012")},
		{"interpolated domain not a name", []string{"platform_api", "domain"}, interp("-bad-.example")},
		{"interpolated endpoint not https", []string{"platform_api", "endpoint"}, interp("http://api.example.com")},
		{"interpolated state bucket with two dots", []string{"state_bucket"}, interp("a..b")},
		{"interpolated consumer name not a name", []string{"maestro", "consumer_name"}, interp("Consumer")},
		{"interpolated DR e-mail", []string{"etcd_backup", "account", "email"}, interp("dr")},
		{"interpolated subnets, one not a block", []string{"network", "private_subnets"}, &config.Value{Kind: config.List, Items: []*config.Value{interp("10.0.0.0/24"), str("10.0.1.0/33")}}},
	}
	for _, base := range []*config.Value{regional, management} {
		for _, a := range alters {
			inputs = append(inputs, base.WithPath(a.path, a.v))
			names = append(names, base.Get("type").Str+": "+a.name)
		}
	}
	failing := 0
	for i, in := range inputs {
		got, want := c.clusterCheck(w, in), checkWhole(whole, in)
		if len(want.Findings) > 0 {
			failing++
		}
		g, _ := json.Marshal(got.Findings)
		x, _ := json.Marshal(want.Findings)
		if string(g) != string(x) {
			t.Errorf("%s: findings\n got %s\nwant %s", names[i], g, x)
			continue
		}
		if g, x := withoutPositions(got.Defaults), withoutPositions(want.Defaults); g != x {
			t.Errorf("%s: defaults\n got %s\nwant %s", names[i], g, x)
		}
	}
	if failing < len(alters) {
		t.Errorf("only %d of the inputs fail the check: the altered inputs break too little", failing)
	}
}

func withoutPositions(ds []defaultValue) string {
	out := make([]defaultValue, len(ds))
	for i, d := range ds {
		d.Pos = diag.Pos{}
		out[i] = d
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// TestStringPassesIsCUEs holds the patterns matched in Go (stringPasses) to
// CUE's verdict on the same field, for every string field of #Settings
// that is patterns alone and values near each of their edges.
func TestStringPassesIsCUEs(t *testing.T) {
	w := compiledForTest(t)
	values := []string{"", "a", "A", "ab", "abc", "mc01", "regional", "-a", "a-", "a..b", "a.b", "10.0.0.0/16", "10.0.0.0/33",
		"256.0.0.0/8", "1.2.3.4", "xn--a", "sthree-a", "bucket-s3alias", "x.mrap", "ssm:///a/b", "ssm:///", "arn:aws:secretsmanager:us-east-1:123456789012:secret:a",
		"arn:aws:iam::123456789012:role/a", "https://a.example.com", "https://a.example.com/x", "http://a.example.com", "https://a:8443/",
		"oci://r.example.com/c", "git@example.com:a/b", "ssh://git@example.com/a", "/platform/a", "/platform//a", "platform/a",
		"a@b.co", "a@b", "A@B.CO", "a\nb", "a b", "1.34", "1.0", "1.100", "2.1", "us-east-1", "us-gov-west-1", "xa-north-8",
		"ä", "ÄÖ é", "a\u2028b", "main", "-main", "a/b", "a//b", "a.lock", "a/", "v1.2.3", "1.2.3+build",
		strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("a", 256), strings.Repeat("a", 257), strings.Repeat("a.", 127) + "aa",
		"registry.example.com/a@sha256:" + strings.Repeat("a", 64), "registry.example.com/a:1@sha256:" + strings.Repeat("a", 64)}
	fields := 0
	var walk func(s cue.Value, p []string)
	walk = func(s cue.Value, p []string) {
		it, err := s.Fields(cue.Optional(true))
		if err != nil {
			return
		}
		for it.Next() {
			cp := append(p[:len(p):len(p)], it.Selector().Unquoted())
			v := it.Value()
			if v.IncompleteKind() == cue.StructKind {
				walk(v, cp)
				continue
			}
			if w.stringRule(cp) == nil {
				continue
			}
			fields++
			for _, x := range values {
				got, known := w.stringPasses(cp, x)
				want := lookup(w.settings, cp).Unify(w.ctx.Encode(x)).Validate(cue.Concrete(true)) == nil
				if !known || got != want {
					t.Errorf("%s = %q: Go says %v (known %v), CUE %v", strings.Join(cp, "."), x, got, known, want)
				}
			}
		}
	}
	walk(w.settings, nil)
	if fields < 15 {
		t.Errorf("only %d string fields of patterns alone", fields)
	}
}

// TestSettingsRelatesNoFields holds #Settings, and the types it names, to
// what clusterCheck's second step assumes: each value no layer check saw
// can be held to its own field alone, and a merge of values each layer
// passed passes. So no rule refers to another field (every identifier
// names a definition or a predeclared type), none constrains a struct as a
// whole (no import: struct.MaxFields and the like; no disjunction between
// structs, which two layers could each meet half of; no comprehension), and
// none gives a default (the first step, which fills defaults, does not see
// #Settings).
// A list is replaced whole by a merge, so a list rule is its one layer's.
func TestSettingsRelatesNoFields(t *testing.T) {
	src, err := loadSource()
	if err != nil {
		t.Fatal(err)
	}
	predeclared := map[string]bool{"string": true, "int": true, "bool": true, "number": true, "float": true, "bytes": true, "null": true, "_": true, "uint": true}
	idents := 0
	for _, name := range []string{"settings.cue", "types.cue"} {
		f, err := parser.ParseFile(name, src.files[name])
		if err != nil {
			t.Fatal(err)
		}
		for spec := range f.ImportSpecs() {
			t.Errorf("%s imports %s: a builtin may constrain a struct as a whole, which the second step would not see", name, spec.Path.Value)
		}
		ast.Walk(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Package:
				return false // the package clause
			case *ast.Comprehension:
				t.Errorf("%v: a comprehension: a rule over fields, which the second step would not see", n.Pos())
			case *ast.BinaryExpr:
				if n.Op == token.OR && (isStructOrList(n.X) || isStructOrList(n.Y)) {
					t.Errorf("%v: a disjunction of structs: two layers could each meet half of it", n.Pos())
				}
			case *ast.UnaryExpr:
				if n.Op == token.MUL {
					t.Errorf("%v: a default in #Settings: defaults belong to #ClusterRules, whose step fills them", n.Pos())
				}
			case *ast.Ident:
				idents++
				if strings.HasPrefix(n.Name, "#") || predeclared[n.Name] {
					return true
				}
				// A label is a field's own name, not a reference to one.
				if n.Node == nil && n.Scope == nil && isLabel(f, n) {
					return true
				}
				t.Errorf("%v: %s refers to a field: a rule between fields, which the second step would not see", n.Pos(), n.Name)
			}
			return true
		}, nil)
	}
	if idents < 50 {
		t.Errorf("only %d identifiers in settings.cue and types.cue", idents)
	}
}

// isStructOrList says e is a struct or list literal, in parentheses or not.
func isStructOrList(e ast.Expr) bool {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	switch e.(type) {
	case *ast.StructLit, *ast.ListLit:
		return true
	}
	return false
}

// isLabel says id is the label of a field of f.
func isLabel(f *ast.File, id *ast.Ident) bool {
	found := false
	ast.Walk(f, func(n ast.Node) bool {
		if fd, ok := n.(*ast.Field); ok && fd.Label == id {
			found = true
		}
		return !found
	}, nil)
	return found
}

// TestToGoIsToCUE holds the values the #ClusterRules step builds with
// Encode (toGo) to those BuildExpr makes of toCUE's syntax: the same kinds
// and the same JSON, floats written without a fraction among them.
func TestToGoIsToCUE(t *testing.T) {
	w := compiledForTest(t)
	f := func(x float64) *config.Value { return config.NewFloat(x, config.Origin{}) }
	i := func(n int64) *config.Value { return &config.Value{Kind: config.Int, Int: n} }
	s := func(x string) *config.Value { return &config.Value{Kind: config.String, Str: x} }
	null := &config.Value{Kind: config.Null}
	leaves := []*config.Value{
		f(3), f(-0.0), f(3.5), f(0.1), f(1e21), f(1e-7), f(123456789012), f(9.007199254740993e15), f(-2.5e-300),
		i(0), i(-1), i(1 << 62), s(""), s("a\nb"), s("ü ${x}"), s("\u2028"), {Kind: config.Bool, Bool: true}, null,
	}
	var fields []config.Field
	for n, l := range leaves {
		fields = append(fields, config.Field{Key: strconv.Itoa(n), Value: l})
	}
	values := append([]*config.Value{
		{Kind: config.List, Items: leaves},
		{Kind: config.Map, Fields: fields},
		{Kind: config.Map, Fields: []config.Field{{Key: "a", Value: &config.Value{Kind: config.List, Items: []*config.Value{null, f(2)}}}, {Key: "b", Value: null}}},
	}, leaves...)
	for _, v := range values {
		got, want := w.build(v), w.ctx.BuildExpr(toCUE(v, false))
		// Encode orders a struct's fields by name, BuildExpr as written:
		// no check reads the order.
		g, gerr := canonical(got)
		x, xerr := canonical(want)
		if string(g) != string(x) || (gerr == nil) != (xerr == nil) || got.Kind() != want.Kind() {
			t.Errorf("%s: Encode gives %s %v (%v), BuildExpr %s %v (%v)", v.Scalar(), g, got.Kind(), gerr, x, want.Kind(), xerr)
		}
		if v.Kind == config.Map || v.Kind == config.List {
			// Each member's kind, which the JSON does not tell.
			for n, l := range leaves {
				sel := cue.MakePath(cue.Index(n))
				if v.Kind == config.Map {
					sel = cue.MakePath(cue.Str(strconv.Itoa(n)))
				}
				if gk, wk := got.LookupPath(sel).Kind(), want.LookupPath(sel).Kind(); gk != wk && l.Kind != config.Null {
					t.Errorf("%s member %d: kind %v, want %v", v.Scalar(), n, gk, wk)
				}
			}
		}
	}
}

// canonical is v's JSON with its objects' keys sorted.
func canonical(v cue.Value) ([]byte, error) {
	b, err := v.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var x any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}
