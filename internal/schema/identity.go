package schema

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
)

// identityName is a name that stands for one cluster's (or one region's)
// own AWS resources: the pipelines find an account by its name, and the
// deploy role keeps buckets by their names. A name that is another
// cluster's, or that names another region or environment, would have one
// cluster's pipeline reach for another's.
type identityName struct {
	path  []string // in the cluster's effective config
	what  string
	space string // names of one space must differ: AWS Organizations' account names, its e-mails, S3's bucket names
	owner string // "cluster": the name holds the cluster's name; "region": a region's (its DR account)
	types string // "": every cluster; else the one type that has it
}

var identityNames = []identityName{
	{[]string{"account", "name"}, "account name", "account name", "cluster", ""},
	{[]string{"account", "email"}, "account e-mail", "account e-mail", "cluster", ""},
	{[]string{"hypershift", "oidc_bucket"}, "OIDC bucket", "bucket", "cluster", "management"},
	{[]string{"etcd_backup", "account", "name"}, "DR account name", "account name", "region", "regional"},
	{[]string{"etcd_backup", "account", "email"}, "DR account e-mail", "account e-mail", "region", "regional"},
}

// CheckIdentityNames holds each cluster's identity names to its own: a
// cluster's hold its name (its region and environment may be shortened:
// AWS account names are at most 50 characters), none names another known
// region or another environment of the fleet, and none is another
// cluster's (a region's DR account: another region's). Clusters skip
// reports true for are left out, as Partial ones are.
func (c *Checker) CheckIdentityNames(f *config.Fleet, skip func(*config.Cluster) bool) diag.Diagnostics {
	regions, envs := c.knownNames(f)
	type use struct {
		cl   *config.Cluster
		at   diag.Pos
		path string
	}
	seen := map[string]use{}
	var diags diag.Diagnostics
	clusters := append([]*config.Cluster(nil), f.Clusters...)
	sort.Slice(clusters, func(i, j int) bool { return clusters[i].ID() < clusters[j].ID() })
	for _, cl := range clusters {
		if cl.Effective == nil {
			continue
		}
		// A skipped cluster (checked before, unchanged) is not reported on,
		// but its names are still taken.
		quiet := cl.Partial || (skip != nil && skip(cl))
		env, region := cl.Environment(), cl.Region.Name
		for _, n := range identityNames {
			if n.types != "" && n.types != cl.Type {
				continue
			}
			v := cl.Effective.Lookup(n.path...)
			if v == nil || v.Kind != config.String || v.Str == "" {
				continue
			}
			name, path := strings.ToLower(v.Str), strings.Join(n.path, ".")
			fail := func(detail, summary string, args ...any) {
				if quiet {
					return
				}
				d := diag.Errorf(v.Origin.Pos, detail, summary, args...)
				d.Path = path
				diags = append(diags, d)
				cl.Partial = true
			}
			if n.owner == "cluster" && !strings.Contains(name, strings.ToLower(cl.Name)) {
				fail(fmt.Sprintf("The pipelines find the %s by name, so a cluster's names carry its own name (the default does: ${environment}-${region}-${cluster}; a region or environment may be shortened). Put ${cluster} in it.", n.what),
					"%s: %s %s does not name the cluster %s", cl.ID(), path, v.Str, cl.Name)
				continue
			}
			if other := regions.otherName(name, region); other != "" {
				fail(fmt.Sprintf("A %s of %s names the region %s: the pipelines of one region reach only their own region's names.", n.what, region, other),
					"%s: %s %s names another region, %s", cl.ID(), path, v.Str, other)
				continue
			}
			if other := otherEnv(name, env, envs); other != "" {
				fail(fmt.Sprintf("A %s of the %s environment names the %s environment.", n.what, env, other),
					"%s: %s %s names another environment, %s", cl.ID(), path, v.Str, other)
				continue
			}
			key := n.space + "\x00" + name
			if first, ok := seen[key]; ok {
				if quiet || n.owner == "region" && first.cl.Region == cl.Region && first.path == path {
					continue
				}
				d := diag.Errorf(v.Origin.Pos, fmt.Sprintf("Each cluster (and each region's DR account) has an %s of its own; two with one would share an account or a bucket, and one's pipeline would act on the other's.", n.what),
					"%s: %s %s is also %s's %s", cl.ID(), path, v.Str, first.cl.ID(), first.path)
				d.Path = path
				d.Related = []diag.Related{{Pos: first.at, Message: fmt.Sprintf("%s of %s", first.path, first.cl.ID())}}
				diags = append(diags, d)
				cl.Partial = true
				continue
			}
			seen[key] = use{cl, v.Origin.Pos, path}
		}
	}
	return diags
}

// knownNames are the region names (AWS's, and the fleet's) and the
// environments a cluster's names may not name unless they are its own.
func (c *Checker) knownNames(f *config.Fleet) (*regionNames, map[string]bool) {
	regions, envs := map[string]bool{}, map[string]bool{}
	for r := range c.zonesPerRegion() {
		regions[r] = true
	}
	for _, r := range f.Regions {
		regions[r.Name] = true
	}
	for _, cl := range f.Clusters {
		if e := cl.Environment(); e != "" {
			envs[e] = true
		}
	}
	return newRegionNames(regions), envs
}

// regionNames are the region names a cluster's names may hold only when
// they are its own, with what finds them in a name quickly.
type regionNames struct {
	names   map[string]bool
	lengths []int // the lengths of names, each once
	// dashAt2 says every name has '-' third (us-east-1, as #RegionName
	// has it), so a place in a name where none is starts none of them.
	dashAt2 bool
}

func newRegionNames(names map[string]bool) *regionNames {
	r := &regionNames{names: names, dashAt2: true}
	seen := map[int]bool{}
	for n := range names {
		if !seen[len(n)] {
			seen[len(n)] = true
			r.lengths = append(r.lengths, len(n))
		}
		r.dashAt2 = r.dashAt2 && len(n) > 2 && n[2] == '-'
	}
	return r
}

// otherName is the first (in sort order) region name that name holds and
// that is not own (nor part of own, as us-east-1 is not of us-east-10), or
// "". It looks up what each place of the name starts rather than
// searching the name for every region: a fleet's 900 regions cost no more
// than its 30.
func (r *regionNames) otherName(name, own string) string {
	rest := strings.ReplaceAll(name, own, "")
	found := ""
	for i := range len(rest) {
		if r.dashAt2 && (i+2 >= len(rest) || rest[i+2] != '-') {
			continue
		}
		for _, l := range r.lengths {
			if i+l > len(rest) {
				continue
			}
			if c := rest[i : i+l]; c != own && r.names[c] && (found == "" || c < found) {
				found = c
			}
		}
	}
	return found
}

// otherEnv is another environment of the fleet that name holds as a word
// (between separators), or "": the first in sort order.
func otherEnv(name, own string, envs map[string]bool) string {
	found := ""
	for e := range envs {
		if e != own && (found == "" || e < found) && hasWord(name, strings.ToLower(e)) {
			found = e
		}
	}
	return found
}

// nameSeparator says b separates the words of a name.
func nameSeparator(b byte) bool { return b == '-' || b == '.' || b == '_' || b == '+' || b == '@' }

// hasWord says w is one of name's words: all of the text between two
// separators (or an end). A w holding a separator is no word.
func hasWord(name, w string) bool {
	if w == "" || strings.ContainsFunc(w, func(r rune) bool { return r < 0x80 && nameSeparator(byte(r)) }) {
		return false
	}
	for i := 0; i <= len(name)-len(w); {
		j := strings.Index(name[i:], w)
		if j < 0 {
			return false
		}
		j += i
		if (j == 0 || nameSeparator(name[j-1])) && (j+len(w) == len(name) || nameSeparator(name[j+len(w)])) {
			return true
		}
		i = j + 1
	}
	return false
}
