// Package bootstrap is what a cluster's bootstrap task does, from inside
// the cluster's own VPC as its bootstrap role (the one access entry of the
// cluster's private API): it installs Argo CD from Argo CD's own install
// manifests, then the cluster's rendered AppProject and root Application.
// From then on Argo CD manages the cluster, itself included.
//
// Everything is server-side applied with one field manager, so a second
// run changes only what differs, and Argo CD's own sync later takes the
// fields over.
//
// Entry points: CheckRoot and Run.
package bootstrap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/regionctl/regionctl/internal/kube"
)

// FieldManager is the field manager of everything the bootstrap applies.
const FieldManager = "regionctl-bootstrap"

// InClusterServer is the only destination a root Application may name:
// the cluster its Argo CD runs in.
const InClusterServer = "https://kubernetes.default.svc"

// Root is the checked AppProject and root Application of a cluster.
type Root struct {
	Namespace   string
	Project     map[string]any
	Application map[string]any
	// NamespaceLabels are the Pod Security labels the root puts on its
	// namespace, which the bootstrap makes with them.
	NamespaceLabels map[string]string
}

// Object is one decoded manifest.
type Object = map[string]any

// Decode splits a multi-document YAML stream into objects, skipping empty
// documents.
func Decode(b []byte) ([]Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []Object
	for i := 1; ; i++ {
		var o Object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
}

// CheckRoot checks the documents the pipeline handed the task (the
// rendered project.yaml and root.yaml) against their SHA-256, and that
// they are exactly one AppProject and one Application of it, in one
// namespace, deploying into this cluster only, from repoURL only (the
// fleet repository the task's own command names, set by Terraform from
// the reviewed config): a root of another source would hand the cluster
// to whoever controls that repository.
func CheckRoot(doc []byte, sum, repoURL string) (*Root, error) {
	if repoURL == "" {
		return nil, errors.New("no fleet repository to hold the root Application to")
	}
	got := sha256.Sum256(doc)
	if hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("the root documents do not match their SHA-256 %q: they were cut or changed on the way", sum)
	}
	objs, err := Decode(doc)
	if err != nil {
		return nil, fmt.Errorf("the root documents: %w", err)
	}
	r := &Root{}
	for _, o := range objs {
		api, kind, name, ns := str(o, "apiVersion"), str(o, "kind"), str(o, "metadata", "name"), str(o, "metadata", "namespace")
		if api != "argoproj.io/v1alpha1" {
			return nil, fmt.Errorf("the root documents hold %s %s %q: only an Argo CD AppProject and Application may be there", api, kind, name)
		}
		if name == "" || ns == "" {
			return nil, fmt.Errorf("the root documents hold a %s without a name or namespace", kind)
		}
		if r.Namespace != "" && ns != r.Namespace {
			return nil, fmt.Errorf("the root documents span namespaces %s and %s", r.Namespace, ns)
		}
		r.Namespace = ns
		switch {
		case kind == "AppProject" && r.Project == nil:
			r.Project = o
		case kind == "Application" && r.Application == nil:
			r.Application = o
		default:
			return nil, fmt.Errorf("the root documents hold another %s (%s): one AppProject and one Application only", kind, name)
		}
	}
	if r.Project == nil || r.Application == nil {
		return nil, errors.New("the root documents lack the AppProject or the root Application")
	}
	if p := str(r.Application, "spec", "project"); p != str(r.Project, "metadata", "name") {
		return nil, fmt.Errorf("the root Application is of project %q, not of the AppProject %q beside it", p, str(r.Project, "metadata", "name"))
	}
	if s := str(r.Application, "spec", "destination", "server"); s != InClusterServer {
		return nil, fmt.Errorf("the root Application deploys to %q: a cluster's Argo CD deploys only into its own cluster (%s)", s, InClusterServer)
	}
	if spec, _ := r.Application["spec"].(map[string]any); spec != nil && spec["sources"] != nil {
		return nil, errors.New("the root Application has spec.sources: a root has one source, the fleet repository")
	}
	if u := str(r.Application, "spec", "source", "repoURL"); u != repoURL {
		return nil, fmt.Errorf("the root Application's source is %q, not the fleet repository %q", u, repoURL)
	}
	if r.NamespaceLabels, err = podSecurityLabels(r.Application); err != nil {
		return nil, err
	}
	return r, nil
}

// podSecurityLevels are the Pod Security Standards render enforces.
var podSecurityLevels = map[string]bool{"restricted": true, "baseline": true}

// podSecurityLabels are the Pod Security labels the root Application puts
// on its namespace (spec.syncPolicy.managedNamespaceMetadata.labels), which
// the bootstrap gives the namespace when it makes it. The root must
// enforce a level: a namespace made without one runs anything until the
// first sync labels it. Any other label is refused.
func podSecurityLabels(app Object) (map[string]string, error) {
	spec, _ := app["spec"].(map[string]any)
	policy, _ := spec["syncPolicy"].(map[string]any)
	meta, _ := policy["managedNamespaceMetadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	out := map[string]string{}
	for k, v := range labels {
		mode, ok := strings.CutPrefix(k, "pod-security.kubernetes.io/")
		level, _ := v.(string)
		if !ok || (mode != "enforce" && mode != "warn" && mode != "audit") || !podSecurityLevels[level] {
			return nil, fmt.Errorf("the root Application's namespace label %s=%v is not a Pod Security level render writes", k, v)
		}
		out[k] = level
	}
	if out["pod-security.kubernetes.io/enforce"] == "" {
		return nil, errors.New("the root Application enforces no Pod Security level on its namespace (managedNamespaceMetadata): render it again with this regionctl")
	}
	return out, nil
}

// Install is one bootstrap: Argo CD's install manifests and the checked
// root.
type Install struct {
	Manifests []byte
	Root      *Root
	Log       io.Writer
	// Wait bounds the wait for the CustomResourceDefinitions to be
	// established (default 3 minutes); Poll is how often it looks.
	Wait, Poll time.Duration
}

// Run applies Argo CD's manifests into the root's namespace (its
// CustomResourceDefinitions first, waiting until the API server serves
// them), then the AppProject and the root Application.
func Run(ctx context.Context, kc *kube.Client, in Install) error {
	if in.Wait <= 0 {
		in.Wait = 3 * time.Minute
	}
	if in.Poll <= 0 {
		in.Poll = 2 * time.Second
	}
	logf := func(format string, args ...any) {
		if in.Log != nil {
			fmt.Fprintf(in.Log, format+"\n", args...)
		}
	}
	objs, err := Decode(in.Manifests)
	if err != nil {
		return fmt.Errorf("Argo CD's install manifests: %w", err)
	}
	ns := in.Root.Namespace
	var crds, rest []Object
	for _, o := range objs {
		if str(o, "kind") == "CustomResourceDefinition" {
			crds = append(crds, o)
			continue
		}
		if str(o, "kind") == "Namespace" {
			return fmt.Errorf("Argo CD's install manifests hold a Namespace (%s): they are the namespace-less install", str(o, "metadata", "name"))
		}
		intoNamespace(o, ns)
		rest = append(rest, o)
	}
	if len(crds) == 0 || len(rest) == 0 {
		return errors.New("Argo CD's install manifests hold no CustomResourceDefinitions or nothing else: not install.yaml")
	}
	apply := func(o Object) error {
		p, err := kc.Apply(ctx, o, ns, FieldManager)
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", str(o, "kind"), str(o, "metadata", "name"), err)
		}
		logf("applied %s", p)
		return nil
	}
	labels := map[string]any{}
	for k, v := range in.Root.NamespaceLabels {
		labels[k] = v
	}
	if err := apply(Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "labels": labels}}); err != nil {
		return err
	}
	var paths []string
	for _, o := range crds {
		if err := apply(o); err != nil {
			return err
		}
		p, err := kc.ObjectPath(ctx, str(o, "apiVersion"), "CustomResourceDefinition", "", str(o, "metadata", "name"))
		if err != nil {
			return err
		}
		paths = append(paths, p)
	}
	deadline := time.Now().Add(in.Wait)
	for _, p := range paths {
		if err := established(ctx, kc, p, deadline, in.Poll); err != nil {
			return err
		}
	}
	kc.Forget("argoproj.io/v1alpha1")
	for _, o := range rest {
		if err := apply(o); err != nil {
			return err
		}
	}
	for _, o := range []Object{in.Root.Project, in.Root.Application} {
		if err := apply(o); err != nil {
			return err
		}
	}
	logf("Argo CD is installed in %s; the root Application %s takes over from here", ns, str(in.Root.Application, "metadata", "name"))
	return nil
}

// established waits until the CustomResourceDefinition at p says
// Established.
func established(ctx context.Context, kc *kube.Client, p string, deadline time.Time, poll time.Duration) error {
	for {
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status string } `json:"conditions"`
			} `json:"status"`
		}
		if err := kc.Get(ctx, p, &crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == "Established" && c.Status == "True" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not established yet", p)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// intoNamespace puts a namespaced object of the manifests into ns: Argo
// CD's install.yaml leaves its objects' namespace to the applier, and
// names "argocd" in its ClusterRoleBindings' subjects.
func intoNamespace(o Object, ns string) {
	if str(o, "kind") != "ClusterRoleBinding" {
		return
	}
	subjects, _ := o["subjects"].([]any)
	for _, s := range subjects {
		if m, ok := s.(map[string]any); ok && m["kind"] == "ServiceAccount" {
			m["namespace"] = ns
		}
	}
}

func str(o map[string]any, path ...string) string {
	var v any = o
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}
