package render

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

// TestSinksAreTheWalks: sinksOf looks the versioned values up; a walk of
// every leaf of the config, matching each dotted path, is what it
// replaces, and is its judge here: the same values, in the same order,
// over 5,000 random configs with components running or not, dotted and
// empty component names, values of every kind where a string belongs,
// and both topologies and cluster types. (A walk would also take a
// top-level key "eks.version" for eks.version; the schema refuses such a
// key, and sinksOf takes no dotted key for a sink.)
func TestSinksAreTheWalks(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	names := []string{"argo-cd", "hypershift-operator", "a.b", "", "observability"}
	leaf := func() any {
		switch rnd.IntN(6) {
		case 0:
			return 3
		case 1:
			return map[string]any{"x": "y"}
		case 2:
			return []any{"1.30"}
		}
		return "v" + string(rune('0'+rnd.IntN(10)))
	}
	found := 0
	for i := 0; i < 5000; i++ {
		comps := map[string]any{}
		running := map[string]bool{}
		for _, n := range names {
			if rnd.IntN(2) == 0 {
				m := map[string]any{"enabled": true}
				for _, k := range []string{"chart_revision", "image", "other"} {
					if rnd.IntN(2) == 0 {
						m[k] = leaf()
					}
				}
				comps[n] = m
				if rnd.IntN(6) == 0 {
					comps[n] = "not a map"
				}
			}
			running[n] = rnd.IntN(2) == 0
		}
		eff := map[string]any{"components": comps, "region": "r"}
		if rnd.IntN(4) > 0 {
			eff["eks"] = map[string]any{"version": leaf(), "node_min": 1}
		}
		if rnd.IntN(4) > 0 {
			eff["hypershift"] = map[string]any{"operator_image": leaf()}
		}
		c := &config.Cluster{Name: "mc01", Type: []string{"management", "regional"}[rnd.IntN(2)], Effective: config.FromInterface(eff, config.Origin{})}
		topology := []string{argocd.Central, "per-cluster"}[rnd.IntN(2)]
		got, want := sinksOf(c, running, topology), walkedSinks(c, running, topology)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%v (%s, %s, running %v):\nlooked up %+v\nwalked    %+v", eff, c.Type, topology, running, got, want)
		}
		found += len(got)
	}
	if found < 3000 {
		t.Errorf("only %d sinks found in 5,000 configs", found)
	}
}

// walkedSinks finds the sinks as render did before sinksOf: by walking
// every leaf and matching its dotted path.
func walkedSinks(c *config.Cluster, running map[string]bool, topology string) []sink {
	var out []sink
	c.Effective.Walk("", func(p string, leaf *config.Value) {
		if leaf.Kind != config.String {
			return
		}
		parts := strings.Split(p, ".")
		switch {
		case p == "eks.version":
			out = append(out, sink{p, p, "", leaf})
		case p == "hypershift.operator_image":
			if c.Type == "management" {
				out = append(out, sink{p, p, "hypershift-operator", leaf})
			}
		case len(parts) == 3 && parts[0] == "components" && (parts[2] == "chart_revision" || parts[2] == "image"):
			if !running[parts[1]] || (topology == argocd.Central && parts[2] == "chart_revision") {
				return
			}
			out = append(out, sink{p, "components.*." + parts[2], parts[1], leaf})
		}
	})
	return out
}
