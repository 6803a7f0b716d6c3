package schema

import (
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// naiveOtherName is the rule regionNames.otherName keeps, as first
// written: search the name for every region.
func naiveOtherName(name, own string, regions map[string]bool) string {
	rest := strings.ReplaceAll(name, own, "")
	var found []string
	for r := range regions {
		if r != own && strings.Contains(rest, r) {
			found = append(found, r)
		}
	}
	sort.Strings(found)
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// TestOtherNameIsTheSearch holds otherName's lookup of each place of a name
// to searching the name for every region, over names built of region
// names, their parts and separators, with region sets of one shape
// (us-east-1) and of any shape.
func TestOtherNameIsTheSearch(t *testing.T) {
	shaped := map[string]bool{}
	for _, r := range []string{"us-east-1", "us-east-10", "us-east-2", "eu-west-1", "us-gov-west-1", "us-isob-east-1", "ap-south-1", "xa-central-7", "xa-central-70"} {
		shaped[r] = true
	}
	anyShape := map[string]bool{"east": true, "e": true, "us-east-1": true, "1-eu": true, "prod-x": true}
	parts := []string{"us", "east", "-", "1", "10", "eu-west-1", "us-east-1", "us-east-10", "xa-central-7", "prod", "x", "e", "0", "us-gov-west-1", "-dr", "ap-south-1"}
	rng := rand.New(rand.NewPCG(1, 2))
	checked, found := 0, 0
	for _, regions := range []map[string]bool{shaped, anyShape} {
		r := newRegionNames(regions)
		owns := append([]string{""}, func() (out []string) {
			for n := range regions {
				out = append(out, n)
			}
			return out
		}()...)
		for range 20000 {
			var b strings.Builder
			for range 1 + rng.IntN(6) {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
			name, own := b.String(), owns[rng.IntN(len(owns))]
			want, got := naiveOtherName(name, own, regions), r.otherName(name, own)
			if got != want {
				t.Fatalf("otherName(%q, own %q) = %q, the search finds %q", name, own, got, want)
			}
			checked++
			if want != "" {
				found++
			}
		}
	}
	if found < checked/10 || found > checked*9/10 {
		t.Errorf("%d of %d names hold another region: the cases exercise too little", found, checked)
	}
}
