// Package manifests renders a chart of the fleet's repository as Argo CD's
// repo server renders it (helm template with the Application's release
// name, namespace and values, the chart's CRDs and hooks included), with
// Helm's own Go packages, and compares two renders object by object: what a
// change to a chart, its revision or its values does to what a cluster runs.
package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/diff"
)

// MaxChart bounds the bytes of one chart's files, as a layer file is
// bounded: a chart is read whole into memory.
const MaxChart = 10 << 20

// Chart is a chart's files, read once and loaded anew for each render:
// Helm's dependency processing changes the chart it is given.
type Chart struct{ files []*loader.BufferedFile }

// LoadChart reads the chart in dir of fsys as helm template reads a chart
// directory: .helmignore applied, every other file kept. A symbolic link
// is refused (Argo CD and regionctl read charts from the repository
// itself), as is a chart over MaxChart bytes.
func LoadChart(fsys fs.FS, dir string) (*Chart, error) {
	rules := ignore.Empty()
	if b, err := fs.ReadFile(fsys, path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, ignore.HelmIgnore), err)
		}
	}
	rules.AddDefaults()
	var files []*loader.BufferedFile
	total := 0
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel := strings.TrimPrefix(p, dir+"/")
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: charts are read from the repository itself; replace it with what it points at", p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(rel, info) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		if total += int(info.Size()); total > MaxChart {
			return fmt.Errorf("%s: the chart is over %d MiB", dir, MaxChart>>20)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: rel, Data: b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := loader.LoadFiles(files); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &Chart{files: files}, nil
}

// Release is what an Application gives its chart.
type Release struct {
	Name      string         // spec.source.helm.releaseName, else the Application's name
	Namespace string         // spec.destination.namespace
	Values    map[string]any // spec.source.helm.valuesObject
	// KubeVersion is the cluster's Kubernetes minor ("1.33", rendered as
	// v1.33.0: the patch release is the cluster's own); "" is Helm's
	// default.
	KubeVersion string
}

// Object is one rendered Kubernetes object.
type Object struct {
	// Key names it: "Kind namespace/name", or "Kind name" when the chart
	// writes no namespace, with the API group after the kind when it has
	// one ("Deployment.apps ...").
	Key string
	// YAML is the object re-encoded with its keys sorted, so that two
	// renders compare by content.
	YAML []byte
	kind string
	obj  map[string]any
}

// Render renders ch as helm template renders it for r: values coalesced
// over the chart's defaults and held to its values.schema.json,
// dependencies and their conditions processed, templates executed with no
// cluster to look up and no DNS, NOTES.txt and partials left out, the
// chart's crds/ and its hooks kept. Objects come back sorted by Key.
func (c *Chart) Render(r Release) ([]Object, error) {
	return c.RenderWithin(r, MaxRender)
}

// MaxRender bounds one chart's render: a chart's templates are code from
// the change under review, and a template can loop.
const MaxRender = 60 * time.Second

// RenderWithin is Render, refused when it takes longer than d. Helm's
// engine cannot be stopped: a render past d goes on beside the caller,
// which fails the review and ends.
func (c *Chart) RenderWithin(r Release, d time.Duration) ([]Object, error) {
	type result struct {
		objs []Object
		err  error
	}
	done := make(chan result, 1)
	go func() {
		objs, err := c.render(r)
		done <- result{objs, err}
	}()
	select {
	case res := <-done:
		return res.objs, res.err
	case <-time.After(d):
		return nil, fmt.Errorf("the chart's templates ran past %s: a template that loops?", d)
	}
}

func (c *Chart) render(r Release) ([]Object, error) {
	ch, err := loader.LoadFiles(c.files)
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if r.KubeVersion != "" {
		// EKS names a minor; its patch release is the cluster's own.
		v := strings.TrimPrefix(r.KubeVersion, "v")
		if strings.Count(v, ".") == 1 {
			v += ".0"
		}
		kv, err := chartutil.ParseKubeVersion("v" + v)
		if err != nil {
			return nil, fmt.Errorf("kubernetes version %q: %w", r.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	vals := r.Values
	if vals == nil {
		vals = map[string]any{}
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return nil, err
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: r.Name, Namespace: r.Namespace, Revision: 1, IsInstall: true}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{}.Render(ch, top)
	if err != nil {
		return nil, err
	}
	var docs []string
	for _, crd := range ch.CRDObjects() {
		docs = append(docs, string(crd.File.Data))
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		base := path.Base(name)
		if strings.HasPrefix(base, "_") || strings.EqualFold(base, "NOTES.txt") {
			continue
		}
		for _, d := range releaseutil.SplitManifests(files[name]) {
			docs = append(docs, d)
		}
	}
	return objects(docs)
}

func objects(docs []string) ([]Object, error) {
	var out []Object
	seen := map[string]bool{}
	for _, d := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			return nil, fmt.Errorf("a rendered document is not YAML: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		o, err := object(obj)
		if err != nil {
			return nil, err
		}
		if seen[o.Key] {
			return nil, fmt.Errorf("%s is rendered twice", o.Key)
		}
		seen[o.Key] = true
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func object(obj map[string]any) (Object, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if kind == "" || apiVersion == "" || name == "" {
		return Object{}, errors.New("a rendered object has no apiVersion, kind or metadata.name")
	}
	k := kind
	if group, _, ok := strings.Cut(apiVersion, "/"); ok {
		k += "." + group
	}
	if ns, _ := meta["namespace"].(string); ns != "" {
		k += " " + ns + "/" + name
	} else {
		k += " " + name
	}
	y, err := yaml.Marshal(obj)
	if err != nil {
		return Object{}, fmt.Errorf("%s: %w", k, err)
	}
	o := Object{Key: k, YAML: y, kind: kind}
	if kind == "Secret" {
		o.obj = obj // redacted when compared
	}
	return o, nil
}

// Change is one object that differs between two renders.
type Change struct {
	Object  string // Object.Key
	Status  string // added, changed, removed
	Unified string // from the base's object (a/) to the head's (b/)
}

// Compare lists the objects that differ from base to head, by Key. A
// Secret's data and stringData values never appear: each is shown as
// "(redacted)", or "(redacted, changed)" on the head side when it differs.
func Compare(base, head []Object) ([]Change, error) {
	b := index(base)
	h := index(head)
	all := maps.Clone(b)
	maps.Copy(all, h)
	var out []Change
	for _, k := range slices.Sorted(maps.Keys(all)) {
		bo, inBase := b[k]
		ho, inHead := h[k]
		var err error
		var by, hy []byte
		if inBase {
			if by, err = encode(bo, ho, false); err != nil {
				return nil, err
			}
		}
		if inHead {
			if hy, err = encode(ho, bo, true); err != nil {
				return nil, err
			}
		}
		if inBase && inHead && bytes.Equal(by, hy) {
			continue
		}
		out = append(out, Change{Object: k, Status: diff.Status(inBase, inHead), Unified: diff.Unified("a/"+k, "b/"+k, by, hy, 3)})
	}
	return out, nil
}

func index(objs []Object) map[string]*Object {
	m := make(map[string]*Object, len(objs))
	for i := range objs {
		m[objs[i].Key] = &objs[i]
	}
	return m
}

// Redacted stands for a Secret's value in a review; a value that differs
// from the other side's is RedactedChanged on the head side.
const (
	Redacted        = "(redacted)"
	RedactedChanged = "(redacted, changed)"
)

// encode writes o with its keys sorted; a Secret's values are replaced,
// marked changed (on the head side) where other's differ.
func encode(o, other *Object, head bool) ([]byte, error) {
	if o.kind != "Secret" {
		return o.YAML, nil
	}
	return yaml.Marshal(redactSecret(o.obj, other, head))
}

func redactSecret(obj map[string]any, other *Object, head bool) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, field := range []string{"data", "stringData"} {
		m, ok := obj[field].(map[string]any)
		if !ok {
			continue
		}
		var theirs map[string]any
		if other != nil {
			theirs, _ = other.obj[field].(map[string]any)
		}
		r := make(map[string]any, len(m))
		for k, v := range m {
			r[k] = Redacted
			if tv, ok := theirs[k]; head && (!ok || fmt.Sprint(tv) != fmt.Sprint(v)) {
				r[k] = RedactedChanged
			}
		}
		out[field] = r
	}
	return out
}
