package ekscalendar_test

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/ekscalendar"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/schema"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestTheCalendarSaysWhatAWSSays: rows as AWS's release calendar gives
// them (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html,
// the release calendar), and each row's dates in order.
func TestTheCalendarSaysWhatAWSSays(t *testing.T) {
	c, err := ekscalendar.Load()
	if err != nil {
		t.Fatal(err)
	}
	for v, ext := range map[string]string{"1.30": "2026-07-23", "1.31": "2026-11-26", "1.32": "2027-03-23", "1.34": "2027-12-02"} {
		if r, ok := c.Lookup(v); !ok || r.EndOfExtendedSupport != ext || r.Source != "aws" {
			t.Errorf("%s: %+v; want extended support to end %s, from AWS's calendar", v, r, ext)
		}
	}
	for _, r := range c.Versions {
		if !day(r.Release).Before(day(r.EndOfStandardSupport)) || !day(r.EndOfStandardSupport).Before(day(r.EndOfExtendedSupport)) {
			t.Errorf("%s: dates out of order: %+v", r.Version, r)
		}
	}
	if c.Versions[0].Version != "1.35" {
		t.Errorf("newest first: %s", c.Versions[0].Version)
	}
}

func fleetWith(t *testing.T, global, canary string) *config.Fleet {
	t.Helper()
	files := fstest.MapFS{
		"config/global/defaults.yaml":             {Data: []byte("account:\n  id_ref: ssm:///a/${region}/${cluster}\n  ou: /p/${region}\nnetwork:\n  vpc_cidr: 10.0.0.0/16\n  private_subnets: [10.0.0.0/19, 10.0.32.0/19]\neks:\n  version: \"" + global + "\"\n  node_instance_family: m6i\nplatform_api:\n  domain: api.${region}.example.com\netcd_backup:\n  account:\n    email: aws+${region}@example.com\n    ou: /p/${region}/dr\ngitops:\n  approvers: [arn:aws:iam::123456789012:role/approvers]\n  runner_image: registry.example.com/r@sha256:1111111111111111111111111111111111111111111111111111111111111111\n")},
		"config/sectors/stage.yaml":               {Data: []byte("order: 0\nenvironment: staging\n")},
		"config/regions/us-west-2.yaml":           {Data: []byte("sector: stage\n")},
		"config/clusters/us-west-2/regional.yaml": {Data: []byte("type: regional\n")},
		"config/clusters/us-west-2/mc01.yaml":     {Data: []byte("type: management\n")},
		"config/clusters/us-west-2/mc02.yaml":     {Data: []byte("type: management\nnetwork:\n  vpc_cidr: 10.1.0.0/16\n  private_subnets: [10.1.0.0/19, 10.1.32.0/19]\neks:\n  version: \"" + canary + "\"\n")},
		"config/clusters/us-west-2/mc03.yaml":     {Data: []byte("type: management\ndelete: true\nnetwork:\n  vpc_cidr: 10.2.0.0/16\n  private_subnets: [10.2.0.0/19, 10.2.32.0/19]\neks:\n  version: \"1.20\"\n")},
	}
	checker, err := schema.New(schema.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := fleet.Load(files, "config", checker)
	if diags.HasErrors() {
		t.Fatalf("fixture: %v", diags)
	}
	return f
}

// TestCheckAtADate: past extended support is an error at the line that sets
// the version, within 90 days a warning, a version newer than the calendar
// a warning, an older one an error; a cluster being deleted is not held.
func TestCheckAtADate(t *testing.T) {
	c, err := ekscalendar.Load()
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		severity diag.Severity
		file     string
		summary  string
	}
	cases := []struct {
		name, global, canary, at string
		want                     []want
	}{
		{"all supported", "1.33", "1.34", "2026-11-27", nil},
		{"extended support over", "1.31", "1.34", "2026-11-27", []want{{diag.Error, "config/global/defaults.yaml", "EKS 1.31's extended support ended on 2026-11-26 (checked at 2026-11-27, the test's date); move to 1.34 or later"}}},
		{"the day before it ends", "1.31", "1.34", "2026-11-25", []want{{diag.Warning, "config/global/defaults.yaml", "EKS 1.31's extended support ends on 2026-11-26, in 1 days"}}},
		{"91 days before", "1.31", "1.34", "2026-08-27", nil},
		{"a canary newer than the calendar", "1.33", "1.36", "2026-11-27", []want{{diag.Warning, "config/clusters/us-west-2/mc02.yaml", "EKS 1.36 is newer than regionctl's support calendar"}}},
		{"older than the calendar", "1.33", "1.27", "2026-11-27", []want{{diag.Error, "config/clusters/us-west-2/mc02.yaml", "EKS 1.27 is past its end of extended support"}}},
		{"not released yet", "1.33", "1.35", "2025-12-01", []want{{diag.Error, "config/clusters/us-west-2/mc02.yaml", "EKS 1.35 is not on EKS before 2026-01-27"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := c.Check(fleetWith(t, tc.global, tc.canary), day(tc.at), "the test's date")
			if len(ds) != len(tc.want) {
				t.Fatalf("%d diagnostics, want %d: %v", len(ds), len(tc.want), ds)
			}
			for i, w := range tc.want {
				d := ds[i]
				if d.Severity != w.severity || d.Pos.File != w.file || d.Pos.Line == 0 || !strings.Contains(d.Summary, w.summary) {
					t.Errorf("got %v %s:%d %q; want %v %s %q", d.Severity, d.Pos.File, d.Pos.Line, d.Summary, w.severity, w.file, w.summary)
				}
			}
		})
	}
}
