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

// TestOtherEnvFindsWords holds otherEnv to its definition: the first
// environment in sort order, other than the cluster's own, that is one of
// the name's words as strings.FieldsFunc splits them at - . _ + @.
func TestOtherEnvFindsWords(t *testing.T) {
	byWords := func(name, own string, envs map[string]bool) string {
		words := map[string]bool{}
		for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r < 0x80 && nameSeparator(byte(r)) }) {
			words[w] = true
		}
		var found []string
		for e := range envs {
			if e != own && words[strings.ToLower(e)] {
				found = append(found, e)
			}
		}
		sort.Strings(found)
		if len(found) == 0 {
			return ""
		}
		return found[0]
	}
	envs := map[string]bool{"production": true, "staging": true, "integration": true, "Prod": true, "stag": true, "a-b": true}
	names := []string{"production-us-east-1-mc01", "staging", "aws+staging@example.com", "prod-x", "xproduction", "productionx",
		"staging-production", "a-b", "x.stag.y", "stagingstaging", "-staging-", "integration_", "é-staging", "production-staging-integration",
		"hypershift-oidc-staging-eu-west-1-mc01", "", "staging-", "stagin", "staging@", "sta", "integration-staging.production"}
	n := 0
	for _, name := range names {
		for own := range envs {
			got, want := otherEnv(name, own, envs), byWords(name, own, envs)
			if got != want {
				t.Errorf("otherEnv(%q, own %q) = %q, want %q", name, own, got, want)
			}
			if want != "" {
				n++
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d cases name another environment", n)
	}
}
