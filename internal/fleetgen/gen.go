package fleetgen

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"testing/fstest"
)

// Options size a generated fleet.
type Options struct {
	Sectors           int // at least 1; the first is a staging sector
	RegionsPerSector  int
	ClustersPerRegion int // including the one regional cluster; at least 2
}

// realRegions are used first; beyond them, synthetic region names are
// declared in additional_regions.
var realRegions = []string{
	"us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "eu-west-1", "eu-west-2",
	"eu-west-3", "eu-central-1", "eu-central-2", "eu-north-1", "eu-south-1", "eu-south-2",
	"ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-northeast-1",
	"ap-northeast-2", "ap-northeast-3", "ap-south-1", "ap-south-2", "ap-east-1", "sa-east-1",
	"me-south-1", "me-central-1", "af-south-1", "il-central-1",
}

// Charts are the charts a generated fleet's repository owns (charts/<name>).
var Charts = []string{"cluster-lifecycle-manager", "hypershift-operator", "observability", "platform-api"}

var directions = []string{"north", "south", "east", "west", "central", "northeast", "southeast", "northwest", "southwest"}

// Files is a generated fleet: path (under the repository root) → content.
type Files map[string][]byte

// Paths returns the file paths in sorted order.
// FS is the files as an in-memory file system, as fleet.Load and
// render.FromFS take one.
func (f Files) FS() fstest.MapFS {
	fsys := make(fstest.MapFS, len(f))
	for p, b := range f {
		fsys[p] = &fstest.MapFile{Data: b}
	}
	return fsys
}

func (f Files) Paths() []string {
	out := make([]string, 0, len(f))
	for p := range f {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func regionName(i int) (string, bool) {
	if i < len(realRegions) {
		return realRegions[i], false
	}
	i -= len(realRegions)
	return fmt.Sprintf("xa-%s-%d", directions[i%len(directions)], 1+i/len(directions)), true
}

// Generate returns the files of a fleet with the given shape.
func Generate(o Options) Files {
	if o.Sectors < 1 {
		o.Sectors = 1
	}
	if o.ClustersPerRegion < 2 {
		o.ClustersPerRegion = 2
	}
	files := Files{}
	put := func(p, s string) { files[path.Join("config", p)] = []byte(s) }
	var extra []string
	nRegions := o.Sectors * o.RegionsPerSector
	for i := 0; i < nRegions; i++ {
		if name, synthetic := regionName(i); synthetic {
			extra = append(extra, name)
		}
	}
	put("global/00-platform.yaml", globalPlatform(extra))
	put("global/10-components.yaml", globalComponents)
	for s := 0; s < o.Sectors; s++ {
		put(fmt.Sprintf("sectors/%s.yaml", sectorName(s)), sectorFile(s))
	}
	for i := 0; i < nRegions; i++ {
		region, _ := regionName(i)
		sector := i / max(o.RegionsPerSector, 1)
		put(fmt.Sprintf("regions/%s.yaml", region), regionFile(i, sectorName(sector)))
		put(fmt.Sprintf("clusters/%s/regional.yaml", region), regionalFile(i))
		for c := 1; c < o.ClustersPerRegion; c++ {
			put(fmt.Sprintf("clusters/%s/mc%02d.yaml", region, c), managementFile(i, c))
		}
	}
	return files
}

func sectorName(s int) string {
	if s == 0 {
		return "stage"
	}
	return fmt.Sprintf("sector-%d", s)
}

func globalPlatform(extra []string) string {
	var b strings.Builder
	b.WriteString(`# Generated fleet: platform-wide defaults.
account:
  id_ref: ssm:///platform/accounts/${environment}/${region}/${cluster}
  ou: /platform/${environment}/${region}/${cluster_type}
  email: aws+${environment}-${region}-${cluster}@platform.example.com
network:
  vpc_cidr: 10.0.0.0/16
  private_subnets: [10.0.0.0/19, 10.0.32.0/19, 10.0.64.0/19]
  public_subnets: [10.0.96.0/22, 10.0.100.0/22, 10.0.104.0/22]
  availability_zones: 3
eks:
  version: "1.33"
  node_instance_family: m6i
  node_instance_size: 2xlarge
  node_min: 3
  node_max: 12
hypershift:
  oidc_bucket: hypershift-oidc-${environment}-${region}-${cluster}
  operator_image: quay.io/platform/hypershift-operator@sha256:` + strings.Repeat("4f1c", 16) + `
platform_api:
  domain: api.${region}.hcp.example.com
  zone_delegated: true
etcd_backup:
  account:
    email: aws+${environment}-${region}-dr@example.com
    ou: /platform/${environment}/${region}/dr
tags:
  platform: hcp
  managed-by: regionctl
  environment: ${environment}
gitops:
  runner_image: registry.platform.example.com/platform/regionctl@sha256:` + strings.Repeat("7e2a", 16) + `
  approvers:
    - arn:aws:iam::123456789012:role/platform-approvers
`)
	if len(extra) > 0 {
		b.WriteString("additional_regions:\n")
		for _, r := range extra {
			b.WriteString("  - " + r + "\n")
		}
	}
	return b.String()
}

const globalComponents = `# Generated fleet: component releases.
components:
  argo-cd:
    runs_on: [regional, management]
    chart:
      git_url: https://github.com/argoproj/argo-cd.git
      path: manifests/cluster-install
      type: kustomize
    chart_revision: v3.6.1
    namespace: argocd
  platform-api:
    runs_on: [regional]
    chart_revision: platform-api/v2.14.0
    values:
      replicas: 3
  cluster-lifecycle-manager:
    runs_on: [regional]
    chart_revision: cluster-lifecycle-manager/v1.9.2
    namespace: clm
    values:
      replicas: 2
  maestro-agent:
    runs_on: [management]
    chart:
      git_url: https://github.com/openshift-online/maestro.git
      path: charts/maestro-agent
    chart_revision: v0.8.1
    namespace: maestro
    values:
      serviceAccount:
        name: maestro-agent
  hypershift-operator:
    runs_on: [management]
    chart_revision: hypershift-operator/v0.1.58
    namespace: hypershift
    values:
      replicas: 2
  observability:
    runs_on: [regional, management]
    chart_revision: observability/v3.2.0
    values:
      retention: 15d
`

func sectorFile(s int) string {
	env := "production"
	if s == 0 {
		env = "staging"
	}
	out := fmt.Sprintf("# Generated sector %d.\norder: %d\nenvironment: %s\nsoak: %dh\nmax_update: 25%%\n", s, s, env, 24*(s+1))
	if s == 0 {
		// A rollout pin: stage runs a newer operator and EKS version first.
		out += "eks:\n  version: \"1.34\"\nhypershift:\n  operator_image: quay.io/platform/hypershift-operator@sha256:" + strings.Repeat("9b8a", 16) + "\n"
	}
	if s%2 == 1 {
		out += "eks:\n  node_instance_family: m7i\n"
	}
	out += fmt.Sprintf("tags:\n  wave: \"%d\"\n", s)
	return out
}

func regionFile(i int, sector string) string {
	out := fmt.Sprintf("# Generated region %d.\nsector: %s\n", i, sector)
	switch i % 4 {
	case 1:
		out += "eks:\n  node_max: 24\n"
	case 2:
		out += "network:\n  availability_zones: 2\n"
	case 3:
		out += "tags:\n  cost-center: null\n  team: region-" + fmt.Sprint(i) + "\n"
	}
	return out
}

func regionalFile(i int) string {
	return fmt.Sprintf(`# Generated regional cluster of region %d.
type: regional
network:
  vpc_cidr: 10.128.0.0/16
  private_subnets: [10.128.0.0/19, 10.128.32.0/19]
  public_subnets: [10.128.96.0/22, 10.128.100.0/22]
eks:
  node_instance_family: m7i
  node_max: 9
`, i)
}

func managementFile(i, c int) string {
	out := fmt.Sprintf("# Generated management cluster %d of region %d.\ntype: management\n", c, i)
	if c > 1 {
		// A VPC of its own (the first takes the global one): the
		// management clusters of a region do not overlap.
		out += fmt.Sprintf("network:\n  vpc_cidr: 10.%[1]d.0.0/16\n  private_subnets: [10.%[1]d.0.0/19, 10.%[1]d.32.0/19, 10.%[1]d.64.0/19]\n  public_subnets: [10.%[1]d.96.0/22, 10.%[1]d.100.0/22, 10.%[1]d.104.0/22]\n", c-1)
	}
	switch {
	case c%7 == 3:
		out += "eks:\n  node_instance_family: r6i\n  node_instance_size: 4xlarge\n  node_max: 30\ncomponents:\n  hypershift-operator:\n    values:\n      replicas: 3\n"
	case c%5 == 4:
		out += "tags:\n  cell: c" + fmt.Sprint(c) + "\n"
	}
	if c == 9 && i%10 == 0 {
		out += "delete: true\n"
	}
	if c == 10 && i%20 == 0 {
		out += "delete: true\ndelete_pipeline: true\n"
	}
	return out
}
