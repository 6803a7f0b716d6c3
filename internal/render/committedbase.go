package render

import (
	"io/fs"
	"path"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/par"
)

// baseFromCommitted gives the base's clusters, which LoadPair left
// unchecked, the effective configs (the schema's defaults included) its
// committed deploy/ holds, instead of checking them against #Cluster again:
// the base's deploy/ is trusted (idx), and CI held it to render --check. A
// cluster whose inputs are the same on both sides takes the head's
// effective config as it is now; any other decodes its committed
// effective/<name>.yaml, which idx lists with the input identity it was
// rendered from, which must be the base's. It returns the clusters it gave
// a config; the caller checks the others (a base whose config changed
// without a render, which render --check refuses on the deploy branch).
func baseFromCommitted(p *fleet.Pair, baseFS fs.FS, idx *Index) map[*config.Cluster]bool {
	heads := make(map[string]*config.Cluster, len(p.Head.Clusters))
	for _, c := range p.Head.Clusters {
		heads[c.ID()] = c
	}
	files := make(map[string]string, len(idx.Clusters))
	for _, c := range idx.Clusters {
		// Only a file rendered from the base's inputs as they are.
		if c.Input == "" || c.Input != p.BaseInputs[c.ID] {
			continue
		}
		for _, f := range c.Files {
			if path.Base(path.Dir(f)) == "effective" {
				files[c.ID] = f
			}
		}
	}
	adopted := make([]*config.Value, len(p.Base.Clusters))
	var read []int
	for i, c := range p.Base.Clusters {
		if c.Effective == nil || c.Partial {
			continue
		}
		if h := heads[c.ID()]; h != nil && p.SameInput[c.ID()] && h.Effective != nil && !h.Partial {
			adopted[i] = h.Effective
		} else if files[c.ID()] != "" {
			read = append(read, i)
		}
	}
	par.Workers(4, len(read), func(_, j int) {
		c := p.Base.Clusters[read[j]]
		name := path.Join("deploy", files[c.ID()])
		b, err := fs.ReadFile(baseFS, name)
		if err != nil {
			return
		}
		if v, ds := config.Decode(name, config.LayerSchema, b); v != nil && !ds.HasErrors() {
			adopted[read[j]] = v
		}
	})
	done := map[*config.Cluster]bool{}
	for i, v := range adopted {
		if v != nil {
			p.Base.Clusters[i].Effective = v
			done[p.Base.Clusters[i]] = true
		}
	}
	return done
}
