package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const region = "eu-west-1"

var names = []string{"staging-eu-west-1-regional", "staging-eu-west-1-mc01", "staging-eu-west-1-mc02"}

// TestProvisionRegion provisions eu-west-1 (central, then regional for its
// two management clusters), checks what exists in the emulator and what
// the platform API received, then runs both again and checks that nothing
// was made twice.
func TestProvisionRegion(t *testing.T) {
	e := setup(t)
	if code, out, _ := e.regionctl("pipeline", "central", "--region", region, "--request-id", "req-central"); code != 0 {
		t.Fatalf("central: exit %d", code)
	} else {
		for _, want := range []string{"eu-west-1/regional", "account", "created", "assume-role", "terraform", "bootstrap", "central pipeline of eu-west-1 done", "Terraform output: " + e.root + "/.regionctl/logs/central-eu-west-1-req-central.log"} {
			if !strings.Contains(out, want) {
				t.Errorf("central output lacks %q", want)
			}
		}
	}
	if code, _, _ := e.regionctl("pipeline", "regional", "--region", region, "--request-id", "req-regional"); code != 0 {
		t.Fatalf("regional: exit %d", code)
	}

	// Terraform's output went to the named log file, each line prefixed by
	// its cluster.
	log, err := os.ReadFile(filepath.Join(e.root, ".regionctl/logs/regional-eu-west-1-req-regional.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[eu-west-1/mc01] ", "[eu-west-1/mc02] ", "Apply complete!"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q", want)
		}
	}

	accounts := e.accounts()
	for _, n := range names {
		if len(accounts[n]) != 1 {
			t.Fatalf("account %s: %v", n, accounts[n])
		}
		if got := e.ouPath(accounts[n][0]); got != "/platform/staging" {
			t.Errorf("%s is in %s, want /platform/staging", n, got)
		}
	}
	regional := accounts[names[0]][0]

	// The deploy role of each management cluster's account trusts only the
	// regional pipeline's role, with the region's ExternalId.
	for _, n := range names[1:] {
		trust, attached, ok := e.role(accounts[n][0], "ManagementClusterDeployRole")
		if !ok {
			t.Fatalf("no ManagementClusterDeployRole in %s", n)
		}
		if !strings.Contains(trust, `"sts:ExternalId"`) || !strings.Contains(trust, "regional-pipeline-eu-west-1") || !strings.Contains(trust, "arn:aws:iam::123456789012:role/regional-pipeline-eu-west-1") {
			t.Errorf("%s deploy role trust: %s", n, trust)
		}
		if len(attached) != 1 {
			t.Errorf("%s deploy role policies %v", n, attached)
		}
	}

	// What the runner asked STS: the bootstrap role for the central
	// pipeline, the deploy role with the region's ExternalId and the run's
	// request id in the session name for the regional one.
	var deploy int
	for _, ar := range e.proxy.assumeRoles() {
		arn := ar.Get("RoleArn")
		switch {
		case strings.HasSuffix(arn, ":role/ManagementClusterDeployRole"):
			deploy++
			if ar.Get("ExternalId") != "regional-pipeline-eu-west-1" || ar.Get("RoleSessionName") != "regionctl-req-regional" {
				t.Errorf("deploy role assumed with %v", ar)
			}
			if strings.Contains(arn, regional) {
				t.Errorf("the regional account's deploy role was assumed: %s", arn)
			}
		case strings.HasSuffix(arn, ":role/OrganizationAccountAccessRole"):
			if ar.Get("ExternalId") != "" {
				t.Errorf("bootstrap role assumed with an ExternalId: %v", ar)
			}
		default:
			t.Errorf("unexpected AssumeRole %v", ar)
		}
	}
	if deploy != 2 {
		t.Errorf("%d deploy role assumptions, want 2", deploy)
	}

	// State: one object per root and cluster, each holding its cluster.
	for bucket, key := range map[string]string{
		"regionctl-tfstate-eu-west-1-regional": "regional-cluster/eu-west-1/regional.tfstate",
		"regionctl-tfstate-eu-west-1-mc01":     "management-cluster/eu-west-1/mc01.tfstate",
		"regionctl-tfstate-eu-west-1-mc02":     "management-cluster/eu-west-1/mc02.tfstate",
	} {
		if got := strings.Join(e.stateResources(bucket, key), " "); got != "terraform_data.cluster" {
			t.Errorf("s3://%s/%s holds %s", bucket, key, got)
		}
		if _, ok := e.object(bucket, key+".regionctl-run"); ok {
			t.Errorf("the run lease of %s was left behind", key)
		}
	}
	if _, ok := e.object("regionctl-tfstate-eu-west-1-regional", "central-bootstrap/eu-west-1.tfstate"); !ok {
		t.Error("no central-bootstrap state")
	}

	// The platform API: two registrations, signed, carrying the request id.
	regs := e.api.Registered()
	if len(regs) != 2 {
		t.Fatalf("registrations %+v", regs)
	}
	for _, r := range regs {
		if r.RequestID != "req-regional" || r.Labels["region"] != region || r.Labels["cluster_type"] != "management" || r.Region != region {
			t.Errorf("registration %+v", r)
		}
	}

	// Again: everything is found, nothing is created.
	creates := e.proxy.count("CreateAccount")
	if code, out, _ := e.regionctl("pipeline", "central", "--region", region, "--request-id", "req-central-2"); code != 0 || strings.Contains(out, "created") {
		t.Fatalf("central again: exit %d", code)
	}
	// Again, both clusters at once.
	if code, out, _ := e.regionctl("pipeline", "regional", "--region", region, "--request-id", "req-regional-2", "--parallel", "2"); code != 0 || strings.Count(out, "already registered") != 2 {
		t.Fatalf("regional again: exit %d", code)
	}
	if e.proxy.count("CreateAccount") != creates || creates != 3 {
		t.Errorf("CreateAccount called %d times, then %d", creates, e.proxy.count("CreateAccount"))
	}
	if len(e.api.Registered()) != 2 {
		t.Errorf("registrations after a re-run: %+v", e.api.Registered())
	}
	for _, n := range names {
		if len(e.accounts()[n]) != 1 {
			t.Errorf("%s: %v", n, e.accounts()[n])
		}
	}
}
