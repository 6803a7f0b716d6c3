package manifests

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Kustomization is a directory tree holding a kustomization at Dir, read
// once and built by kustomize's own packages as `kustomize build` builds it
// (Argo CD runs that command for a kustomization without build options):
// the load restrictions' default (files below the kustomization's root),
// built-in generators and transformers only, no Helm charts. Nothing is
// fetched: a kustomization that names a remote resource, base or file is
// refused before kustomize reads it, as is one that inflates Helm charts.
type Kustomization struct {
	files map[string][]byte // by path, slash-separated, relative to the tree
	dir   string
	// A kustomization takes no values: it is built once, however many
	// clusters' Applications name it.
	once  sync.Once
	built []Object
	err   error
}

// kustomizationNames are the file names kustomize reads a kustomization
// from.
var kustomizationNames = map[string]bool{"kustomization.yaml": true, "kustomization.yml": true, "Kustomization": true}

// pathFields are the fields of a kustomization that name files or other
// kustomizations: a remote one among them would be fetched.
var pathFields = []string{"resources", "bases", "components", "crds", "patchesStrategicMerge", "generators", "transformers", "validators", "configurations"}

// remoteRef is a reference kustomize would fetch: a URL, an scp-like git
// address, or a path whose first element is a host name.
var remoteRef = regexp.MustCompile(`://|^git@|^git::|^gh:|^[^/]*:|^[^./][^/]*\.[^/]*/`)

// NewKustomization is the kustomization at dir of files (paths relative
// to the tree that holds it), once every kustomization in the tree names
// only files of the tree.
func NewKustomization(files map[string][]byte, dir string) (*Kustomization, error) {
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !kustomizationNames[path.Base(name)] {
			continue
		}
		if err := local(name, files[name]); err != nil {
			return nil, err
		}
	}
	k := &Kustomization{files: files, dir: dir}
	has := false
	for n := range kustomizationNames {
		_, ok := files[path.Join(dir, n)]
		has = has || ok
	}
	if !has {
		return nil, fmt.Errorf("%s holds no kustomization", dir)
	}
	return k, nil
}

// local refuses a kustomization that would fetch anything or inflate a
// Helm chart.
func local(name string, b []byte) error {
	var k map[string]any
	if err := yaml.Unmarshal(b, &k); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, helm := range []string{"helmCharts", "helmChartInflationGenerator", "helmGlobals"} {
		if _, ok := k[helm]; ok {
			return fmt.Errorf("%s: %s: Argo CD inflates no Helm chart in a kustomization unless told to, and regionctl none", name, helm)
		}
	}
	var refs []string
	for _, f := range pathFields {
		list, _ := k[f].([]any)
		for _, v := range list {
			if s, ok := v.(string); ok && !strings.Contains(s, "\n") {
				refs = append(refs, s)
			}
		}
	}
	for _, f := range []string{"patches", "patchesJson6902", "replacements"} {
		list, _ := k[f].([]any)
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				if s, ok := m["path"].(string); ok {
					refs = append(refs, s)
				}
			}
		}
	}
	for _, f := range []string{"configMapGenerator", "secretGenerator"} {
		list, _ := k[f].([]any)
		for _, v := range list {
			m, _ := v.(map[string]any)
			for _, key := range []string{"files", "envs"} {
				files, _ := m[key].([]any)
				for _, file := range files {
					if s, ok := file.(string); ok {
						// key=path: the path is after the key.
						_, p, found := strings.Cut(s, "=")
						if !found {
							p = s
						}
						refs = append(refs, p)
					}
				}
			}
			if s, ok := m["env"].(string); ok {
				refs = append(refs, s)
			}
		}
	}
	if openapi, ok := k["openapi"].(map[string]any); ok {
		if s, ok := openapi["path"].(string); ok {
			refs = append(refs, s)
		}
	}
	for _, r := range refs {
		if remoteRef.MatchString(strings.TrimSpace(r)) {
			return fmt.Errorf("%s names %q, which kustomize would fetch: regionctl builds a kustomization from its repository alone", name, r)
		}
	}
	return nil
}

// Build is what `kustomize build` prints for the kustomization, as objects
// (built on the first call; the objects are shared and not to be changed).
func (k *Kustomization) Build() ([]Object, error) {
	k.once.Do(func() { k.built, k.err = k.build() })
	return slices.Clip(k.built), k.err
}

func (k *Kustomization) build() ([]Object, error) {
	fsys := filesys.MakeFsInMemory()
	for name, b := range k.files {
		if err := fsys.MkdirAll("/" + path.Dir(name)); err != nil {
			return nil, err
		}
		if err := fsys.WriteFile("/"+name, b); err != nil {
			return nil, err
		}
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	rm, err := krusty.MakeKustomizer(opts).Run(fsys, "/"+k.dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", k.dir, err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		return nil, err
	}
	return objects(strings.Split(string(out), "\n---\n"))
}
