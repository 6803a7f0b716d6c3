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

// earlier is a cluster's deletion phase as the earlier state records it:
// the base fleet, or the last render's index.
type earlier struct {
	id, region, typ, file    string
	deleting, deletePipeline bool
}

// wording names the steps of a lifecycle in its messages: merged changes
// against a git base, renders against the last render's index.
type wording struct {
	at, step, alone, removal string
}

var (
	merged   = wording{at: "At", step: "merged", alone: "merge delete: true alone, let the pipeline run, then set delete_pipeline: true in a later change", removal: "three merged changes"}
	rendered = wording{at: "In", step: "rendered", alone: "render and run delete: true alone, then set delete_pipeline: true", removal: "three rendered steps"}
)

func skipOf(id, region, typ string, d diag.Diagnostic) Skip {
	pipeline := "regional"
	if typ == "regional" {
		pipeline = "central"
	}
	return Skip{Cluster: id, Region: region, Pipeline: pipeline, Diag: d}
}

// LifecycleSkips is Lifecycle by cluster.
func LifecycleSkips(base, head *config.Fleet, label string) []Skip {
	if base == nil || len(base.Clusters) == 0 {
		return nil // the first fleet commit: nothing existed
	}
	before := map[string]earlier{}
	for _, b := range base.Clusters {
		before[b.ID()] = earlier{id: b.ID(), region: b.Region.Name, typ: b.Type, file: b.Doc.File, deleting: b.Deleting(), deletePipeline: b.Bool("delete_pipeline")}
	}
	return phases(before, head, label, merged)
}

// LifecycleOfIndex holds the deletion phases to what the last render
// recorded in deploy/index.json, where there is no git base to hold them to
// (a fleet outside a repository): the same three steps, each a render
// apart. label names the index in the messages.
func LifecycleOfIndex(old *render.Index, head *config.Fleet, label string) diag.Diagnostics {
	if old == nil {
		return nil
	}
	before := map[string]earlier{}
	for _, b := range old.Clusters {
		before[b.ID] = earlier{id: b.ID, region: b.Region, typ: b.Type, file: path.Join("config", "clusters", b.Region, b.Name+".yaml"),
			deleting: b.Delete, deletePipeline: b.DeletePipeline}
	}
	var out diag.Diagnostics
	for _, s := range phases(before, head, label, rendered) {
		out = append(out, s.Diag)
	}
	return out
}

// phases is the lifecycle rule: delete_pipeline: true only after an
// earlier delete: true, and a cluster's file gone only after an earlier
// delete_pipeline: true.
func phases(before map[string]earlier, head *config.Fleet, label string, w wording) []Skip {
	var out []Skip
	for _, c := range head.Clusters {
		if !c.Bool("delete_pipeline") {
			continue
		}
		b, ok := before[c.ID()]
		if ok && b.deleting {
			continue
		}
		was := "did not exist"
		if ok {
			was = "had delete: false"
		}
		pos := diag.Pos{File: c.Doc.File}
		if v := c.Effective.Get("delete_pipeline"); v != nil {
			pos = v.Origin.Pos
		}
		out = append(out, skipOf(c.ID(), c.Region.Name, c.Type, diag.Errorf(pos,
			fmt.Sprintf("%s %s the cluster %s. Its pipeline must destroy it first: %s.", w.at, label, was, w.alone),
			"delete_pipeline: true for %s before a %s delete: true", c.ID(), w.step)))
	}
	now := clusterMap(head)
	var removed []string
	for id, b := range before {
		if now[id] == nil && !b.deletePipeline {
			removed = append(removed, id)
		}
	}
	sort.Strings(removed)
	for _, id := range removed {
		b := before[id]
		phase := "delete: false"
		if b.deleting {
			phase = "delete: true but not delete_pipeline: true"
		}
		out = append(out, skipOf(b.id, b.region, b.typ, diag.Errorf(diag.Pos{File: b.file},
			fmt.Sprintf("%s %s the cluster had %s. Removing a cluster takes %s: delete: true (its pipeline destroys the infrastructure), then delete_pipeline: true (its pipeline checks that the destroy completed), then the file (its pipeline run goes with it).", w.at, label, phase, w.removal),
			"cluster %s removed before a %s delete_pipeline: true", id, w.step)))
	}
	return out
}
