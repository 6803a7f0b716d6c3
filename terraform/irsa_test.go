package terraform_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// notRunYet are the IRSA subjects no component runs yet, each with why:
// the test lists them so that a new one fails until it runs somewhere.
var notRunYet = map[string]string{
	// Deploying the controller is issue 36's; its role waits for it.
	"kube-system:aws-load-balancer-controller": "the AWS Load Balancer Controller is not deployed yet",
	// HyperShift's etcd backups run in the hosted control planes'
	// namespaces, which the operator makes; no chart of the platform
	// names this ServiceAccount yet.
	"hypershift:etcd-backup": "no component runs the etcd backup's ServiceAccount yet",
}

// addOns are subjects EKS itself runs: a managed add-on's ServiceAccount,
// bound to its role by the add-on's service_account_role_arn.
var addOns = map[string]bool{"kube-system:ebs-csi-controller-sa": true}

// TestIRSASubjectsRunSomewhere: every ServiceAccount a role of the modules
// is given to (namespace:name: through EKS Pod Identity, modules/pod-identity-trust
// and its association, or through the cluster's OIDC provider) is where a
// component of the example fleet runs on management or regional clusters:
// its namespace is a component's, and a chart of the platform's own
// (charts/) makes a ServiceAccount of that name. A trust naming a namespace
// nothing runs in (external-dns's once named hypershift while the chart ran
// in external-dns) gives the role to no one.
func TestIRSASubjectsRunSomewhere(t *testing.T) {
	subjects := irsaSubjects(t)
	if len(subjects) < 6 {
		t.Fatalf("only %d IRSA subjects found in the modules: %v", len(subjects), subjects)
	}
	var components struct {
		Components map[string]struct {
			RunsOn    []string       `json:"runs_on"`
			Namespace string         `json:"namespace"`
			Chart     map[string]any `json:"chart"`
		} `json:"components"`
	}
	b, err := os.ReadFile("../config/global/10-components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &components); err != nil {
		t.Fatal(err)
	}
	for _, s := range subjects {
		ns, sa, _ := strings.Cut(s, ":")
		if addOns[s] {
			continue
		}
		if why, ok := notRunYet[s]; ok {
			t.Logf("%s: %s", s, why)
			continue
		}
		// Some component runs in the namespace, and one of them makes the
		// ServiceAccount: a chart of charts/ that holds it, or another
		// project's chart (judged where its chart can be rendered:
		// conformance/charts for External Secrets Operator).
		var in []string
		made := false
		for name, c := range components.Components {
			namespace := c.Namespace
			if namespace == "" {
				namespace = name // as render places an Application without one
			}
			if namespace != ns || !(slices.Contains(c.RunsOn, "management") || slices.Contains(c.RunsOn, "regional")) {
				continue
			}
			in = append(in, name)
			made = made || c.Chart != nil || chartMakesServiceAccount(t, name, sa)
		}
		switch {
		case len(in) == 0:
			t.Errorf("%s: a role trusts this ServiceAccount, but no component runs in namespace %s", s, ns)
		case !made:
			sort.Strings(in)
			t.Errorf("%s: components %v run in %s, but none of their charts (charts/) makes a ServiceAccount %s", s, in, ns, sa)
		}
	}
	for s := range notRunYet {
		if !slices.Contains(subjects, s) {
			t.Errorf("%s is listed as not run yet, but no role trusts it any more: remove it", s)
		}
	}
}

// irsaSubjects are the namespace:name strings of the modules: the
// ServiceAccounts their roles trust (the service_account of
// modules/pod-identity-trust, modules/irsa-trust's service_accounts, and the
// maps and defaults that feed them).
func irsaSubjects(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("modules/*/*.tf")
	literal := regexp.MustCompile(`"((?:kube-system|[a-z][a-z0-9-]*):[a-z][a-z0-9-]*)"`)
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			seen[m[1]] = true
		}
	}
	var out []string
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// chartMakesServiceAccount reports whether charts/<chart>/templates holds
// a ServiceAccount named name.
func chartMakesServiceAccount(t *testing.T, chart, name string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "charts", chart, "templates", "*.yaml"))
	sa := regexp.MustCompile(`(?m)^kind: ServiceAccount\nmetadata:\n  name: ` + regexp.QuoteMeta(name) + `\n`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if sa.Match(b) {
			return true
		}
	}
	return false
}
