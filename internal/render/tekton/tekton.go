// Package tekton renders the PipelineRun of each cluster's pipeline (central
// for a regional cluster, regional for a management cluster) and checks its
// params against the Pipeline declared in pipelines/tekton. It models the
// documents with small structs of its own: Tekton's Go types stay out of the
// binary and prove the output in conformance/tekton instead.
//
// Entry points: ReadPipelines, ForCluster, Check.
package tekton

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// Dir holds the Tekton resources in the repository.
const Dir = "pipelines/tekton"

// Pipeline names.
const (
	Central  = "regionctl-central"
	Regional = "regionctl-regional"
)

// Param is a declared Pipeline param.
type Param struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"`
	Default *any   `json:"default,omitempty"`
}

// Pipelines maps a Pipeline name to its declared params.
type Pipelines map[string][]Param

// ReadPipelines reads the Pipelines of pipelines/tekton in fsys.
func ReadPipelines(fsys fs.FS) (Pipelines, error) {
	out := Pipelines{}
	files, err := fs.Glob(fsys, Dir+"/pipeline-*.yaml")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Params []Param `json:"params"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if doc.Kind == "Pipeline" {
			out[doc.Metadata.Name] = doc.Spec.Params
		}
	}
	return out, nil
}

// PipelineRun is the subset of tekton.dev/v1 PipelineRun regionctl writes.
type PipelineRun struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       RunSpec  `json:"spec"`
}

// ModeLabel marks a plan-only PipelineRun (value "plan"), which changes
// nothing and which dispatch never takes for a deploy.
const ModeLabel = "regionctl.io/mode"

type Metadata struct {
	GenerateName string            `json:"generateName"`
	Labels       map[string]string `json:"labels"`
}

type RunSpec struct {
	PipelineRef     Ref             `json:"pipelineRef"`
	Params          []RunParam      `json:"params"`
	Workspaces      []Workspace     `json:"workspaces"`
	TaskRunTemplate TaskRunTemplate `json:"taskRunTemplate"`
	Timeouts        *Timeouts       `json:"timeouts,omitempty"`
}

// Timeouts bound a run: the whole pipeline, and its finally tasks.
type Timeouts struct {
	Pipeline string `json:"pipeline"`
}

type Ref struct {
	Name string `json:"name"`
}

type RunParam struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type Workspace struct {
	Name                string         `json:"name"`
	VolumeClaimTemplate map[string]any `json:"volumeClaimTemplate"`
}

type TaskRunTemplate struct {
	ServiceAccountName string `json:"serviceAccountName"`
}

// WorkspaceSize is the volume of a run: the repository with its history
// (a few MiB), Terraform's plugin cache, which holds the hashicorp/aws
// provider once (675 MiB) for every root the run initialises (they link to
// it), and the roots' workspaces and logs (under 10 MiB). Twice the need.
const WorkspaceSize = "2Gi"

// StorageClass is the class of every run's workspace: gp3 volumes of the
// EBS CSI driver, rendered into each installation (storageclass.yaml).
// EKS marks no StorageClass default since Kubernetes 1.30, so a claim
// that names none is never provisioned and its run never starts.
const StorageClass = "regionctl-gp3"

// ClaimTemplate is a run workspace's volumeClaimTemplate of size, in the
// installation's StorageClass.
func ClaimTemplate(size string) map[string]any {
	return map[string]any{"spec": map[string]any{
		"accessModes":      []string{"ReadWriteOnce"},
		"storageClassName": StorageClass,
		"resources":        map[string]any{"requests": map[string]any{"storage": size}},
	}}
}

// PipelineTimeout bounds a whole run: an EKS cluster takes 10 to 20
// minutes to create or destroy and its node group as long again, and the
// terraform Task may first wait out a dead run's lease (lease TTL 10m);
// the Tasks' own timeouts (pipelines/tekton) add up to less. A run that
// waits for an approver (a destroy; a sector with approval: always) may
// wait a day for one first (--approval-wait of the terraform Task).
const (
	PipelineTimeout         = "3h"
	ApprovalPipelineTimeout = "27h"
)

// Path of a cluster's PipelineRun in deploy/.
func Path(environment, region, cluster string) string {
	return path.Join(environment, region, "tekton", cluster+runSuffix)
}

const runSuffix = ".pipelinerun.yaml"

// IsRunPath reports whether p (slash-separated, in deploy/) has the shape
// of Path: a cluster's PipelineRun.
func IsRunPath(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) == 4 && parts[2] == "tekton" && len(parts[3]) > len(runSuffix) && strings.HasSuffix(parts[3], runSuffix)
}

// Source says where the pipelines fetch the repository from: the URL and
// the deploy branch. A run's git-revision starts as the branch and
// dispatch pins it to a commit on the branch's first-parent history;
// git-branch stays the branch, which fetch holds the commit to.
type Source struct {
	RepoURL  string
	Revision string
}

// ForCluster returns the PipelineRun of c's pipeline. It stays as long as
// c's file does: with delete: true it destroys, and with delete_pipeline:
// true (which implies delete) its run checks that a destroy completed, or,
// when a push took both steps at once, is still there to destroy.
func ForCluster(c *config.Cluster, tfvarsPath string, src Source) *PipelineRun {
	pipeline, tier, sa := Central, "central", iam.CentralServiceAccount
	params := []RunParam{
		{Name: "region", Value: c.Region.Name},
		{Name: "cluster", Value: c.Name},
		{Name: "tfvars", Value: tfvarsPath},
		{Name: "git-url", Value: src.RepoURL},
		{Name: "git-revision", Value: src.Revision},
		{Name: "git-branch", Value: src.Revision},
	}
	partition := iam.Partition(c.Region.Name)
	timeout := PipelineTimeout
	if c.NeedsApproval() {
		timeout = ApprovalPipelineTimeout
	}
	if c.Type == "regional" {
		params = append(params, RunParam{Name: "role-arn", Value: iam.RoleARN(partition, "${account_id}", iam.AccessRole)})
	}
	if c.Type == "management" {
		pipeline, tier, sa = Regional, "regional", iam.RegionalServiceAccount
		destroy := "false"
		if c.Bool("delete") {
			destroy = "true"
		}
		params = append(params,
			RunParam{Name: "role-arn", Value: iam.RoleARN(partition, "${account_id}", iam.DeployRoleName)},
			RunParam{Name: "external-id", Value: iam.ExternalID(c.Region.Name)},
			RunParam{Name: "destroy", Value: destroy},
		)
	}
	return &PipelineRun{
		APIVersion: "tekton.dev/v1",
		Kind:       "PipelineRun",
		Metadata: Metadata{
			GenerateName: fmt.Sprintf("%s-%s-%s-", tier, c.Region.Name, c.Name),
			Labels: map[string]string{
				"app.kubernetes.io/part-of": "regionctl",
				"regionctl.io/cluster":      c.Name,
				"regionctl.io/region":       c.Region.Name,
				"regionctl.io/sector":       c.SectorName(),
				"regionctl.io/environment":  c.Environment(),
				"regionctl.io/pipeline":     tier,
			},
		},
		Spec: RunSpec{
			PipelineRef:     Ref{Name: pipeline},
			Params:          params,
			Workspaces:      []Workspace{{Name: "source", VolumeClaimTemplate: ClaimTemplate(WorkspaceSize)}},
			TaskRunTemplate: TaskRunTemplate{ServiceAccountName: sa},
			Timeouts:        &Timeouts{Pipeline: timeout},
		},
	}
}

// Check reports params of run its Pipeline does not declare, and declared
// params without default that run does not set.
func Check(run *PipelineRun, pipelines Pipelines) []string {
	decl, ok := pipelines[run.Spec.PipelineRef.Name]
	if !ok {
		return []string{fmt.Sprintf("no Pipeline %s in %s", run.Spec.PipelineRef.Name, Dir)}
	}
	declared := map[string]Param{}
	for _, p := range decl {
		declared[p.Name] = p
	}
	var problems []string
	set := map[string]bool{}
	for _, p := range run.Spec.Params {
		set[p.Name] = true
		d, ok := declared[p.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("param %s is not declared by Pipeline %s", p.Name, run.Spec.PipelineRef.Name))
		} else if d.Type != "" && d.Type != "string" {
			problems = append(problems, fmt.Sprintf("param %s of Pipeline %s is a %s; regionctl passes strings", p.Name, run.Spec.PipelineRef.Name, d.Type))
		}
	}
	for _, p := range decl {
		if !set[p.Name] && p.Default == nil {
			problems = append(problems, fmt.Sprintf("Pipeline %s requires param %s", run.Spec.PipelineRef.Name, p.Name))
		}
	}
	sort.Strings(problems)
	return problems
}

// Marshal encodes run as YAML with the generated-file marker. Like
// sigs.k8s.io/yaml.Marshal it goes through the types' JSON encoding (their
// json tags and MarshalJSON methods decide the fields), but the JSON is
// decoded with encoding/json rather than parsed again as YAML, which was a
// quarter of a cluster's render time; the YAML written is the same.
func Marshal(run *PipelineRun) ([]byte, error) {
	return marshalYAML(run)
}

// Signature digests the declared params, for cache keys.
func (p Pipelines) Signature() string {
	var names []string
	for n, ps := range p {
		var b strings.Builder
		b.WriteString(n)
		for _, x := range ps {
			fmt.Fprintf(&b, ",%s:%s:%v", x.Name, x.Type, x.Default != nil)
		}
		names = append(names, b.String())
	}
	sort.Strings(names)
	return strings.Join(names, ";")
}
