package iam

import (
	"fmt"
	"slices"
	"strings"
)

// CheckIsolation enforces the isolation rules on a region's documents:
// every Allow statement of the pipeline policy is conditioned on
// aws:RequestedRegion = region unless all its actions are GlobalOnly (which
// must then be scoped to the region by resource or request tag, or be
// GlobalReadOnly); the deploy role trusts only the region's pipeline role
// and only with the region's ExternalId.
func CheckIsolation(region string, policy, trust Document) []string {
	var problems []string
	for i, s := range policy.Statement {
		if s.Effect != "Allow" {
			continue
		}
		name := fmt.Sprintf("pipeline policy statement %d (%s)", i, s.Sid)
		if len(s.NotAction) > 0 || len(s.NotResource) > 0 {
			problems = append(problems, name+": Allow with NotAction or NotResource grants too much")
			continue
		}
		if regions := s.Condition["StringEquals"]["aws:RequestedRegion"]; len(regions) > 0 {
			if !slices.Equal(regions, Strings{region}) {
				problems = append(problems, fmt.Sprintf("%s: conditioned on regions %v, not only %s", name, regions, region))
			}
			continue
		}
		for _, a := range s.Action {
			if !slices.Contains(GlobalOnly, a) {
				problems = append(problems, fmt.Sprintf("%s: %s is not conditioned on aws:RequestedRegion = %s and is not a listed global-only action", name, a, region))
			}
		}
		scoped := s.Condition["StringEquals"]["aws:RequestTag/"+RegionTag] != nil
		for _, r := range s.Resource {
			if r != "*" && strings.Contains(r, region) {
				scoped = true
			}
		}
		readOnly := true
		for _, a := range s.Action {
			readOnly = readOnly && slices.Contains(GlobalReadOnly, a)
		}
		if !scoped && !readOnly {
			problems = append(problems, name+": global actions are not scoped to the region by resource or request tag")
		}
	}
	allows := 0
	for i, s := range trust.Statement {
		if s.Effect != "Allow" {
			continue
		}
		allows++
		name := fmt.Sprintf("deploy role trust statement %d (%s)", i, s.Sid)
		want := "arn:aws:iam::" + AccountIDPlaceholder + ":role/" + PipelineRoleName(region)
		if s.Principal == nil || len(s.Principal.Service) > 0 || !slices.Equal(s.Principal.AWS, Strings{want}) {
			problems = append(problems, fmt.Sprintf("%s: must trust exactly %s", name, want))
		}
		if !slices.Equal(s.Condition["StringEquals"]["sts:ExternalId"], Strings{ExternalID(region)}) {
			problems = append(problems, fmt.Sprintf("%s: must require sts:ExternalId = %s", name, ExternalID(region)))
		}
		if !slices.Equal(s.Action, Strings{"sts:AssumeRole"}) {
			problems = append(problems, name+": may allow only sts:AssumeRole")
		}
	}
	if allows != 1 {
		problems = append(problems, fmt.Sprintf("deploy role trust has %d Allow statements, want exactly 1", allows))
	}
	return problems
}
