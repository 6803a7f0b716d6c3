// Package tekton holds conformance tests only: it proves the Tekton
// resources of pipelines/tekton and every rendered PipelineRun against
// Tekton's own v1 types and Validate, and builds the kustomize overlays with
// krusty. It is a module of its own so that Tekton's and Kubernetes' large
// dependency trees never reach regionctl's binary.
package tekton
