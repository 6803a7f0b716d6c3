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
	crdOnce   sync.Once
	crdSchema cue.Value
	crdErr    error
)

// applicationSetSchema returns the CUE schema of Argo CD's ApplicationSet
// CRD (v1alpha1), extracted from the openAPIV3Schema of the pinned release.
func applicationSetSchema(t *testing.T) cue.Value {
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
		crdFile := filepath.Join(mod.Dir, "manifests", "crds", "applicationset-crd.yaml")
		data, err := os.ReadFile(crdFile)
		if err != nil {
			crdErr = err
			return
		}
		ctx := cuecontext.New()
		f, err := cueyaml.Extract(crdFile, data)
		if err != nil {
			crdErr = err
			return
		}
		// The openAPIV3Schema of v1alpha1, extracted as a Kubernetes CRD
		// schema: objects are closed unless the CRD opens them
		// (x-kubernetes-preserve-unknown-fields), so unknown fields fail.
		crd := ctx.BuildFile(f)
		versions, err := crd.LookupPath(cue.ParsePath("spec.versions")).List()
		if err != nil {
			crdErr = err
			return
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
				crdErr = err
				return
			}
			// A struct is closed only inside a definition: wrap the
			// extracted schema in #ApplicationSet.
			var body []ast.Decl
			wrapped := &ast.File{Filename: "applicationset-crd.cue"}
			for _, d := range schemaFile.Decls {
				if _, ok := d.(*ast.ImportDecl); ok {
					wrapped.Decls = append(wrapped.Decls, d)
				} else {
					body = append(body, d)
				}
			}
			wrapped.Decls = append(wrapped.Decls, &ast.Field{Label: ast.NewIdent("#ApplicationSet"), Value: &ast.StructLit{Elts: body}})
			root := ctx.BuildFile(wrapped)
			crdSchema = root.LookupPath(cue.ParsePath("#ApplicationSet"))
			crdErr = root.Err()
			return
		}
		crdErr = &downloadError{"no v1alpha1 schema in " + crdFile}
	})
	if crdErr != nil {
		if os.Getenv("REGIONCTL_REQUIRE_TERRAFORM") == "1" || os.Getenv("CI") != "" {
			t.Fatalf("Argo CD's ApplicationSet CRD: %v", crdErr)
		}
		t.Skipf("Argo CD's ApplicationSet CRD is not available (no module proxy?): %v", crdErr)
	}
	return crdSchema
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
	if len(files) < 6 {
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
	data, err := os.ReadFile("../../../deploy/production/argocd/applicationset-management.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := conform(schema, "ok.yaml", data); err != nil {
		t.Fatalf("unmodified: %v", err)
	}
	for name, edit := range map[string][2]string{
		"unknown field":   {"    type: RollingSync", "    type: RollingSync\n    rollingSpeed: fast"},
		"wrong type":      {"  goTemplate: true", "  goTemplate: \"yes\""},
		"unknown in spec": {"      project: platform", "      project: platform\n      colour: blue"},
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
