package render

import (
	"bytes"
	"path"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

// RolloutSinks says, for each versioned key of the schema (@rollout), where
// its value must show up for the rollout to change what runs. A key missing
// here is a render error for every cluster that sets it (see reach), and a
// test holds the list to the schema.
var RolloutSinks = map[string]string{
	"eks.version":                 "the cluster's Terraform variables (eks_version)",
	"hypershift.operator_image":   "the hypershift-operator Application's values (image) on management clusters",
	"components.*.chart_revision": "the component's Application (targetRevision)",
	"components.*.image":          "the component's Application's values (image)",
}

// reach refuses a versioned value set for c that does not reach the
// artifact deploying it: a value that would roll out and change nothing.
func reach(c *config.Cluster, comps []argocd.Component, arts []Artifact, topology string) diag.Diagnostics {
	byPath := map[string][]byte{}
	for _, a := range arts {
		byPath[a.Path] = a.Bytes
	}
	running := map[string]bool{}
	for _, comp := range comps {
		running[comp.Name] = true
	}
	dir := RegionDir(c.Environment(), c.Region.Name)
	// componentFiles are where a component's revision and values land.
	componentFiles := func(name string) [][]byte {
		if topology == argocd.Central {
			// The values file here; the revision in the environment's
			// cluster Secret, checked by the ApplicationSet expansion.
			return [][]byte{byPath[argocd.ValuesPath(c.Environment(), c.Region.Name, c.Name, name)], []byte(name)}
		}
		return [][]byte{byPath[path.Join(argocd.ClusterDir(c.Environment(), c.Region.Name, c.Name), "apps", name+".yaml")]}
	}
	var diags diag.Diagnostics
	check := func(key string, leaf *config.Value, files [][]byte, where string) {
		want := leaf.Str
		if _, digest, ok := strings.Cut(want, "@"); ok {
			want = digest // an image reaches values as repository and digest
		}
		for _, f := range files {
			if f != nil && bytes.Contains(f, []byte(want)) {
				return
			}
		}
		diags = append(diags, diag.Errorf(leaf.Origin.Pos, "A versioned value must change what runs: "+where+". Remove it, or make the component it belongs to run here (runs_on, enabled).",
			"%s: %s %s reaches nothing %s deploys", c.ID(), key, leaf.Scalar(), c.ID()))
	}
	for _, k := range sinksOf(c, running, topology) {
		files := componentFiles(k.component)
		if k.component == "" {
			files = [][]byte{byPath[path.Join(dir, "terraform", c.Name+".tfvars.json")]}
		}
		check(k.key, k.leaf, files, RolloutSinks[k.sink])
	}
	return diags
}

// sink is a versioned value of a cluster and where it must show up: in
// its component's files, or the cluster's Terraform variables (component
// "").
type sink struct {
	key, sink, component string
	leaf                 *config.Value
}

// sinksOf are c's versioned values that must reach what it deploys, in
// the order a walk of its config meets them (keys sorted): each running
// component's chart_revision (not in the central topology, whose cluster
// Secret carries it) and image, then eks.version, then
// hypershift.operator_image on a management cluster. They are looked up,
// not found by walking every leaf (a path string and its split for each
// took some 2 % of a cold render); a key holding a dot is none of them,
// as a walk's dotted path would have more parts. TestSinksAreTheWalks
// holds the two together.
func sinksOf(c *config.Cluster, running map[string]bool, topology string) []sink {
	var out []sink
	str := func(v *config.Value) bool { return v != nil && v.Kind == config.String }
	if comps := c.Effective.Get("components"); comps != nil && comps.Kind == config.Map {
		for _, f := range comps.Fields {
			if !running[f.Key] || strings.Contains(f.Key, ".") {
				continue // not a component of this cluster
			}
			for _, k := range [...]string{"chart_revision", "image"} {
				if topology == argocd.Central && k == "chart_revision" {
					continue
				}
				if leaf := f.Value.Get(k); str(leaf) {
					out = append(out, sink{"components." + f.Key + "." + k, "components.*." + k, f.Key, leaf})
				}
			}
		}
	}
	if leaf := c.Effective.Lookup("eks", "version"); str(leaf) {
		out = append(out, sink{"eks.version", "eks.version", "", leaf})
	}
	if leaf := c.Effective.Lookup("hypershift", "operator_image"); str(leaf) && c.Type == "management" {
		out = append(out, sink{"hypershift.operator_image", "hypershift.operator_image", "hypershift-operator", leaf})
	}
	return out
}
