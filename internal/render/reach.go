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
	c.Effective.Walk("", func(p string, leaf *config.Value) {
		if leaf.Kind != config.String {
			return
		}
		parts := strings.Split(p, ".")
		switch {
		case p == "eks.version":
			check(p, leaf, [][]byte{byPath[path.Join(dir, "terraform", c.Name+".tfvars.json")]}, RolloutSinks[p])
		case p == "hypershift.operator_image":
			if c.Type != "management" {
				return // regional clusters run no HyperShift operator
			}
			check(p, leaf, componentFiles("hypershift-operator"), RolloutSinks[p])
		case len(parts) == 3 && parts[0] == "components" && (parts[2] == "chart_revision" || parts[2] == "image"):
			if !running[parts[1]] {
				return // not a component of this cluster
			}
			// The central topology carries the revision in the cluster
			// Secret; the values file holds the image.
			if topology == argocd.Central && parts[2] == "chart_revision" {
				return
			}
			check(p, leaf, componentFiles(parts[1]), RolloutSinks["components.*."+parts[2]])
		default:
			return
		}
	})
	return diags
}
