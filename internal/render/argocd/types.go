// Package argocd renders one Argo CD ApplicationSet per environment and
// cluster type, whose RollingSync steps follow the sectors' rollout order,
// and each cluster's Helm values file. Expand evaluates the generators
// offline, from the fleet, and Check refuses an ApplicationSet where a
// generated Application lands in no step or in several, or a step is empty.
//
// The ApplicationSet is modelled with small structs of our own rather than
// Argo CD's Go types (which pull about a thousand packages); the tests prove
// the rendered documents against Argo CD's own ApplicationSet CRD schema.
//
// Entry points: Build, Expand, Check, ValuesFile.
package argocd

import "encoding/json"

// ApplicationSet is the subset of argoproj.io/v1alpha1 ApplicationSet
// regionctl writes.
type ApplicationSet struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       Spec       `json:"spec"`
}

type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type Spec struct {
	GoTemplate        bool        `json:"goTemplate"`
	GoTemplateOptions []string    `json:"goTemplateOptions,omitempty"`
	Generators        []Generator `json:"generators"`
	Strategy          *Strategy   `json:"strategy,omitempty"`
	Template          Template    `json:"template"`
	SyncPolicy        *SetPolicy  `json:"syncPolicy,omitempty"`
}

type SetPolicy struct {
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion"`
}

type Generator struct {
	Matrix   *Matrix           `json:"matrix,omitempty"`
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	Git      *GitGenerator     `json:"git,omitempty"`
}

type Matrix struct {
	Generators []Generator `json:"generators"`
}

type ClusterGenerator struct {
	Selector LabelSelector `json:"selector"`
}

type LabelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []Requirement     `json:"matchExpressions,omitempty"`
}

type Requirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

type GitGenerator struct {
	RepoURL     string         `json:"repoURL"`
	Revision    string         `json:"revision"`
	Directories []GitDirectory `json:"directories"`
}

type GitDirectory struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

type Strategy struct {
	Type        string       `json:"type"`
	RollingSync *RollingSync `json:"rollingSync,omitempty"`
}

type RollingSync struct {
	Steps []Step `json:"steps"`
}

// Step is one RollingSync step: the Applications its expressions match.
type Step struct {
	MatchExpressions []Requirement `json:"matchExpressions"`
	MaxUpdate        *IntOrString  `json:"maxUpdate,omitempty"`
}

// IntOrString is Kubernetes' int-or-string.
type IntOrString struct {
	Int *int
	Str string
}

func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.Int != nil {
		return json.Marshal(*v.Int)
	}
	return json.Marshal(v.Str)
}

type Template struct {
	Metadata TemplateMeta `json:"metadata"`
	Spec     AppSpec      `json:"spec"`
}

type TemplateMeta struct {
	Name       string            `json:"name"`
	Labels     map[string]string `json:"labels"`
	Finalizers []string          `json:"finalizers,omitempty"`
}

type AppSpec struct {
	Project     string      `json:"project"`
	Source      *Source     `json:"source,omitempty"`
	Sources     []Source    `json:"sources,omitempty"`
	Destination Destination `json:"destination"`
	SyncPolicy  SyncPolicy  `json:"syncPolicy"`
}

type Source struct {
	RepoURL        string     `json:"repoURL"`
	Chart          string     `json:"chart,omitempty"`
	Path           string     `json:"path,omitempty"`
	TargetRevision string     `json:"targetRevision"`
	Ref            string     `json:"ref,omitempty"`
	Helm           *Helm      `json:"helm,omitempty"`
	Directory      *Directory `json:"directory,omitempty"`
}

type Helm struct {
	ReleaseName  string         `json:"releaseName,omitempty"`
	ValueFiles   []string       `json:"valueFiles,omitempty"`
	ValuesObject map[string]any `json:"valuesObject,omitempty"`
}

type Directory struct {
	Recurse bool `json:"recurse"`
}

type Destination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace"`
}

type SyncPolicy struct {
	Automated   *Automated `json:"automated,omitempty"`
	SyncOptions []string   `json:"syncOptions,omitempty"`
	// ManagedNamespaceMetadata is what Argo CD puts on the namespace it
	// creates for the Application (CreateNamespace=true).
	ManagedNamespaceMetadata *NamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
	Retry                    *Retry             `json:"retry,omitempty"`
}

type NamespaceMetadata struct {
	Labels map[string]string `json:"labels,omitempty"`
}

type Automated struct {
	Prune    bool `json:"prune"`
	SelfHeal bool `json:"selfHeal"`
}

type Retry struct {
	Limit   int64    `json:"limit"`
	Backoff *Backoff `json:"backoff,omitempty"`
}

type Backoff struct {
	Duration    string `json:"duration"`
	Factor      int64  `json:"factor"`
	MaxDuration string `json:"maxDuration"`
}

// Application is the subset of argoproj.io/v1alpha1 Application regionctl
// writes.
type Application struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   AppMeta `json:"metadata"`
	Spec       AppSpec `json:"spec"`
}

type AppMeta struct {
	Name       string            `json:"name"`
	Namespace  string            `json:"namespace"`
	Labels     map[string]string `json:"labels,omitempty"`
	Finalizers []string          `json:"finalizers,omitempty"`
}

// AppProject is the subset of argoproj.io/v1alpha1 AppProject regionctl
// writes.
type AppProject struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   ObjectMeta  `json:"metadata"`
	Spec       ProjectSpec `json:"spec"`
}

type ProjectSpec struct {
	Description              string          `json:"description"`
	SourceRepos              []string        `json:"sourceRepos"`
	Destinations             []Destination   `json:"destinations"`
	ClusterResourceWhitelist []GroupKind     `json:"clusterResourceWhitelist"`
	OrphanedResources        *OrphanedPolicy `json:"orphanedResources,omitempty"`
}

type GroupKind struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

type OrphanedPolicy struct {
	Warn bool `json:"warn"`
}
