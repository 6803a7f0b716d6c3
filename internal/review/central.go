package review

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"sigs.k8s.io/yaml"

	"github.com/regionctl/regionctl/internal/manifests"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

// In the central topology an Application is what an ApplicationSet makes
// of a cluster Secret: the set's template (chart source and release), the
// Secret's annotations (the chart revision and namespace on that cluster)
// and the cluster's values file, each rendered into deploy/.

// centralSide is one side's rendered files, and a way to the files a whole
// review settled (the same on both sides, so left out of both): the base's
// committed deploy/.
type centralSide struct {
	files   map[string][]byte
	settled map[string]plumbing.Hash
	base    fs.FS
}

func (s centralSide) get(p string) ([]byte, bool) {
	if b, ok := s.files[p]; ok {
		return b, true
	}
	if _, ok := s.settled[p]; !ok {
		return nil, false
	}
	b, err := fs.ReadFile(s.base, path.Join(deployDir, p))
	return b, err == nil
}

// centralApps are the Applications one side makes on clusters, by
// "<region>/<cluster> <component>". kube gives a cluster's Kubernetes
// version.
func centralApps(side centralSide, clusters map[clusterKey]bool, kube func(cluster string) string) (map[string]*application, error) {
	out := map[string]*application{}
	sets := map[string]*appSetSource{}
	for k := range clusters {
		p := argocd.SecretPath(k.env, k.region, k.cluster)
		b, ok := side.get(p)
		if !ok {
			continue
		}
		var secret struct {
			Metadata struct {
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(b, &secret); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		labels, ann := secret.Metadata.Labels, secret.Metadata.Annotations
		for key, v := range labels {
			comp, ok := strings.CutPrefix(key, "regionctl.io/component-")
			if !ok || v != "true" {
				continue
			}
			setPath := argocd.AppSetPath(k.env, comp)
			set, seen := sets[setPath]
			if !seen {
				if b, ok := side.get(setPath); ok {
					var err error
					if set, err = parseAppSet(b); err != nil {
						return nil, fmt.Errorf("%s: %w", setPath, err)
					}
				}
				sets[setPath] = set
			}
			if set == nil {
				continue
			}
			a := &application{RepoURL: set.RepoURL, Path: path.Clean(set.Path), Chart: set.Chart, Revision: ann[argocd.RevisionAnnotation(comp)], Kustomize: set.Kustomize,
				Release: manifests.Release{Name: set.Release, Namespace: ann[argocd.NamespaceAnnotation(comp)], KubeVersion: kube(k.region + "/" + k.cluster)}}
			if a.Release.Name == "" {
				a.Release.Name = comp
			}
			vp := argocd.ValuesPath(k.env, k.region, k.cluster, comp)
			if v, ok := side.get(vp); ok {
				if err := yaml.Unmarshal(v, &a.Release.Values); err != nil {
					return nil, fmt.Errorf("%s: %w", vp, err)
				}
			}
			out[k.region+"/"+k.cluster+" "+comp] = a
		}
	}
	return out, nil
}

// clusterKey names a cluster by where its files are.
type clusterKey struct{ env, region, cluster string }

var (
	valuesFile        = regexp.MustCompile(`^([^/]+)/([^/]+)/argocd/([^/]+)/values/[^/]+\.yaml$`)
	clusterSecretFile = regexp.MustCompile(`^([^/]+)/argocd/clusters/[^/]+\.yaml$`)
)

// changedClusters are the clusters whose values file or cluster Secret a
// side holds (a changed one: a whole review settles the others).
func changedClusters(sides ...map[string][]byte) (map[clusterKey]bool, error) {
	out := map[clusterKey]bool{}
	for _, files := range sides {
		for p, b := range files {
			if m := valuesFile.FindStringSubmatch(p); m != nil {
				out[clusterKey{m[1], m[2], m[3]}] = true
				continue
			}
			m := clusterSecretFile.FindStringSubmatch(p)
			if m == nil {
				continue
			}
			var secret struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(b, &secret); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			out[clusterKey{m[1], secret.Metadata.Labels["region"], secret.Metadata.Labels["cluster"]}] = true
		}
	}
	return out, nil
}

// appSetSource is what an ApplicationSet's template takes its chart from.
type appSetSource struct {
	RepoURL, Path, Chart, Release string
	Kustomize                     bool // a kustomization: no values
}

// parseAppSet reads the chart source of a rendered ApplicationSet: its
// template's first source (the second is the values files' repository).
func parseAppSet(b []byte) (*appSetSource, error) {
	var set struct {
		Spec struct {
			Template struct {
				Spec struct {
					Sources []struct {
						RepoURL string `json:"repoURL"`
						Path    string `json:"path"`
						Chart   string `json:"chart"`
						Helm    *struct {
							ReleaseName string `json:"releaseName"`
						} `json:"helm"`
					} `json:"sources"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &set); err != nil {
		return nil, err
	}
	srcs := set.Spec.Template.Spec.Sources
	if len(srcs) == 0 {
		return nil, nil
	}
	if srcs[0].Helm == nil {
		return &appSetSource{RepoURL: srcs[0].RepoURL, Path: srcs[0].Path, Kustomize: true}, nil
	}
	return &appSetSource{RepoURL: srcs[0].RepoURL, Path: srcs[0].Path, Chart: srcs[0].Chart, Release: srcs[0].Helm.ReleaseName}, nil
}

// centralJobs are the Applications whose chart, revision, namespace or
// values differ between the sides (central topology).
func centralJobs(base, head centralSide, baseIDs, headIDs clustersByID) ([]manifestJob, error) {
	clusters, err := changedClusters(base.files, head.files)
	if err != nil {
		return nil, err
	}
	b, err := centralApps(base, clusters, baseIDs.kubeVersion)
	if err != nil {
		return nil, err
	}
	h, err := centralApps(head, clusters, headIDs.kubeVersion)
	if err != nil {
		return nil, err
	}
	var jobs []manifestJob
	all := maps.Clone(b)
	maps.Copy(all, h)
	for _, key := range slices.Sorted(maps.Keys(all)) {
		ba, ha := b[key], h[key]
		if ba != nil && ha != nil && sameApplication(ba, ha) {
			continue
		}
		cluster, comp, _ := strings.Cut(key, " ")
		jobs = append(jobs, manifestJob{cluster: cluster, app: comp, base: ba, head: ha})
	}
	return jobs, nil
}

func sameApplication(a, b *application) bool {
	x, err1 := yaml.Marshal(a)
	y, err2 := yaml.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
