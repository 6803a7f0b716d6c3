package diff

import (
	"path"
	"sort"

	"github.com/regionctl/regionctl/internal/render"
)

// AffectedCluster is a cluster whose rendered files change, and the pipeline a
// push must start for it.
type AffectedCluster struct {
	ID          string   `json:"id"`
	Region      string   `json:"region"`
	Cluster     string   `json:"cluster"`
	Type        string   `json:"type"`
	Sector      string   `json:"sector"`
	Environment string   `json:"environment"`
	Change      string   `json:"change"`   // added, changed, destroyed, removed
	Pipeline    string   `json:"pipeline"` // central, regional, none
	Reasons     []string `json:"reasons"`
	Files       []string `json:"files"`
}

// kindOf names what a deploy/ file is, by its directory.
func kindOf(p string) string {
	switch path.Base(path.Dir(p)) {
	case "terraform":
		return "Terraform variables"
	case "tekton":
		return "PipelineRun"
	case "argocd":
		return "Helm values"
	case "iam":
		return "IAM documents"
	case "effective":
		return "effective config"
	}
	return "files"
}

// drivesPipeline reports whether a change to the file needs the cluster's
// pipeline to run (Terraform or the run itself), rather than Argo CD alone.
func drivesPipeline(p string) bool {
	switch path.Base(path.Dir(p)) {
	case "terraform", "tekton", "iam":
		return true
	}
	return false
}

// Affected compares the files each cluster owns (for a regional cluster,
// also its region's IAM and bootstrap files, which its central pipeline
// applies) by content, so a global or sector change reaches every cluster
// it changes and nothing else.
func Affected(base, head *render.Output) []AffectedCluster {
	owned := func(o *render.Output) map[string]map[string][]byte {
		m := map[string]map[string][]byte{}
		for _, a := range o.Artifacts {
			if m[a.Owner] == nil {
				m[a.Owner] = map[string][]byte{}
			}
			m[a.Owner][a.Path] = a.Bytes
		}
		return m
	}
	bo, ho := owned(base), owned(head)
	type entry struct {
		idx  render.IndexCluster
		base bool
		head bool
	}
	clusters := map[string]*entry{}
	baseIdx := map[string]render.IndexCluster{}
	for _, c := range base.Index.Clusters {
		clusters[c.ID] = &entry{idx: c, base: true}
		baseIdx[c.ID] = c
	}
	for _, c := range head.Index.Clusters {
		if e := clusters[c.ID]; e != nil {
			e.idx, e.head = c, true
		} else {
			clusters[c.ID] = &entry{idx: c, head: true}
		}
	}
	var out []AffectedCluster
	for id, e := range clusters {
		c := e.idx
		files := func(m map[string]map[string][]byte) map[string][]byte {
			f := map[string][]byte{}
			for p, b := range m[id] {
				f[p] = b
			}
			if c.Type == "regional" {
				for p, b := range m[c.Region] {
					f[p] = b
				}
			}
			return f
		}
		bf, hf := files(bo), files(ho)
		var changed []string
		for p, b := range hf {
			if o, ok := bf[p]; !ok || string(o) != string(b) {
				changed = append(changed, p)
			}
		}
		for p := range bf {
			if _, ok := hf[p]; !ok {
				changed = append(changed, p)
			}
		}
		if len(changed) == 0 {
			continue
		}
		sort.Strings(changed)
		a := AffectedCluster{ID: id, Region: c.Region, Cluster: c.Name, Type: c.Type, Sector: c.Sector, Environment: c.Environment,
			Change: "changed", Pipeline: "none", Files: changed}
		pipeline := "regional"
		if c.Type == "regional" {
			pipeline = "central"
		}
		kinds := map[string]bool{}
		needs := false
		for _, p := range changed {
			kinds[kindOf(p)] = true
			needs = needs || drivesPipeline(p)
		}
		for k := range kinds {
			a.Reasons = append(a.Reasons, k+" changed")
		}
		sort.Strings(a.Reasons)
		before := baseIdx[id]
		switch {
		case !e.head:
			a.Change, a.Reasons = "removed", []string{"cluster file removed after its pipeline checked the destroy: its PipelineRun goes with it"}
		case !e.base:
			a.Change, a.Pipeline = "added", pipeline
		case c.DeletePipeline && !before.DeletePipeline:
			a.Change, a.Pipeline, a.Reasons = "removed", pipeline, []string{"delete_pipeline: its pipeline checks that the destroy completed, and nothing else runs"}
		case c.Delete && !before.Delete:
			a.Change, a.Pipeline, a.Reasons = "destroyed", pipeline, []string{"delete: the pipeline destroys its infrastructure"}
		case needs:
			a.Pipeline = pipeline
		default:
			a.Reasons = append(a.Reasons, "Argo CD syncs it; no pipeline runs")
		}
		out = append(out, a)
	}
	order := map[string]int{}
	for _, s := range head.Index.Sectors {
		order[s.Name] = s.Order
	}
	sort.Slice(out, func(i, j int) bool {
		if order[out[i].Sector] != order[out[j].Sector] {
			return order[out[i].Sector] < order[out[j].Sector]
		}
		return out[i].ID < out[j].ID
	})
	if out == nil {
		out = []AffectedCluster{}
	}

	return out
}

// Runs returns the clusters whose pipeline must run.
func Runs(as []AffectedCluster) []AffectedCluster {
	var out []AffectedCluster
	for _, a := range as {
		if a.Pipeline != "none" {
			out = append(out, a)
		}
	}
	return out
}
