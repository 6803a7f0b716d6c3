package pipeline

import (
	"strings"
	"testing"
)

func TestOnlyStepAndHolds(t *testing.T) {
	plan := func() *Plan {
		return &Plan{Pipeline: "regional", Steps: []Step{
			{Cluster: "eu-west-1/mc01", Name: "account"},
			{Cluster: "eu-west-1/mc01", Name: "assume-role", RoleARN: "arn:aws:iam::111111111111:role/ManagementClusterDeployRole", ExternalID: "x-1"},
			{Cluster: "eu-west-1/mc01", Name: "terraform", VarFile: "deploy/staging/eu-west-1/terraform/mc01.tfvars.json", Command: "apply"},
		}}
	}
	p := plan()
	if err := p.OnlyStep("terraform"); err != nil || len(p.Steps) != 1 || p.Steps[0].Name != "terraform" {
		t.Errorf("OnlyStep(terraform): %v, %+v", err, p.Steps)
	}
	if err := plan().OnlyStep("no-such-step"); err == nil || !strings.Contains(err.Error(), `no step "no-such-step"`) {
		t.Errorf("OnlyStep of a step the pipeline lacks: %v", err)
	}
	if p := plan(); p.OnlyStep("") != nil || len(p.Steps) != 3 {
		t.Error("OnlyStep(\"\") left out steps")
	}

	if err := plan().Holds(Expected{}); err != nil {
		t.Errorf("nothing expected: %v", err)
	}
	s := plan().Steps
	if err := plan().Holds(Expected{RoleARN: s[1].RoleARN, ExternalID: s[1].ExternalID, TFVars: s[2].VarFile, Command: "apply"}); err != nil {
		t.Errorf("what the plan does: %v", err)
	}
	for _, e := range []Expected{
		{RoleARN: "arn:aws:iam::222222222222:role/ManagementClusterDeployRole"},
		{ExternalID: "x-2"},
		{TFVars: "deploy/staging/eu-west-1/terraform/mc02.tfvars.json"},
		{Command: "destroy"},
	} {
		if err := plan().Holds(e); err == nil || !strings.Contains(err.Error(), "the PipelineRun is stale") {
			t.Errorf("%+v: %v, want a stale run refused", e, err)
		}
	}
}
