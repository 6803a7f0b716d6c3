// Package argocd holds conformance tests only: it expands the rendered
// ApplicationSets with Argo CD's own ApplicationSet controller code (the
// cluster generator, the template renderer, RollingSync's step assignment)
// against cluster Secrets built from the rendered ones, and compares every
// Application with what regionctl planned. It decodes the per-cluster
// Applications and AppProjects with Argo CD's types, strictly.
//
// It is a module of its own, built with the Go toolchain Argo CD v3.6
// requires (go.mod's go line; the go command fetches it from the module
// proxy), so that Argo CD's ~1,100 packages never reach regionctl's binary
// or its everyday build. `make conformance-argocd` runs it.
package argocd
