package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
)

// CheckFleet applies #Fleet: every region is a known AWS region (or listed
// in additional_regions) with exactly one regional cluster and 1 to 20
// management clusters.
func (c *Checker) CheckFleet(f *config.Fleet) diag.Diagnostics {
	w := c.pool[0]
	extra := []string{}
	if v := f.Global.Get("additional_regions"); v != nil && v.Kind == config.List {
		for _, it := range v.Items {
			if it.Kind == config.String {
				extra = append(extra, it.Str)
			}
		}
	}
	regions := map[string]*regionData{}
	files := map[string]map[string][]diag.Related{}
	for _, r := range f.Regions {
		regions[r.Name] = &regionData{Regional: []string{}, Management: []string{}}
		files[r.Name] = map[string][]diag.Related{}
	}
	incomplete := map[string]bool{}
	for _, cl := range f.Clusters {
		rd := regions[cl.Region.Name]
		if cl.Type == "" || cl.Doc.InvalidPaths["type"] {
			incomplete[cl.Region.Name] = true // its count would mislead
		}
		rel := diag.Related{Pos: diag.Pos{File: cl.Doc.File}, Message: fmt.Sprintf("%s cluster %s", cl.Type, cl.Name)}
		switch cl.Type {
		case "regional":
			rd.Regional = append(rd.Regional, cl.Name)
			files[cl.Region.Name]["regional"] = append(files[cl.Region.Name]["regional"], rel)
		case "management":
			rd.Management = append(rd.Management, cl.Name)
			files[cl.Region.Name]["management"] = append(files[cl.Region.Name]["management"], rel)
		}
	}
	if w.fleetHolds(extra, regions) {
		return nil
	}
	err := w.fleetErr(extra, regions)
	var diags diag.Diagnostics
	seen := map[string]bool{}
	regionFile := map[string]*config.Region{}
	for _, r := range f.Regions {
		regionFile[r.Name] = r
	}
	for _, e := range errors.Errors(err) {
		p := cuePath(e.Path())
		if len(p) < 3 || p[0] != "regions" || seen[p[1]+"/"+p[2]] {
			continue
		}
		seen[p[1]+"/"+p[2]] = true
		r := regionFile[p[1]]
		if r == nil || (incomplete[p[1]] && p[2] != "exists") {
			continue
		}
		at := diag.Pos{File: r.Doc.File}
		rd := regions[p[1]]
		var d diag.Diagnostic
		switch p[2] {
		case "exists":
			d = diag.Errorf(at, fmt.Sprintf("The file name of a region file is its AWS region. Known regions: %s. A region regionctl does not know yet goes into additional_regions in config/global/.", strings.Join(knownRegions(w), ", ")),
				"unknown AWS region %q", p[1])
		case "regional":
			d = diag.Errorf(at, "Each region runs exactly one regional cluster (type: regional) in config/clusters/"+p[1]+"/.",
				"region %s has %d regional clusters, needs exactly one", p[1], len(rd.Regional))
			d.Related = files[p[1]]["regional"]
		case "management":
			d = diag.Errorf(at, "Each region runs between 1 and 20 management clusters (type: management) in config/clusters/"+p[1]+"/; add a region to grow beyond that.",
				"region %s has %d management clusters, needs 1 to 20", p[1], len(rd.Management))
			d.Related = files[p[1]]["management"]
		default:
			format, args := e.Msg()
			d = diag.Errorf(at, fmt.Sprintf(format, args...), "region %s fails the fleet constraints", p[1])
		}
		diags = append(diags, d)
	}
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].Pos.File < diags[j].Pos.File })
	return diags
}

// regionData is a region as #Fleet sees it: its clusters' names by type.
type regionData struct {
	Regional   []string `json:"regional"`
	Management []string `json:"management"`
}

// fleetErr unifies the fleet's regions with #Fleet.
func (w *compiled) fleetErr(extra []string, regions map[string]*regionData) error {
	data := map[string]any{"additional_regions": extra, "regions": regions}
	return w.fleet.Unify(w.ctx.Encode(data)).Validate(cue.Concrete(true))
}

// fleetCueDigest is the SHA-256 of the schema/fleet.cue that fleetHolds
// was written from; when the embedded file differs, every fleet goes to
// CUE (TestFleetHoldsIsFleet says fleetHolds needs a look).
const fleetCueDigest = "0d68edb27473d2932ff4d97f57df70d7b0528e6e0467d29d7d4b3460d1bbea58"

// fleetHolds says, in Go, that a fleet visibly holds to #Fleet: every
// region known to the schema (#KnownRegions) or in additional_regions,
// with one regional cluster and 1 to 20 management clusters. A fleet it
// does not vouch for is unified with #Fleet by CUE, which finds and words
// what fails (at 2,200 clusters, CUE took about 15 ms a fleet, twice in a
// review). False when schema/fleet.cue is not the file it was written
// from (w.known is nil then). TestFleetHoldsIsFleet holds it to CUE.
func (w *compiled) fleetHolds(extra []string, regions map[string]*regionData) bool {
	if w.known == nil {
		return false
	}
	for name, rd := range regions {
		n := len(rd.Management)
		if (!w.known[name] && !slices.Contains(extra, name)) || len(rd.Regional) != 1 || n < 1 || n > 20 {
			return false
		}
	}
	return true
}

// knownIfCurrent is #KnownRegions as a set when fleet.cue is the file
// fleetHolds was written from, else nil (fleetHolds off).
func knownIfCurrent(w *compiled, fleetCue []byte) map[string]bool {
	if sum := sha256.Sum256(fleetCue); hex.EncodeToString(sum[:]) != fleetCueDigest {
		return nil
	}
	known := map[string]bool{}
	for _, r := range knownRegions(w) {
		known[r] = true
	}
	if len(known) == 0 {
		return nil
	}
	return known
}

func knownRegions(w *compiled) []string {
	var out []string
	_ = w.root.LookupPath(cue.ParsePath("#KnownRegions")).Decode(&out)
	return out
}

// CheckAWSAndFleets is CheckAWS (with skip) and then CheckFleet of each of
// fleets, their diagnostics in fleets' order, as those calls one after
// another give them. AWS's rules, Go alone, run for each fleet on a
// goroutine of its own while the fleet rules, one CUE evaluation each, run
// on one compiled schema: at 2,200 clusters a review's two sides took
// 50 ms of nearly one core for them, in the serial part of its load.
// Fleets must be distinct (CheckAWS marks a fleet's clusters Partial: two
// goroutines would write one cluster); a fleet given twice panics.
func (c *Checker) CheckAWSAndFleets(skip func(*config.Cluster) bool, fleets ...*config.Fleet) []diag.Diagnostics {
	for i, f := range fleets {
		if slices.Contains(fleets[:i], f) {
			panic("schema: CheckAWSAndFleets given one fleet twice")
		}
	}
	// Read #ZonesPerRegion before any goroutine needs it: it is read on
	// the compiled schema CheckFleet uses.
	c.zonesPerRegion()
	aws := make([]*par.Future[diag.Diagnostics], len(fleets))
	for i, f := range fleets {
		aws[i] = par.Go(func() diag.Diagnostics { return c.CheckAWS(f, skip) })
	}
	rules := make([]diag.Diagnostics, len(fleets))
	for i, f := range fleets {
		rules[i] = c.CheckFleet(f)
	}
	out := make([]diag.Diagnostics, len(fleets))
	for i := range fleets {
		out[i] = append(aws[i].Wait(), rules[i]...)
	}
	return out
}
