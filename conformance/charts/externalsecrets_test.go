package charts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// esoModule is External Secrets Operator's Go module, whose repository
// holds its Helm chart (deploy/charts/external-secrets) and the CRDs its
// release packs into that chart (deploy/crds/bundle.yaml). The Go module
// proxy serves it; nothing else here can fetch the published chart.
const esoModule = "github.com/external-secrets/external-secrets"

// esoRevision is the external-secrets component's chart_revision in the
// example fleet: the chart version every Application pins.
func esoRevision(t *testing.T) string {
	t.Helper()
	rev := componentsConfig(t)["external-secrets"].ChartRevision
	if rev == "" {
		t.Fatal("the example fleet runs no external-secrets component")
	}
	return rev
}

// esoSource is the directory of External Secrets Operator's repository at
// the tag of the chart version the fleet pins, from the Go module proxy.
func esoSource(t *testing.T) string {
	t.Helper()
	return moduleSource(t, esoModule, "v"+esoRevision(t))
}

// moduleSource is the directory of module at version, from the Go module
// proxy (the one way here to another project's chart). Unreachable, it
// fails on CI and skips elsewhere, saying what to run.
func moduleSource(t *testing.T, module, version string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + string(ee.Stderr)
		}
		var m struct{ Error string }
		_ = json.Unmarshal(out, &m)
		if os.Getenv("CI") == "" {
			t.Skipf("%s@%s is not reachable through the Go module proxy (go mod download -json %s@%s): %s %s", module, version, module, version, msg, m.Error)
		}
		t.Fatalf("go mod download %s@%s: %s %s", module, version, msg, m.Error)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s@%s: %s %v", module, version, m.Error, err)
	}
	return m.Dir
}

// esoCRDs are the CRDs of the operator's release.
func esoCRDs(t *testing.T, src string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(src, "deploy", "crds", "bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds, _ := splitCRDs(decodeStream(t, string(b)))
	if len(crds) < 10 {
		t.Fatalf("only %d CRDs in the operator's bundle", len(crds))
	}
	return crds
}

// TestExternalSecretsIsAdmittedAndSyncsWhatRenderLists: External Secrets
// Operator's own chart, at the tag of the version the fleet pins, rendered
// by Helm with the values of every rendered external-secrets Application,
// is admitted by a real API server under the restricted Pod Security
// Standard, with its controller running as the ServiceAccount
// modules/external-secrets associates its role with; and, with the
// operator's CRDs installed, the ClusterSecretStore and ExternalSecrets
// that secrets-sync renders for each cluster are admitted by the CRDs'
// own schemas, naming each secret the Terraform roots make and the Secret
// the Maestro charts mount.
func TestExternalSecretsIsAdmittedAndSyncsWhatRenderLists(t *testing.T) {
	src := esoSource(t)
	chartDir := filepath.Join(src, "deploy", "charts", "external-secrets")
	if _, err := loader.Load(chartDir); err != nil {
		t.Fatalf("Helm loads the operator's chart: %v", err)
	}
	j := newJudge(t)
	if err := j.s.InstallCRDs(context.Background(), esoCRDs(t, src)); err != nil {
		t.Fatal(err)
	}
	// The operator, as each rendered Application installs it.
	operators := renderedApps(t, "external-secrets")
	if len(operators) == 0 {
		t.Fatal("no external-secrets Application rendered")
	}
	objects := 0
	for _, a := range operators {
		objs, err := renderAbs(chartDir, a.release, a.namespace, a.values, false)
		if err != nil {
			t.Fatalf("%s: Helm renders the operator's chart: %v", a.file, err)
		}
		j.namespace(t, a.namespace, a.namespaceLabels)
		controllerSA := ""
		sas := map[string]bool{}
		for _, o := range objs {
			objects++
			j.admit(t, a.file, o, a.namespace, "argocd-controller")
			meta, _ := o["metadata"].(map[string]any)
			switch o["kind"] {
			case "ServiceAccount":
				sas[fmt.Sprint(meta["name"])] = true
			case "Deployment":
				if meta["name"] == a.release {
					spec := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
					controllerSA = fmt.Sprint(spec["serviceAccountName"])
				}
			}
		}
		// modules/external-secrets associates its role with this
		// ServiceAccount of this namespace.
		if a.namespace != "external-secrets" || controllerSA != "external-secrets" || !sas["external-secrets"] {
			t.Errorf("%s: the controller runs as %s/%s (ServiceAccounts made: %v); the role's association names external-secrets/external-secrets",
				a.file, a.namespace, controllerSA, sas)
		}
	}

	// What secrets-sync renders for each cluster, judged by the CRDs.
	syncs := 0
	for _, a := range platformApps(t) {
		if filepath.Base(a.chart) != "secrets-sync" {
			continue
		}
		objs, err := render(a.chart, a.release, a.namespace, a.values)
		if err != nil {
			t.Fatalf("%s: %v", a.file, err)
		}
		listed, _ := a.values["secrets"].([]any)
		externals := 0
		for _, o := range objs {
			meta, _ := o["metadata"].(map[string]any)
			ns, _ := meta["namespace"].(string)
			if ns == "" {
				ns = a.namespace
			}
			j.namespace(t, ns, a.namespaceLabels)
			objects++
			j.admit(t, a.file, o, ns, "argocd-controller")
			if o["kind"] == "ExternalSecret" {
				externals++
				spec := o["spec"].(map[string]any)
				data, _ := spec["data"].([]any)
				remote := data[0].(map[string]any)["remoteRef"].(map[string]any)["key"]
				if !strings.HasSuffix(fmt.Sprint(remote), "-maestro-agent-mqtt") && !strings.HasSuffix(fmt.Sprint(remote), "-maestro-server-mqtt") {
					t.Errorf("%s: an ExternalSecret reads %v, which no root makes", a.file, remote)
				}
				if target := spec["target"].(map[string]any)["name"]; target != "maestro-agent-certs" && target != "maestro-server-certs" {
					t.Errorf("%s: an ExternalSecret makes %v, which no Maestro chart mounts", a.file, target)
				}
			}
		}
		if externals != len(listed) || externals == 0 {
			t.Errorf("%s: %d ExternalSecrets for %d listed secrets", a.file, externals, len(listed))
		}
		syncs++
	}
	if syncs == 0 {
		t.Fatal("no secrets-sync Application rendered")
	}
	t.Logf("External Secrets Operator %s: %d Applications; secrets-sync: %d; %d objects admitted", esoRevision(t), len(operators), syncs, objects)
}

// renderedApps are the rendered Applications of component comp, one per
// distinct namespace and values.
func renderedApps(t *testing.T, comp string) []app {
	t.Helper()
	return appsOf(t, comp, func(app) bool { return true })
}
