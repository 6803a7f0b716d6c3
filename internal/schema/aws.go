package schema

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"cuelang.org/go/cue"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
)

// maxUserTags is how many tags a cluster's layers may give: AWS allows 50 per
// resource, and regionctl adds regionctl:cluster, Name and a kubernetes.io
// subnet role to some.
const maxUserTags = 47

// RoleSuffixes are the suffixes of the IAM roles the Terraform roots name
// <region>-<cluster>-<suffix>, by cluster type; a test in terraform/ holds
// this list to the roots.
var RoleSuffixes = map[string][]string{
	"regional":   {"cluster", "node", "ebs-csi", "bootstrap", "lb-controller", "maestro-server", "bootstrap-ecs", "ext-secrets", "health"},
	"management": {"cluster", "node", "ebs-csi", "bootstrap", "lb-controller", "hypershift", "external-dns", "cert-manager", "etcd-backup", "maestro-agent", "bootstrap-ecs", "ext-secrets", "health"},
}

// maxRoleName is IAM's limit on a role's name.
const maxRoleName = 64

// CheckAWS applies the rules AWS (or the Terraform provider in front of it)
// applies at apply time that a pattern cannot state, to every checked cluster
// that skip does not name (a nil skip names none):
//
//   - the VPC CIDR and every subnet are network addresses (no host bits);
//   - the VPC and every subnet are /16 to /28;
//   - every subnet lies inside the VPC and overlaps no other subnet;
//   - availability_zones is at most what the region has (#ZonesPerRegion);
//   - the layers give at most 47 tags;
//   - the IAM role names the roots derive from region and cluster fit IAM;
//   - the VPCs of a region's management clusters do not overlap, unless
//     one of the two sets network.allow_overlap.
//
// Call it after CheckClusters, which adds the schema's defaults; clusters
// that failed a check (Partial) are skipped, and clusters that fail one
// here are marked Partial.
func (c *Checker) CheckAWS(f *config.Fleet, skip func(*config.Cluster) bool) diag.Diagnostics {
	zones := c.zonesPerRegion()
	var diags diag.Diagnostics
	type vpc struct {
		cl     *config.Cluster
		prefix netip.Prefix
		at     diag.Pos
		own    bool // allow_overlap
	}
	byRegion := map[string][]vpc{}
	checked := map[string]bool{}
	// Each cluster's own rules on every core (checkCluster reads only
	// its cluster), their findings then taken in the fleet's order.
	per := make([]diag.Diagnostics, len(f.Clusters))
	ran := make([]bool, len(f.Clusters))
	par.Do(len(f.Clusters), func(i int) {
		if cl := f.Clusters[i]; !cl.Partial && cl.Effective != nil && (skip == nil || !skip(cl)) {
			per[i], ran[i] = checkCluster(cl, zones), true
		}
	})
	for i, cl := range f.Clusters {
		if !ran[i] {
			continue
		}
		checked[cl.Region.Name] = true
		ds := per[i]
		for i := range ds {
			ds[i].Detail = fmt.Sprintf("%s (cluster %s)", ds[i].Detail, cl.ID())
		}
		diags = append(diags, ds...)
		if ds.HasErrors() {
			cl.Partial = true
		}
	}
	for _, cl := range f.Clusters {
		if cl.Partial || cl.Effective == nil || cl.Type != "management" || !checked[cl.Region.Name] {
			continue
		}
		v := cl.Effective.Lookup("network", "vpc_cidr")
		if v == nil || v.Kind != config.String {
			continue
		}
		p, err := netip.ParsePrefix(v.Str)
		if err != nil {
			continue
		}
		own := false
		if a := cl.Effective.Lookup("network", "allow_overlap"); a != nil && a.Kind == config.Bool {
			own = a.Bool
		}
		byRegion[cl.Region.Name] = append(byRegion[cl.Region.Name], vpc{cl, p, v.Origin.Pos, own})
	}
	for _, vs := range byRegion {
		sort.Slice(vs, func(i, j int) bool { return vs[i].cl.Name < vs[j].cl.Name })
		for i, a := range vs {
			if a.own {
				continue
			}
			for _, b := range vs[:i] {
				if b.own || !a.prefix.Overlaps(b.prefix) {
					continue
				}
				d := diag.Errorf(a.at,
					fmt.Sprintf("The management clusters of a region get VPCs apart from each other, so that they can be routed to one another later. Give cluster %s a vpc_cidr (and subnets) of its own, or set network.allow_overlap: true if its VPC is never routed to the others (PrivateLink only).", a.cl.ID()),
					"VPC %s of management cluster %s overlaps %s of %s", a.prefix, a.cl.Name, b.prefix, b.cl.Name)
				d.Path = "network.vpc_cidr"
				d.Related = []diag.Related{{Pos: b.at, Message: fmt.Sprintf("VPC of %s", b.cl.ID())}}
				diags = append(diags, d)
				a.cl.Partial = true
				break
			}
		}
	}
	return append(diags, c.CheckIdentityNames(f, skip)...)
}

// checkCluster applies the rules of one cluster's own config.
func checkCluster(cl *config.Cluster, zones map[string]int) diag.Diagnostics {
	var diags diag.Diagnostics
	eff := cl.Effective
	fail := func(v *config.Value, path, detail, summary string, args ...any) {
		d := diag.Errorf(v.Origin.Pos, detail, summary, args...)
		d.Path = path
		diags = append(diags, d)
	}
	network := eff.Get("network")
	checkBlocks(network, fail)
	if v := network.Get("availability_zones"); v != nil && v.Kind == config.Int {
		if n, known := zones[cl.Region.Name]; known && int(v.Int) > n {
			fail(v, "network.availability_zones", fmt.Sprintf("Region %s offers %d availability zones to new accounts (#ZonesPerRegion in schema/fleet.cue); the VPC module takes the first availability_zones of them and would fail at plan. Use at most %d.", cl.Region.Name, n, n),
				"%d availability zones, region %s has %d", v.Int, cl.Region.Name, n)
		}
	}
	// The longest role name decides, so that the length the message asks
	// for fits every role.
	if suffix := longest(RoleSuffixes[cl.Type]); suffix != "" {
		name := cl.Region.Name + "-" + cl.Name + "-" + suffix
		if len(name) > maxRoleName {
			d := diag.Errorf(diag.Pos{File: cl.Doc.File}, fmt.Sprintf("The Terraform roots name the cluster's IAM roles <region>-<cluster>-<role>, and IAM allows %d characters. Choose a cluster name of at most %d characters in this region.", maxRoleName, maxRoleName-len(cl.Region.Name)-len(suffix)-2),
				"IAM role name %s is %d characters, at most %d", name, len(name), maxRoleName)
			d.Path = "cluster"
			diags = append(diags, d)
		}
	}
	diags = append(diags, undelegated(cl)...)
	if t := eff.Get("tags"); t != nil && t.Kind == config.Map && len(t.Fields) > maxUserTags {
		fail(t, "tags", fmt.Sprintf("AWS allows 50 tags per resource and regionctl adds up to 3 of its own, so a cluster's layers may give at most %d. Drop some, or merge them into fewer keys.", maxUserTags),
			"%d tags, at most %d", len(t.Fields), maxUserTags)
	}
	return diags
}

// Delegation names, for a cluster type, the key of the zone its apply
// makes that a parent domain must delegate (platform_api.domain of a
// regional cluster, hypershift.public_zone of a management cluster) and the
// key that says the parent does.
func Delegation(clusterType string) (zone, flag string) {
	if clusterType == "management" {
		return "hypershift.public_zone", "hypershift.public_zone_delegated"
	}
	return "platform_api.domain", "platform_api.zone_delegated"
}

// undelegated warns of a zone the cluster's apply makes that the parent
// domain does not delegate yet: a regional cluster's platform API zone
// (platform_api.zone_delegated unset or false), whose apply then makes the
// zone and the certificate and serves nothing, since ACM validates a DNS
// record only where public DNS resolves it (ACM User Guide, "DNS
// validation"), so the region's management clusters cannot register and
// their Maestro agents cannot reach the broker's name; and a
// management cluster's public zone (hypershift.public_zone_delegated), in
// which hosted clusters' names do not resolve and cert-manager's DNS-01
// challenges fail until then. Warnings, not errors: a new cluster's first
// apply is what makes the zone to delegate.
func undelegated(cl *config.Cluster) diag.Diagnostics {
	zone, flag := Delegation(cl.Type)
	output, consequence := "platform_api_delegation",
		"ACM validates only records public DNS resolves, so until then neither the platform API nor the Maestro broker's name in that zone is served (the apply makes the zone and asks for their certificates, nothing more): management clusters cannot register and their Maestro agents cannot connect"
	if cl.Type == "management" {
		output, consequence = "public_zone_name_servers",
			"until then hosted clusters' names in it do not resolve and cert-manager's DNS-01 challenges in it fail"
	}
	z := cl.Effective.Lookup(strings.Split(zone, ".")...)
	if z == nil || z.Kind != config.String {
		return nil
	}
	if d := cl.Effective.Lookup(strings.Split(flag, ".")...); d != nil && d.Kind == config.Bool && d.Bool {
		return nil
	}
	w := diag.Errorf(z.Origin.Pos,
		fmt.Sprintf("The cluster's apply makes the zone %s; the parent domain must delegate it: %s. After the cluster's first apply, create NS records for %s in the parent domain with the name servers of the apply's output %s, then set %s: true in the cluster's layers.", z.Str, consequence, z.Str, output, flag),
		"zone %s is not delegated yet (cluster %s)", z.Str, cl.ID())
	w.Severity = diag.Warning
	w.Path = flag
	return diag.Diagnostics{w}
}

// checkBlocks holds a cluster's network blocks to AWS's rules: a VPC and
// subnet blocks it accepts, every subnet inside the VPC, no two subnets
// sharing an address.
func checkBlocks(network *config.Value, fail func(v *config.Value, path, detail, summary string, args ...any)) {
	var vpcPrefix netip.Prefix
	if v := network.Get("vpc_cidr"); v != nil && v.Kind == config.String {
		if p, ok := block(v, "network.vpc_cidr", "the VPC", fail); ok {
			vpcPrefix = p
		}
	}
	type subnet struct {
		v    *config.Value
		path string
		p    netip.Prefix
	}
	var subnets []subnet
	for _, key := range []string{"private_subnets", "public_subnets"} {
		l := network.Get(key)
		if l == nil || l.Kind != config.List {
			continue
		}
		for i, it := range l.Items {
			if it.Kind != config.String {
				continue
			}
			path := fmt.Sprintf("network.%s.%d", key, i)
			p, ok := block(it, path, "a subnet", fail)
			if !ok {
				continue
			}
			if vpcPrefix.IsValid() && (p.Bits() < vpcPrefix.Bits() || !vpcPrefix.Contains(p.Addr())) {
				fail(it, path, fmt.Sprintf("Every subnet is carved out of the VPC's CIDR %s; AWS refuses a subnet outside it. Choose a block inside %s.", vpcPrefix, vpcPrefix),
					"subnet %s is outside the VPC %s", p, vpcPrefix)
				continue
			}
			overlapped := false
			for _, o := range subnets {
				if !p.Overlaps(o.p) {
					continue
				}
				what := "overlaps"
				if p == o.p {
					what = "duplicates"
				}
				fail(it, path, fmt.Sprintf("Subnets of one VPC may not share addresses; AWS refuses the second. Give %s a block of its own.", path),
					"subnet %s %s %s (%s)", p, what, o.p, o.path)
				overlapped = true
				break
			}
			if !overlapped {
				subnets = append(subnets, subnet{it, path, p})
			}
		}
	}
}

// block parses a CIDR value the schema's pattern let through and checks the
// rules of a VPC or subnet block.
func block(v *config.Value, path, what string, fail func(*config.Value, string, string, string, ...any)) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(v.Str)
	if err != nil {
		fail(v, path, "Write the block as four decimal numbers without leading zeros and a prefix length, such as 10.0.0.0/16.",
			"%s is not a CIDR block", v.Str)
		return p, false
	}
	if m := p.Masked(); m != p {
		fail(v, path, fmt.Sprintf("A CIDR block starts at its network address; AWS refuses one with host bits set. Write %s.", m),
			"%s is not a network address", p)
		return p, false
	}
	if p.Bits() < 16 || p.Bits() > 28 {
		fail(v, path, fmt.Sprintf("AWS takes %s between /16 (65,536 addresses) and /28 (16).", what),
			"%s is /%d, AWS allows /16 to /28", p, p.Bits())
		return p, false
	}
	return p, true
}

// zonesPerRegion reads #ZonesPerRegion from the schema.
func (c *Checker) zonesPerRegion() map[string]int {
	c.zonesOnce.Do(func() {
		_ = c.pool[0].root.LookupPath(cue.ParsePath("#ZonesPerRegion")).Decode(&c.zones)
	})
	return c.zones
}

// longest is the longest of names (the first of those as long).
func longest(names []string) string {
	out := ""
	for _, n := range names {
		if len(n) > len(out) {
			out = n
		}
	}
	return out
}
