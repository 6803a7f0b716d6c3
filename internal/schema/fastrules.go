package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// clusterCueDigest is the SHA-256 of the schema/cluster.cue that fastRules
// was written from. When the embedded file differs, fastRules is off and
// every cluster is unified with #ClusterRules by CUE: a rule added there is
// enforced at once, and TestFastRulesAreOn says fastRules needs a look.
const clusterCueDigest = "ed148edb7ad54b592809c143c9601d668b3da77c33f1451f88fecb75ab2a6aed"

// fastRules decides, in Go, the common case of what unifying a merged config
// with #ClusterRules decides with CUE: a config in which every rule of
// #ClusterRules visibly holds, and the defaults it gets. It answers only
// "valid, with these defaults" or "ask CUE"; every config it is unsure of
// (a value of an unexpected kind, a required key missing, a rule broken,
// delete_pipeline set) goes to CUE, which finds and words the errors, so a
// failing cluster's findings are CUE's alone. A cluster check with CUE is
// about 0.7 ms of CPU, most of it the evaluation of #ClusterRules'
// defaults; this is some microseconds.
//
// Where each default lies in schema/cluster.cue (what `explain` shows) and
// which paths get one are taken from CUE itself, by unifying #ClusterRules
// with a minimal config of each type, with the optional structs absent and
// present; the values fastRules gives those configs must be CUE's, or it is
// off. TestFastRulesAreClusterRules holds its answers to CUE's for every
// cluster of the test fleets and thousands of altered configs.
type fastRules struct {
	region, name *patterns
	environments map[string]bool
	// pos is where CUE gives the default at a path, by the cluster's type
	// and the path joined by NUL.
	pos map[string]diag.Pos
	// named remembers which names pass #Name and #RegionName (by a
	// letter for the rule and the name): a fleet's clusters repeat their
	// regions', sectors' and each other's names. A fastRules belongs to
	// one worker's compiled schema, so one goroutine at a time.
	named map[string]bool
}

// passes says name passes rule p, remembered under its kind.
func (f *fastRules) passes(kind byte, p *patterns, name string) bool {
	k := string(kind) + name
	ok, seen := f.named[k]
	if !seen {
		ok = p.passes(name)
		f.named[k] = ok
	}
	return ok
}

// newFastRules builds fastRules for w, or returns nil (CUE decides every
// cluster) when cluster.cue is not the file it was written from or CUE
// disagrees with it on the sample configs.
func newFastRules(w *compiled, clusterCue []byte) *fastRules {
	if sum := sha256.Sum256(clusterCue); hex.EncodeToString(sum[:]) != clusterCueDigest {
		return nil
	}
	f := &fastRules{
		region:       patternsOf(w.root.LookupPath(cue.ParsePath("#RegionName"))),
		name:         patternsOf(w.root.LookupPath(cue.ParsePath("#Name"))),
		environments: stringsOf(w.root.LookupPath(cue.ParsePath("#Environment"))),
		pos:          map[string]diag.Pos{},
		named:        map[string]bool{},
	}
	if f.region == nil || f.name == nil || len(f.environments) == 0 {
		return nil
	}
	// The samples' environment: any will do (the defaults' positions do
	// not depend on it); the first in sort order, so that every start is
	// alike.
	env := slices.Min(slices.Collect(maps.Keys(f.environments)))
	for _, sample := range fastSamples(env) {
		u := w.rules.Unify(w.build(sample))
		if u.Validate(cue.Concrete(true)) != nil {
			return nil
		}
		var want []defaultValue
		w.defaults(u, sample, nil, &want)
		typ := sample.Get("type").Str
		for _, d := range want {
			f.pos[typ+"\x00"+strings.Join(d.Path, "\x00")] = d.Pos
		}
		got, ok := f.check(sample)
		if !ok || len(got) != len(want) {
			return nil
		}
		for i := range got {
			if !slices.Equal(got[i].Path, want[i].Path) || string(got[i].JSON) != string(want[i].JSON) {
				return nil
			}
		}
	}
	return f
}

// fastSamples are the least configs of each type #ClusterRules accepts,
// with the optional structs absent and then present but empty: between
// them, every default #ClusterRules gives, at both depths it can be given.
func fastSamples(env string) []*config.Value {
	s := func(v string) *config.Value { return &config.Value{Kind: config.String, Str: v} }
	m := func(kv ...any) *config.Value {
		var fs []config.Field
		for i := 0; i < len(kv); i += 2 {
			fs = append(fs, config.Field{Key: kv[i].(string), Value: kv[i+1].(*config.Value)})
		}
		return config.NewMap(config.Origin{}, fs)
	}
	var out []*config.Value
	for _, typ := range []string{"regional", "management"} {
		for _, empty := range []bool{false, true} {
			kv := []any{
				"region", s("aa-bbb-1"), "cluster", s("c1"), "sector", s("s1"), "environment", s(env), "type", s(typ),
				"account", m("id_ref", s("x"), "ou", s("x")),
				"network", m("vpc_cidr", s("x"), "private_subnets", &config.Value{Kind: config.List, Items: []*config.Value{s("a"), s("b")}}),
				"eks", m("version", s("x"), "node_instance_family", s("x")),
			}
			if typ == "regional" {
				kv = append(kv, "etcd_backup", m("account", m("email", s("x"), "ou", s("x"))), "platform_api", m("domain", s("d.example")))
			}
			if empty {
				kv = append(kv, "hypershift", m(), "maestro", m(), "argocd", m())
				if typ == "management" {
					kv = append(kv, "etcd_backup", m())
				}
			}
			out = append(out, m(kv...))
		}
	}
	return out
}

// stringsOf reads v as a disjunction of string literals, or returns nil.
func stringsOf(v cue.Value) map[string]bool {
	op, args := v.Eval().Expr()
	if op != cue.OrOp {
		return nil
	}
	out := map[string]bool{}
	for _, a := range args {
		s, err := a.String()
		if err != nil {
			return nil
		}
		out[s] = true
	}
	return out
}

// passes says s matches every =~ pattern and none of the !~ ones.
func (p *patterns) passes(s string) bool {
	for _, re := range p.match {
		if !re.MatchString(s) {
			return false
		}
	}
	for _, re := range p.not {
		if re.MatchString(s) {
			return false
		}
	}
	return true
}

// plainText says s holds only what a derived name may for fastRules to
// give it (a-z, 0-9, _ . : / -): then its JSON is the text in quotes.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '.' && c != ':' && c != '/' && c != '-' {
			return false
		}
	}
	return true
}

// check says whether in visibly holds to every rule of #ClusterRules and
// returns its defaults as CUE gives them (by path, in the order of
// compiled.defaults), or false to have CUE decide.
func (f *fastRules) check(in *config.Value) ([]defaultValue, bool) {
	if f == nil {
		return nil, false
	}
	id, ok := f.identity(in)
	if !ok {
		return nil, false
	}
	d := fastDefaults{f: f, typ: id.typ, ok: true}
	if !d.deletion(in) || !d.required(in, id) || !d.nodes(in.Get("eks")) || !d.optionals(in, id) {
		return nil, false
	}
	if id.typ == "regional" {
		ok = d.regional(in, id)
	} else {
		ok = d.management(in, id)
	}
	if !ok || !d.ok {
		return nil, false
	}
	// In the order compiled.defaults walks them: each level's fields
	// sorted, depth first.
	slices.SortFunc(d.out, func(a, b defaultValue) int { return slices.Compare(a.Path, b.Path) })
	return d.out, true
}

// clusterIdentity is what a cluster's derived names are made of.
type clusterIdentity struct{ region, cluster, env, typ string }

// str is v's text when it is a string.
func str(v *config.Value) (string, bool) {
	if v == nil || v.Kind != config.String {
		return "", false
	}
	return v.Str, true
}

// identity reads in's identity, each key a string #ClusterRules takes.
func (f *fastRules) identity(in *config.Value) (clusterIdentity, bool) {
	region, ok1 := str(in.Get("region"))
	cluster, ok2 := str(in.Get("cluster"))
	sector, ok3 := str(in.Get("sector"))
	env, ok4 := str(in.Get("environment"))
	typ, ok5 := str(in.Get("type"))
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || (typ != "regional" && typ != "management") ||
		!f.passes('r', f.region, region) || !f.passes('n', f.name, cluster) || cluster == "central-bootstrap" ||
		!f.passes('n', f.name, sector) || !f.environments[env] {
		return clusterIdentity{}, false
	}
	return clusterIdentity{region, cluster, env, typ}, true
}

// deletion: delete and delete_pipeline are bools, and delete_pipeline
// (which forces delete) is left to CUE when set.
func (d *fastDefaults) deletion(in *config.Value) bool {
	if del := in.Get("delete"); del == nil {
		d.add(false, "delete")
	} else if del.Kind != config.Bool {
		return false
	}
	if dp := in.Get("delete_pipeline"); dp == nil {
		d.add(false, "delete_pipeline")
	} else if dp.Kind != config.Bool || dp.Bool {
		return false
	}
	return true
}

// required: the account, network and eks maps with the keys every cluster
// sets, and their defaults but eks' node counts.
func (d *fastDefaults) required(in *config.Value, id clusterIdentity) bool {
	account := in.Get("account")
	if !isMap(account) || !set(account, "id_ref") || !set(account, "ou") {
		return false
	}
	d.leaf(account, id.env+"-"+id.region+"-"+id.cluster, "account", "name")
	network := in.Get("network")
	if !isMap(network) || !set(network, "vpc_cidr") {
		return false
	}
	if subnets := network.Get("private_subnets"); subnets == nil || subnets.Kind != config.List || len(subnets.Items) < 2 {
		return false
	}
	d.leaf(network, int64(3), "network", "availability_zones")
	d.leaf(network, "per_az", "network", "nat_gateways")
	eks := in.Get("eks")
	if !isMap(eks) || !set(eks, "version") || !set(eks, "node_instance_family") {
		return false
	}
	d.leaf(eks, "xlarge", "eks", "node_instance_size")
	d.leaf(eks, false, "eks", "endpoint_public_access")
	return true
}

// nodes: node_max >= node_min, each its default when unset (eks is a map:
// required checked it).
func (d *fastDefaults) nodes(eks *config.Value) bool {
	min, max := int64(3), int64(6)
	if v := eks.Get("node_min"); v != nil {
		if v.Kind != config.Int {
			return false
		}
		min = v.Int
	}
	if v := eks.Get("node_max"); v != nil {
		if v.Kind != config.Int {
			return false
		}
		max = v.Int
	}
	if max < min {
		return false
	}
	d.leaf(eks, min, "eks", "node_min")
	d.leaf(eks, max, "eks", "node_max")
	return true
}

// optionals: the structs every cluster may leave out, each with one
// derived default.
func (d *fastDefaults) optionals(in *config.Value, id clusterIdentity) bool {
	return d.optional(in, "hypershift", "oidc_bucket", "hypershift-oidc-"+id.env+"-"+id.region+"-"+id.cluster) &&
		d.optional(in, "maestro", "consumer_name", id.cluster) &&
		d.optional(in, "argocd", "health_bucket", "regionctl-argocd-health-"+id.env+"-"+id.region)
}

func backupBucket(id clusterIdentity) string {
	return "regionctl-etcd-backup-" + id.env + "-" + id.region
}

// regional: a regional cluster's DR account, etcd backups, platform API and
// state bucket.
func (d *fastDefaults) regional(in *config.Value, id clusterIdentity) bool {
	etcd := in.Get("etcd_backup")
	if !isMap(etcd) {
		return false
	}
	dr := etcd.Get("account")
	if !isMap(dr) || !set(dr, "email") || !set(dr, "ou") {
		return false
	}
	d.leaf(dr, id.env+"-"+id.region+"-dr", "etcd_backup", "account", "name")
	d.leaf(etcd, backupBucket(id), "etcd_backup", "bucket")
	d.leaf(etcd, int64(35), "etcd_backup", "retention_days")
	api := in.Get("platform_api")
	if !isMap(api) || !set(api, "domain") {
		return false
	}
	if api.Get("endpoint") == nil {
		// The endpoint's default is the domain's text; a domain of
		// another kind is CUE's to interpolate.
		domain, ok := str(api.Get("domain"))
		if !ok {
			return false
		}
		d.add("https://"+domain, "platform_api", "endpoint")
	}
	d.leaf(api, false, "platform_api", "zone_delegated")
	d.leaf(in, "regionctl-tfstate-"+id.region+"-"+id.cluster, "state_bucket")
	return true
}

// management: a management cluster's etcd backups and state bucket.
func (d *fastDefaults) management(in *config.Value, id clusterIdentity) bool {
	if !d.optional(in, "etcd_backup", "bucket", backupBucket(id)) {
		return false
	}
	d.leaf(in, "regionctl-regional-pipeline-"+id.region, "state_bucket")
	return true
}

func isMap(v *config.Value) bool { return v != nil && v.Kind == config.Map }

// set says map m holds key, with a value other than null: CUE does not
// take null for a required field (TestFastRulesAreClusterRules).
func set(m *config.Value, key string) bool {
	v := m.Get(key)
	return v != nil && v.Kind != config.Null
}

// fastDefaults gathers the defaults of one check.
type fastDefaults struct {
	f   *fastRules
	typ string
	out []defaultValue
	ok  bool
}

// add records value v at path p; ok turns false when CUE gave no default
// there on the samples or v is a string of other characters.
func (d *fastDefaults) add(v any, p ...string) {
	var j string
	switch x := v.(type) {
	case string:
		if !plainText(x) {
			d.ok = false
			return
		}
		j = `"` + x + `"`
	case int64:
		j = strconv.FormatInt(x, 10)
	case bool:
		j = strconv.FormatBool(x)
	}
	d.addJSON(j, p)
}

func (d *fastDefaults) addJSON(j string, p []string) {
	pos, found := d.f.pos[d.typ+"\x00"+strings.Join(p, "\x00")]
	if !found {
		d.ok = false
		return
	}
	d.out = append(d.out, defaultValue{Path: p, JSON: json.RawMessage(j), Pos: pos})
}

// leaf records v at p when the map parent (at p's parent; in itself for a
// top-level key) has no key p's last.
func (d *fastDefaults) leaf(parent *config.Value, v any, p ...string) {
	if parent.Get(p[len(p)-1]) == nil {
		d.add(v, p...)
	}
}

// optional records the default of an optional struct's one defaulted key:
// the whole struct when it is absent, the key when the struct lacks it.
// False when the struct is there but not a map.
func (d *fastDefaults) optional(in *config.Value, key, field, v string) bool {
	s := in.Get(key)
	switch {
	case s == nil:
		if !plainText(v) {
			d.ok = false
			return true
		}
		d.addJSON(`{"`+field+`":"`+v+`"}`, []string{key})
	case s.Kind != config.Map:
		return false
	default:
		d.leaf(s, v, key, field)
	}
	return true
}
