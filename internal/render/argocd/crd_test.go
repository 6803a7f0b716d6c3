package argocd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/encoding/jsonschema"
	cueyaml "cuelang.org/go/encoding/yaml"
)

// argoCDModule is the Argo CD release whose ApplicationSet CRD the rendered
// documents are proven against. Its module is fetched as data (go mod
// download), never compiled.
const argoCDModule = "github.com/argoproj/argo-cd/v3@v3.5.7"

var (
	crdOnce    sync.Once
	crdSchemas map[string]cue.Value
	crdErr     error
)

// applicationSetSchema returns the CUE schema of Argo CD's ApplicationSet
// CRD (v1alpha1), extracted from the openAPIV3Schema of the pinned release.
func applicationSetSchema(t *testing.T) cue.Value { return crdSchema(t, "applicationset-crd.yaml") }

// crdSchema returns the CUE schema of one of Argo CD's CRDs (v1alpha1):
// applicationset-crd.yaml, application-crd.yaml or appproject-crd.yaml.
func crdSchema(t *testing.T, name string) cue.Value {
	t.Helper()
	crdOnce.Do(func() {
		out, err := exec.Command("go", "mod", "download", "-json", argoCDModule).Output()
		if err != nil {
			crdErr = err
			if ee, ok := err.(*exec.ExitError); ok {
				crdErr = &downloadError{string(ee.Stderr)}
			}
			return
		}
		var mod struct{ Dir, Error string }
		if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
			crdErr = &downloadError{string(out)}
			return
		}
		crdSchemas = map[string]cue.Value{}
		ctx := cuecontext.New()
		for _, name := range []string{"applicationset-crd.yaml", "application-crd.yaml", "appproject-crd.yaml"} {
			if crdErr = extractCRD(ctx, filepath.Join(mod.Dir, "manifests", "crds", name), name); crdErr != nil {
				return
			}
		}
	})
	if crdErr != nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" || os.Getenv("CI") != "" {
			t.Fatalf("Argo CD's CRDs: %v", crdErr)
		}
		t.Skipf("Argo CD's CRDs are not available (no module proxy?): %v", crdErr)
	}
	return crdSchemas[name]
}

func extractCRD(ctx *cue.Context, crdFile, name string) error {
	data, err := os.ReadFile(crdFile)
	if err != nil {
		return err
	}
	f, err := cueyaml.Extract(crdFile, data)
	if err != nil {
		return err
	}
	// The openAPIV3Schema of v1alpha1, extracted as a Kubernetes CRD
	// schema: objects are closed unless the CRD opens them
	// (x-kubernetes-preserve-unknown-fields), so unknown fields fail.
	crd := ctx.BuildFile(f)
	versions, err := crd.LookupPath(cue.ParsePath("spec.versions")).List()
	if err != nil {
		return err
	}
	for versions.Next() {
		v := versions.Value()
		if name, _ := v.LookupPath(cue.ParsePath("name")).String(); name != "v1alpha1" {
			continue
		}
		schemaFile, err := jsonschema.Extract(v.LookupPath(cue.ParsePath("schema.openAPIV3Schema")), &jsonschema.Config{
			DefaultVersion: jsonschema.VersionKubernetesCRD,
		})
		if err != nil {
			return err
		}
		// A struct is closed only inside a definition: wrap the
		// extracted schema in #Schema.
		var body []ast.Decl
		wrapped := &ast.File{Filename: name + ".cue"}
		for _, d := range schemaFile.Decls {
			if _, ok := d.(*ast.ImportDecl); ok {
				wrapped.Decls = append(wrapped.Decls, d)
			} else {
				body = append(body, d)
			}
		}
		wrapped.Decls = append(wrapped.Decls, &ast.Field{Label: ast.NewIdent("#Schema"), Value: &ast.StructLit{Elts: body}})
		root := ctx.BuildFile(wrapped)
		crdSchemas[name] = root.LookupPath(cue.ParsePath("#Schema"))
		return root.Err()
	}
	return &downloadError{"no v1alpha1 schema in " + crdFile}
}

type downloadError struct{ msg string }

func (e *downloadError) Error() string { return "go mod download " + argoCDModule + ": " + e.msg }

func conform(schema cue.Value, file string, data []byte) error {
	f, err := cueyaml.Extract(file, data)
	if err != nil {
		return err
	}
	v := schema.Unify(schema.Context().BuildFile(f))
	return v.Validate(cue.Concrete(true))
}

// TestApplicationSetsConformToCRD unifies every rendered ApplicationSet (the
// repository's deploy/ and every golden deploy/) with Argo CD's own CRD
// schema: types, enums and required fields checked, unknown fields rejected.
func TestApplicationSetsConformToCRD(t *testing.T) {
	schema := applicationSetSchema(t)
	files, _ := filepath.Glob("../../../deploy/*/argocd/applicationset-*.yaml")
	golden, _ := filepath.Glob("../../../golden/*/deploy/*/argocd/applicationset-*.yaml")
	files = append(files, golden...)
	if len(files) < 4 {
		t.Fatalf("only %d ApplicationSets found", len(files))
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := conform(schema, file, data); err != nil {
			t.Errorf("%s does not conform to Argo CD's ApplicationSet CRD: %v", file, err)
		}
	}
}

// TestCRDRejectsUnknownAndWrongFields shows the schema is closed and typed.
func TestCRDRejectsUnknownAndWrongFields(t *testing.T) {
	schema := applicationSetSchema(t)
	data, err := os.ReadFile("../../../golden/uneven-sectors/deploy/production/argocd/applicationset-hypershift-operator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := conform(schema, "ok.yaml", data); err != nil {
		t.Fatalf("unmodified: %v", err)
	}
	for name, edit := range map[string][2]string{
		"unknown field":   {"    type: RollingSync", "    type: RollingSync\n    rollingSpeed: fast"},
		"wrong type":      {"  goTemplate: true", "  goTemplate: \"yes\""},
		"unknown in spec": {"      project: fleet", "      project: fleet\n      colour: blue"},
	} {
		bad := strings.Replace(string(data), edit[0], edit[1], 1)
		if bad == string(data) {
			t.Fatalf("%s: edit did not apply", name)
		}
		if err := conform(schema, name+".yaml", []byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestApplicationsAndProjectsConformToCRDs unifies every rendered
// Application (each cluster's root and components) and AppProject with Argo
// CD's own CRD schemas.
func TestApplicationsAndProjectsConformToCRDs(t *testing.T) {
	apps, projects := crdSchema(t, "application-crd.yaml"), crdSchema(t, "appproject-crd.yaml")
	var files []string
	for _, pattern := range []string{"../../../deploy/*/*/argocd/*/root.yaml", "../../../deploy/*/*/argocd/*/apps/*.yaml",
		"../../../golden/*/deploy/*/*/argocd/*/root.yaml", "../../../golden/*/deploy/*/*/argocd/*/apps/*.yaml", "../../../golden/*/deploy/*/argocd/project.yaml"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	n := map[string]int{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		schema := apps
		kind := "Application"
		if strings.Contains(string(data), "\nkind: AppProject\n") {
			schema, kind = projects, "AppProject"
		}
		n[kind]++
		if err := conform(schema, file, data); err != nil {
			t.Errorf("%s does not conform to Argo CD's %s CRD: %v", file, kind, err)
		}
	}
	if n["Application"] < 50 || n["AppProject"] < 8 {
		t.Fatalf("only %v found", n)
	}
	// The schema is closed: a misspelt field fails.
	bad := strings.Replace(mustRead(t, files[0]), "  project: ", "  projekt: x\n  project: ", 1)
	if err := conform(apps, "bad.yaml", []byte(bad)); err == nil {
		t.Error("a misspelt field is accepted")
	}
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
