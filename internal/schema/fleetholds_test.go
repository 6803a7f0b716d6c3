package schema

import (
	"crypto/sha256"
	"fmt"
	"math/rand"
	"testing"
)

// TestFleetHoldsIsFleet holds fleetHolds to CUE's #Fleet: for thousands of
// random fleets (regions known, unknown and added by additional_regions,
// with 0 to 2 regional and 0 to 22 management clusters), it vouches for a
// fleet exactly when unifying it with #Fleet finds no error.
func TestFleetHoldsIsFleet(t *testing.T) {
	w, err := compileEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	src, err := loadSource()
	if err != nil {
		t.Fatal(err)
	}
	if w.known == nil {
		t.Fatalf("fleetHolds is off: schema/fleet.cue (SHA-256 %x) is not the file it was written from (%s); "+
			"every fleet now goes to CUE: bring fleetHolds (internal/schema/fleet.go) to the new #Fleet, set fleetCueDigest, and run this test",
			sha256.Sum256(src.files["fleet.cue"]), fleetCueDigest)
	}
	names := []string{"us-east-1", "eu-west-1", "us-gov-west-1", "xa-north-1", "xb-south-12", "us-east-9"}
	rnd := rand.New(rand.NewSource(1))
	counts := []int{0, 1, 1, 1, 2}
	managed := []int{0, 1, 2, 5, 19, 20, 21, 22}
	var held, valid int
	for i := 0; i < 3000; i++ {
		var extra []string
		for _, n := range names {
			if rnd.Intn(4) == 0 {
				extra = append(extra, n)
			}
		}
		regions := map[string]*regionData{}
		for _, n := range names {
			if rnd.Intn(2) == 0 {
				continue
			}
			rd := &regionData{Regional: []string{}, Management: []string{}}
			for j := counts[rnd.Intn(len(counts))]; j > 0; j-- {
				rd.Regional = append(rd.Regional, fmt.Sprintf("rc%d", j))
			}
			for j := managed[rnd.Intn(len(managed))]; j > 0; j-- {
				rd.Management = append(rd.Management, fmt.Sprintf("mc%02d", j))
			}
			regions[n] = rd
		}
		holds := w.fleetHolds(extra, regions)
		cueErr := w.fleetErr(extra, regions)
		if holds {
			held++
		}
		if cueErr == nil {
			valid++
		}
		if holds != (cueErr == nil) {
			counts := map[string]string{}
			for n, rd := range regions {
				counts[n] = fmt.Sprintf("%d regional, %d management", len(rd.Regional), len(rd.Management))
			}
			t.Errorf("extra %v, regions %v: fleetHolds says %v, CUE: %v", extra, counts, holds, cueErr)
		}
	}
	t.Logf("3000 fleets: CUE found %d valid, fleetHolds vouched for %d", valid, held)
	if valid < 100 || valid > 2900 {
		t.Errorf("3000 fleets, %d valid: the random fleets should be valid and invalid alike", valid)
	}
}
