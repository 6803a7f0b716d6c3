package diff

import (
	"fmt"
	"path"
	"sort"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/render"
)

// Lifecycle holds each cluster's deletion phase to the base's (the merge
// base of a change, or a review's base): a cluster is destroyed in three
// merged steps, never fewer. delete: true merges first and its pipeline
// destroys the infrastructure; delete_pipeline: true follows only when the
// base already has delete: true (so the destroy ran from main); the file
// goes only when the base already has delete_pipeline: true. A change that
// takes two steps at once would remove a pipeline, or a cluster's files,
// whose destroy never ran: the infrastructure would be orphaned. label
// names the base in the messages. A base cluster's phase is read as the
// schema derives it (delete_pipeline: true makes delete: true), whether or
// not its config went through #Cluster: a review checks only the clusters
// it changes, and the render's base is loaded without cluster checks.
func Lifecycle(base, head *config.Fleet, label string) diag.Diagnostics {
	var out diag.Diagnostics
	for _, s := range LifecycleSkips(base, head, label) {
		out = append(out, s.Diag)
	}
	return out
}

// Skip is a cluster whose deletion a change takes in fewer steps than its
// lifecycle (Lifecycle): dispatch refuses that cluster alone and starts the
// change's others.
type Skip struct {
	Cluster, Region string
	Pipeline        string // central (a regional cluster) or regional
	Diag            diag.Diagnostic
}

func skipOf(c *config.Cluster, d diag.Diagnostic) Skip {
	pipeline := "regional"
	if c.Type == "regional" {
		pipeline = "central"
	}
	return Skip{Cluster: c.ID(), Region: c.Region.Name, Pipeline: pipeline, Diag: d}
}

// LifecycleSkips is Lifecycle by cluster.
func LifecycleSkips(base, head *config.Fleet, label string) []Skip {
	if base == nil || len(base.Clusters) == 0 {
		return nil // the first fleet commit: nothing existed
	}
	before := clusterMap(base)
	var out []Skip
	for _, c := range head.Clusters {
		if !c.Bool("delete_pipeline") {
			continue
		}
		b := before[c.ID()]
		if b != nil && b.Deleting() {
			continue
		}
		was := "did not exist"
		if b != nil {
			was = "had delete: false"
		}
		pos := diag.Pos{File: c.Doc.File}
		if v := c.Effective.Get("delete_pipeline"); v != nil {
			pos = v.Origin.Pos
		}
		out = append(out, skipOf(c, diag.Errorf(pos,
			fmt.Sprintf("At %s the cluster %s. Its pipeline must destroy it first: merge delete: true alone, let the pipeline run, then set delete_pipeline: true in a later change.", label, was),
			"delete_pipeline: true for %s before a merged delete: true", c.ID())))
	}
	now := clusterMap(head)
	var removed []string
	for id, b := range before {
		if now[id] == nil && !b.Bool("delete_pipeline") {
			removed = append(removed, id)
		}
	}
	sort.Strings(removed)
	for _, id := range removed {
		b := before[id]
		phase := "delete: false"
		if b.Deleting() {
			phase = "delete: true but not delete_pipeline: true"
		}
		out = append(out, skipOf(b, diag.Errorf(diag.Pos{File: b.Doc.File},
			fmt.Sprintf("At %s the cluster had %s. Removing a cluster takes three merged changes: delete: true (its pipeline destroys the infrastructure), then delete_pipeline: true (its pipeline checks that the destroy completed), then the file (its pipeline run goes with it).", label, phase),
			"cluster %s removed before a merged delete_pipeline: true", id)))
	}
	return out
}

// LifecycleOfIndex holds the deletion phases to what the last render
// recorded in deploy/index.json, where there is no git base to hold them to
// (a fleet outside a repository): the same three steps, each a render
// apart. label names the index in the messages.
func LifecycleOfIndex(old *render.Index, head *config.Fleet, label string) diag.Diagnostics {
	if old == nil {
		return nil
	}
	var out diag.Diagnostics
	now := clusterMap(head)
	for _, c := range head.Clusters {
		if !c.Bool("delete_pipeline") {
			continue
		}
		b := old.Cluster(c.ID())
		if b != nil && b.Delete {
			continue
		}
		was := "did not exist"
		if b != nil {
			was = "had delete: false"
		}
		pos := diag.Pos{File: c.Doc.File}
		if v := c.Effective.Get("delete_pipeline"); v != nil {
			pos = v.Origin.Pos
		}
		out = append(out, diag.Errorf(pos,
			fmt.Sprintf("In %s the cluster %s. Its pipeline must destroy it first: render and run delete: true alone, then set delete_pipeline: true.", label, was),
			"delete_pipeline: true for %s before a rendered delete: true", c.ID()))
	}
	for _, b := range old.Clusters {
		if now[b.ID] != nil || b.DeletePipeline {
			continue
		}
		phase := "delete: false"
		if b.Delete {
			phase = "delete: true but not delete_pipeline: true"
		}
		out = append(out, diag.Errorf(diag.Pos{File: path.Join("config", "clusters", b.Region, b.Name+".yaml")},
			fmt.Sprintf("In %s the cluster had %s. Removing a cluster takes three rendered steps: delete: true (its pipeline destroys the infrastructure), then delete_pipeline: true (its pipeline checks that the destroy completed), then the file.", label, phase),
			"cluster %s removed before a rendered delete_pipeline: true", b.ID))
	}
	return out
}
