// Package dispatch starts the PipelineRuns a push needs in one cluster's
// Tekton, one run at a time per cluster: a run for a newer commit waits
// (PipelineRunPending) behind the running one and supersedes (cancels) any
// older run still waiting; a run whose sector's wave has not come yet waits
// until then (NotBefore); a periodic reconcile starts the newest waiting
// run once nothing runs and its wave came, and runs a failed cluster again
// at the head commit, a bounded number of times.
//
// Entry points: Dispatch and Reconcile.
package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/kube"
)

// API is the part of the Kubernetes API dispatch uses (kube.Client).
type API interface {
	List(ctx context.Context, namespace, selector string) ([]kube.PipelineRun, error)
	Create(ctx context.Context, namespace string, run []byte) (string, error)
	Patch(ctx context.Context, namespace, name string, patch []byte) error
}

// Labels dispatch reads and sets on PipelineRuns (render sets the others).
const (
	LabelCluster  = "regionctl.io/cluster"
	LabelRegion   = "regionctl.io/region"
	LabelPipeline = "regionctl.io/pipeline"
	LabelCommit   = "regionctl.io/commit"
	LabelAttempt  = "regionctl.io/attempt"
	LabelMode     = "regionctl.io/mode" // plan: a plan-only run (render/tekton.ModeLabel)
	// AnnotationNotBefore holds when a waiting run's wave comes (RFC 3339).
	AnnotationNotBefore = "regionctl.io/not-before"
)

// Run is a PipelineRun to start: a cluster's rendered PipelineRun, pinned
// to the commit it deploys.
type Run struct {
	Cluster  string // region/cluster
	Commit   string
	Manifest []byte // YAML or JSON
	// NotBefore is when the run's sector's wave comes: before it, the run
	// waits (zero: it may start now).
	NotBefore time.Time
	// Wave says why it waits, for the record.
	Wave string
}

// Action is what dispatch did for a cluster.
type Action struct {
	Cluster string `json:"cluster"`
	Did     string `json:"did"` // started, queued, superseded, skipped, retried, gave-up
	Run     string `json:"run,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Dispatch starts runs in namespace, one at a time per cluster, each no
// earlier than its NotBefore (now is the time).
func Dispatch(ctx context.Context, api API, namespace string, runs []Run, now time.Time) ([]Action, error) {
	var out []Action
	for _, r := range runs {
		obj, err := manifest(r.Manifest)
		if err != nil {
			return out, fmt.Errorf("the PipelineRun of %s: %w", r.Cluster, err)
		}
		existing, err := api.List(ctx, namespace, selector(obj))
		if err != nil {
			return out, err
		}
		done := false
		for _, e := range existing {
			if e.Metadata.Labels[LabelCommit] == r.Commit && e.State() != "failed" && e.State() != "cancelled" {
				out = append(out, Action{Cluster: r.Cluster, Did: "skipped", Run: e.Metadata.Name, Detail: "already dispatched for " + short(r.Commit)})
				done = true
			}
		}
		if done {
			continue
		}
		var running string
		for _, e := range existing {
			switch e.State() {
			case "pending":
				if err := api.Patch(ctx, namespace, e.Metadata.Name, []byte(`{"spec":{"status":"Cancelled"}}`)); err != nil {
					return out, err
				}
				out = append(out, Action{Cluster: r.Cluster, Did: "superseded", Run: e.Metadata.Name, Detail: "its commit " + short(e.Metadata.Labels[LabelCommit]) + " is older than " + short(r.Commit)})
			case "running":
				running = e.Metadata.Name
			}
		}
		setLabel(obj, LabelCommit, r.Commit)
		setLabel(obj, LabelAttempt, "1")
		later := r.NotBefore.After(now)
		if later {
			setAnnotation(obj, AnnotationNotBefore, r.NotBefore.UTC().Format(time.RFC3339))
		}
		if running != "" || later {
			obj["spec"].(map[string]any)["status"] = "PipelineRunPending"
		}
		name, err := create(ctx, api, namespace, obj)
		if err != nil {
			return out, fmt.Errorf("creating the PipelineRun of %s: %w", r.Cluster, err)
		}
		switch {
		case running != "":
			out = append(out, Action{Cluster: r.Cluster, Did: "queued", Run: name, Detail: "waits for " + running})
		case later:
			out = append(out, Action{Cluster: r.Cluster, Did: "scheduled", Run: name, Detail: "waits for its sector's wave until " + r.NotBefore.UTC().Format(time.RFC3339) + " (" + r.Wave + ")"})
		default:
			out = append(out, Action{Cluster: r.Cluster, Did: "started", Run: name})
		}
	}
	return out, nil
}

// Reconcile looks at every run of namespace that selector matches: where
// no run of a cluster runs, it starts the newest waiting one (cancelling
// older waiting ones) once its wave came (now is the time); where the
// newest run of a cluster failed at head, it starts it again from heads
// (the head's PipelineRun by cluster), at most maxAttempts times in all.
func Reconcile(ctx context.Context, api API, namespace, selector, head string, heads map[string][]byte, maxAttempts int, now time.Time) ([]Action, error) {
	all, err := api.List(ctx, namespace, selector)
	if err != nil {
		return nil, err
	}
	byCluster := map[string][]kube.PipelineRun{}
	for _, r := range all {
		id := r.Metadata.Labels[LabelRegion] + "/" + r.Metadata.Labels[LabelCluster]
		byCluster[id] = append(byCluster[id], r)
	}
	var ids []string
	for id := range byCluster {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Action
	for _, id := range ids {
		runs := byCluster[id]
		sort.Slice(runs, func(i, j int) bool {
			return runs[i].Metadata.CreationTimestamp.Before(runs[j].Metadata.CreationTimestamp)
		})
		var pending []kube.PipelineRun
		running := false
		for _, r := range runs {
			switch r.State() {
			case "pending":
				pending = append(pending, r)
			case "running":
				running = true
			}
		}
		if running {
			continue
		}
		if len(pending) > 0 {
			for _, p := range pending[:len(pending)-1] {
				if err := api.Patch(ctx, namespace, p.Metadata.Name, []byte(`{"spec":{"status":"Cancelled"}}`)); err != nil {
					return out, err
				}
				out = append(out, Action{Cluster: id, Did: "superseded", Run: p.Metadata.Name})
			}
			newest := pending[len(pending)-1]
			if at, err := time.Parse(time.RFC3339, newest.Metadata.Annotations[AnnotationNotBefore]); err == nil && at.After(now) {
				continue // its sector's wave has not come
			}
			if err := api.Patch(ctx, namespace, newest.Metadata.Name, []byte(`{"spec":{"status":null}}`)); err != nil {
				return out, err
			}
			out = append(out, Action{Cluster: id, Did: "started", Run: newest.Metadata.Name, Detail: "it waited for " + short(newest.Metadata.Labels[LabelCommit])})
			continue
		}
		last := runs[len(runs)-1]
		if last.State() != "failed" || last.Metadata.Labels[LabelCommit] != head || heads[id] == nil {
			continue
		}
		attempts := 0
		for _, r := range runs {
			if r.Metadata.Labels[LabelCommit] == head {
				attempts++
			}
		}
		if attempts >= maxAttempts {
			out = append(out, Action{Cluster: id, Did: "gave-up", Run: last.Metadata.Name, Detail: fmt.Sprintf("%d runs at %s failed; fix and push", attempts, short(head))})
			continue
		}
		obj, err := manifest(heads[id])
		if err != nil {
			return out, err
		}
		setLabel(obj, LabelCommit, head)
		setLabel(obj, LabelAttempt, strconv.Itoa(attempts+1))
		name, err := create(ctx, api, namespace, obj)
		if err != nil {
			return out, err
		}
		out = append(out, Action{Cluster: id, Did: "retried", Run: name, Detail: fmt.Sprintf("attempt %d at %s after %s failed", attempts+1, short(head), last.Metadata.Name)})
	}
	return out, nil
}

func manifest(b []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(j, &obj); err != nil {
		return nil, err
	}
	if obj["kind"] != "PipelineRun" {
		return nil, fmt.Errorf("not a PipelineRun")
	}
	if _, ok := obj["spec"].(map[string]any); !ok {
		return nil, fmt.Errorf("no spec")
	}
	return obj, nil
}

func labels(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	l, _ := meta["labels"].(map[string]any)
	if l == nil {
		l = map[string]any{}
		meta["labels"] = l
	}
	return l
}

func setLabel(obj map[string]any, k, v string) { labels(obj)[k] = v }

func setAnnotation(obj map[string]any, k, v string) {
	meta := obj["metadata"].(map[string]any) // labels made it
	a, _ := meta["annotations"].(map[string]any)
	if a == nil {
		a = map[string]any{}
		meta["annotations"] = a
	}
	a[k] = v
}

// selector matches the runs of the same cluster and pipeline.
func selector(obj map[string]any) string {
	l := labels(obj)
	// Plan-only runs (regionctl.io/mode=plan) change nothing: they neither
	// wait for nor supersede a deploy.
	return fmt.Sprintf("%s=%v,%s=%v,%s=%v,%s!=plan", LabelRegion, l[LabelRegion], LabelCluster, l[LabelCluster], LabelPipeline, l[LabelPipeline], LabelMode)
}

func create(ctx context.Context, api API, namespace string, obj map[string]any) (string, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	return api.Create(ctx, namespace, b)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
