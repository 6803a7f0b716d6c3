package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/format"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// finding is a schema error by config path, before it is given a position;
// it is what the cache stores, since positions may move while values don't.
type finding struct {
	Path    []string `json:"p"`
	Kind    string   `json:"k"` // unknown, missing, invalid, derived
	Summary string   `json:"s"`
	Detail  string   `json:"d"`
}

// layerHome says where a key that is not allowed in one layer belongs.
var layerHome = map[string]string{
	"order": "a sector file", "environment": "a sector file", "soak": "a sector file",
	"max_update": "a sector file", "rollout_exceptions": "a sector file",
	"sector": "a region file", "type": "a cluster file", "delete": "a cluster file",
	"delete_pipeline": "a cluster file", "additional_regions": "a file in config/global/", "gitops": "a file in config/global/",
}

// findingsOf converts a CUE validation error into findings about data, one
// per path and kind. def is the schema data was unified with.
func (w *compiled) findingsOf(err error, def cue.Value, data *config.Value, what string) []finding {
	var out []finding
	seen := map[string]bool{}
	add := func(f finding) {
		k := f.Kind + "\x00" + strings.Join(f.Path, "\x00")
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	conflict := false
	if err == nil {
		return nil
	}
	errs := errors.Errors(err)
	if len(errs) == 0 {
		errs = []errors.Error{errors.Promote(err, "")}
	}
	for _, e := range errs {
		p := cuePath(e.Path())
		if len(p) > 0 && strings.HasPrefix(p[0], "_") {
			continue // a hidden helper (#Cluster's _derived): reported where it is used
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		v := data.Lookup(p...)
		derived := "" // the name #Derived gives an unset field, if any
		if v == nil {
			derived = w.derived(data, p)
		}
		switch {
		case strings.Contains(msg, "field not allowed"):
			add(unknownKey(def, p))
		case strings.Contains(msg, "field is required but not present"):
			add(finding{Path: p, Kind: "missing", Summary: fmt.Sprintf("missing required key %s", dotted(p)),
				Detail: fmt.Sprintf("%s must be set%s.%s", dotted(p), where(what), docOf(lookup(def, p)))})
		case strings.Contains(msg, "incomplete value") && v != nil && v.Kind == config.String && strings.Contains(v.Str, "${"):
			// A reference checked after interpolation, in #Cluster.
		case derived != "":
			// An unset field whose derived default its rule refuses:
			// incomplete in one unification with #Cluster, a conflict in
			// clusterCheck's second step.
			add(w.badDerived(p, derived))
		case strings.Contains(msg, "incomplete value") && v == nil:
			add(finding{Path: p, Kind: "missing", Summary: fmt.Sprintf("missing required key %s", dotted(p)),
				Detail: fmt.Sprintf("%s must be set%s.%s", dotted(p), where(what), docOf(lookup(def, p)))})
		default:
			conflict = true
			add(w.invalidValue(def, p, v, msg))
		}
	}
	if conflict {
		// A conflict makes CUE stop reporting closedness errors of sibling
		// fields; ask the schema about every key so none is missed.
		walkAllows(def, data, nil, func(p []string) { add(unknownKey(def, p)) })
	}
	sort.SliceStable(out, func(i, j int) bool { return dotted(out[i].Path) < dotted(out[j].Path) })
	return out
}

// derived returns the name #Derived gives the cluster data describes at p,
// or "" when #Derived names nothing there.
func (w *compiled) derived(data *config.Value, p []string) string {
	var key string
	switch dotted(p) {
	case "account.name":
		key = "account_name"
	case "hypershift.oidc_bucket":
		key = "oidc_bucket"
	case "etcd_backup.account.name":
		key = "dr_account_name"
	case "etcd_backup.bucket":
		key = "etcd_backup_bucket"
	case "argocd.health_bucket":
		key = "health_bucket"
	case "state_bucket":
		t := data.Get("type")
		if t == nil || t.Kind != config.String {
			return ""
		}
		key = "state_bucket_" + t.Str
	default:
		return ""
	}
	in := map[string]string{}
	for _, k := range []string{"environment", "region", "cluster"} {
		v := data.Get(k)
		if v == nil || v.Kind != config.String {
			return ""
		}
		in[k] = v.Str
	}
	s, err := w.root.LookupPath(cue.ParsePath("#Derived")).Unify(w.ctx.Encode(in)).LookupPath(cue.MakePath(cue.Str(key))).String()
	if err != nil {
		return ""
	}
	return s
}

// badDerived explains a derived name that breaks the rule of its field:
// the user sees the name and what to set instead.
func (w *compiled) badDerived(p []string, name string) finding {
	// The rule as #Settings states it: #Cluster's field also holds the
	// derivation, which is no help here.
	s := lookup(w.root.LookupPath(cue.ParsePath("#Settings")), p)
	return finding{Path: p, Kind: "derived",
		Summary: fmt.Sprintf("derived %s %q (%d characters) is not valid", dotted(p), name, len(name)),
		Detail: fmt.Sprintf("When no layer sets it, %s is derived from the environment, region and cluster names; here that gives %q, and %s must be %s. Set %s in a layer of this cluster, or choose a shorter cluster name.",
			dotted(p), name, dotted(p), w.constraint(s), dotted(p))}
}

func where(what string) string {
	if what == "" {
		return ""
	}
	return " " + what
}

func unknownKey(def cue.Value, p []string) finding {
	key := p[len(p)-1]
	if len(p) == 2 && p[0] == "tags" && (strings.HasPrefix(strings.ToLower(key), "regionctl:") || strings.HasPrefix(strings.ToLower(key), "aws:")) {
		return finding{Path: p, Kind: "unknown", Summary: fmt.Sprintf("tag key %q is reserved", key),
			Detail: "regionctl sets the regionctl: tags of what it creates itself (the region, environment and cluster an account or resource belongs to), IAM matches tag keys in conditions without regard to case, and AWS refuses tags starting with aws:. Choose another key."}
	}
	parent := lookup(def, p[:len(p)-1])
	allowed := fieldNames(parent)
	detail := ""
	if home, ok := layerHome[key]; ok && len(p) == 1 {
		detail = fmt.Sprintf("%q is set in %s, not here. ", key, home)
	}
	if len(allowed) > 0 {
		scope := "here"
		if len(p) > 1 {
			scope = "under " + dotted(p[:len(p)-1])
		}
		detail += fmt.Sprintf("Allowed keys %s: %s.", scope, strings.Join(allowed, ", "))
	} else {
		detail += "Check the spelling against schema/settings.cue."
	}
	return finding{Path: p, Kind: "unknown", Summary: fmt.Sprintf("unknown key %q", key), Detail: detail}
}

func (w *compiled) invalidValue(def cue.Value, p []string, v *config.Value, msg string) finding {
	s := lookup(def, p)
	if isSecret(s) {
		return finding{Path: p, Kind: "invalid", Summary: fmt.Sprintf("inline secret value in %s", dotted(p)),
			Detail: fmt.Sprintf("%s holds a secret reference (ssm:///path or arn:aws:secretsmanager:...), never the secret itself. Store the value in SSM Parameter Store or Secrets Manager and reference it; remove the value from git history too.", dotted(p))}
	}
	got := "value"
	if v != nil {
		got = v.Kind.String() + " " + v.Scalar()
		if v.Kind == config.Map || v.Kind == config.List {
			got = v.Kind.String()
		}
	}
	want := w.constraint(s)
	if want == relatedRule {
		// #Cluster's field also holds a derived default; the rule the
		// value broke is the one #Settings states.
		if ws := w.constraint(lookup(w.root.LookupPath(cue.ParsePath("#Settings")), p)); ws != "" {
			want = ws
		}
	}
	detail := fmt.Sprintf("%s must be %s.%s", dotted(p), want, docOf(s))
	if want == "" {
		detail = fmt.Sprintf("%s: %s.", dotted(p), msg)
	}
	return finding{Path: p, Kind: "invalid", Summary: fmt.Sprintf("invalid %s for %s", got, dotted(p)), Detail: detail}
}

// walkAllows reports every key of data that def does not allow.
func walkAllows(def cue.Value, data *config.Value, p []string, fn func([]string)) {
	if data == nil || data.Kind != config.Map {
		return
	}
	s := lookup(def, p)
	if !s.Exists() || s.IncompleteKind()&cue.StructKind == 0 {
		return
	}
	for _, f := range data.Fields {
		cp := append(append([]string(nil), p...), f.Key)
		if !s.Allows(cue.Str(f.Key)) {
			fn(cp)
			continue
		}
		walkAllows(def, f.Value, cp, fn)
	}
}

func isSecret(s cue.Value) bool {
	a := s.Attribute("secret")
	return a.Err() == nil
}

// constraint describes what the schema expects at s, shortly.
func (w *compiled) constraint(s cue.Value) string {
	if !s.Exists() {
		return ""
	}
	switch k := s.IncompleteKind(); {
	case k == cue.StructKind:
		names := fieldNames(s)
		if len(names) == 0 {
			return "a mapping"
		}
		return "a mapping with keys " + strings.Join(names, ", ")
	case k == cue.ListKind:
		return "a list"
	}
	// A rule that relates fields says so in words (@rule("...")): CUE's
	// own rendering of it is an expression over internal names.
	if a := s.Attribute("rule"); a.Err() == nil {
		if r, err := a.String(0); err == nil && r != "" {
			return r
		}
	}
	b, err := format.Node(s.Syntax())
	if err != nil {
		return ""
	}
	txt := strings.Join(strings.Fields(string(b)), " ")
	if rawCUE.MatchString(txt) {
		// Never show CUE's internals; point at the schema instead.
		return relatedRule
	}
	if len(txt) > 120 {
		txt = txt[:120] + "…"
	}
	// A named type explains itself better than its regular expression.
	if raw, err := format.Node(s.Syntax(cue.Raw())); err == nil && strings.HasPrefix(string(raw), "#") {
		if d := w.typeDoc(string(raw)); d != "" {
			if strings.HasPrefix(txt, "=~") {
				return d + " (" + string(raw) + " in schema/types.cue)"
			}
			return d + ": " + txt
		}
	}
	return txt
}

// relatedRule is what constraint says of a rule it cannot show.
const relatedRule = "what schema/ allows for it (a rule that relates it to other fields)"

// rawCUE matches CUE's rendering of constraints over other fields: let
// bindings, path comments and hidden definitions no user wrote.
var rawCUE = regexp.MustCompile(`\blet\b|//cue:|\.#[a-z]|\b[A-Z_]{3,}\.#`)

// typeDoc returns the doc comment of the schema definition name, without
// the leading "#Name is".
func (w *compiled) typeDoc(name string) string {
	var parts []string
	for _, cg := range w.root.LookupPath(cue.ParsePath(name)).Doc() {
		parts = append(parts, strings.Fields(cg.Text())...)
	}
	d := strings.Join(parts, " ")
	d = strings.TrimPrefix(d, name+" is ")
	return strings.TrimSuffix(d, ".")
}

func docOf(s cue.Value) string {
	var parts []string
	for _, cg := range s.Doc() {
		if t := strings.TrimSpace(cg.Text()); t != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, " ") + ")"
}

// cuePath turns CUE's error path into config keys, dropping the definition
// the data was unified with.
func cuePath(p []string) []string {
	out := make([]string, 0, len(p))
	for i, s := range p {
		if i == 0 && strings.HasPrefix(s, "#") {
			continue
		}
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
		out = append(out, s)
	}
	return out
}

func dotted(p []string) string {
	if len(p) == 0 {
		return "(top level)"
	}
	return strings.Join(p, ".")
}

// resolve gives a finding the position of the user's text it is about: the
// key for an unknown key, the value for an invalid one, the nearest enclosing
// mapping for a missing one.
func resolve(f finding, root *config.Value, fallback diag.Pos) diag.Diagnostic {
	pos := fallback
	switch f.Kind {
	case "unknown":
		if parent := root.Lookup(f.Path[:len(f.Path)-1]...); parent != nil {
			if fld, ok := parent.Field(f.Path[len(f.Path)-1]); ok {
				pos = fld.KeyPos
			}
		}
	case "missing":
		pos = missingPos(root, f.Path, fallback)
	case "derived":
		// Made of the cluster's names: its file is where to act.
	default:
		for i := len(f.Path); i > 0; i-- {
			if v := root.Lookup(f.Path[:i]...); v != nil && v.Origin.Pos.File != "" {
				pos = v.Origin.Pos
				break
			}
		}
	}
	return diag.Diagnostic{Severity: diag.Error, Summary: f.Summary, Detail: f.Detail, Pos: pos, Path: strings.Join(f.Path, ".")}
}

// missingPos points at what made a required key missing: the null that
// removed it, else the key of its nearest enclosing mapping, else fallback.
func missingPos(root *config.Value, p []string, fallback diag.Pos) diag.Pos {
	for i := len(p) - 1; i >= 0; i-- {
		parent := root.Lookup(p[:i]...)
		if parent == nil {
			continue
		}
		for _, r := range parent.Removed() {
			if r.Key == p[i] {
				return r.KeyPos
			}
		}
		if i == 0 {
			break
		}
		if gp := root.Lookup(p[:i-1]...); gp != nil {
			if fld, ok := gp.Field(p[i-1]); ok && fld.KeyPos.File != "" {
				return fld.KeyPos
			}
		}
	}
	if root != nil && root.Origin.Pos.File == fallback.File {
		return root.Origin.Pos
	}
	return fallback
}
