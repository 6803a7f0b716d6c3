package argocd

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"sigs.k8s.io/yaml"
)

// maxChartFile bounds what is read of a chart's values.yaml and schema, as
// config.MaxFileSize bounds a layer file.
const maxChartFile = 10 << 20

// readBounded reads name of fsys, refusing one larger than maxChartFile.
func readBounded(fsys fs.FS, name string) ([]byte, error) {
	if st, err := fs.Stat(fsys, name); err == nil && st.Size() > maxChartFile {
		return nil, fmt.Errorf("%s is %d bytes; a chart's values file may be at most %d", name, st.Size(), maxChartFile)
	}
	return fs.ReadFile(fsys, name)
}

// english words a schema's findings.
var english = message.NewPrinter(language.English)

// ChartValues is what Helm holds the values of a chart of this repository
// to: the defaults of its values.yaml, over which an Application's values
// are coalesced, and its values.schema.json, which the coalesced values
// must satisfy or Helm refuses to render the chart (and Argo CD to sync
// the Application).
type ChartValues struct {
	Defaults map[string]any
	schema   *jsonschema.Schema // nil: the chart has no schema
	// Digest names the two files' bytes: a cluster's input identity
	// includes it, so a changed schema checks every cluster again.
	Digest string
}

// ReadChartValues reads charts/<name>/values.yaml and values.schema.json
// of fsys (either may be missing). A schema may refer to nothing outside
// itself: Helm's own loader would fetch a remote $ref, which no render may.
func ReadChartValues(fsys fs.FS, name string) (*ChartValues, error) {
	dir := path.Join(ChartsDir, name)
	h := sha256.New()
	cv := &ChartValues{Defaults: map[string]any{}}
	b, err := readBounded(fsys, dir+"/values.yaml")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := yaml.Unmarshal(b, &cv.Defaults); err != nil {
			return nil, fmt.Errorf("%s/values.yaml: %w", dir, err)
		}
		if cv.Defaults == nil {
			cv.Defaults = map[string]any{}
		}
	}
	fmt.Fprintf(h, "values.yaml %d\n", len(b))
	h.Write(b)
	s, err := readBounded(fsys, dir+"/values.schema.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
		if err != nil {
			return nil, fmt.Errorf("%s/values.schema.json: %w", dir, err)
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(noLoader{})
		url := "file:///" + dir + "/values.schema.json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("%s/values.schema.json: %w", dir, err)
		}
		if cv.schema, err = c.Compile(url); err != nil {
			return nil, fmt.Errorf("%s/values.schema.json: %w", dir, err)
		}
	}
	fmt.Fprintf(h, "values.schema.json %d\n", len(s))
	h.Write(s)
	cv.Digest = fmt.Sprintf("%x", h.Sum(nil))
	return cv, nil
}

// noLoader refuses every $ref outside the schema's own document.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s: a chart's values.schema.json must hold all of itself", url)
}

// ValueError is one place the coalesced values fail the schema: the path
// of the value inside the chart's values, and what the schema says.
type ValueError struct {
	Path    []string
	Message string
}

// Check coalesces values over the chart's defaults as Helm does (a map
// merged key by key, anything else replaced, a null removing the default)
// and holds the result to the chart's schema.
func (cv *ChartValues) Check(values map[string]any) ([]ValueError, error) {
	if cv == nil || cv.schema == nil {
		return nil, nil
	}
	// The schema sees JSON: numbers as json.Number's, as Helm gives them.
	b, err := json.Marshal(coalesce(cv.Defaults, values))
	if err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	err = cv.schema.Validate(inst)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []ValueError
	leaves(ve, &out)
	sort.Slice(out, func(i, j int) bool {
		return strings.Join(out[i].Path, "\x00")+"\x00"+out[i].Message < strings.Join(out[j].Path, "\x00")+"\x00"+out[j].Message
	})
	return out, nil
}

// leaves collects the innermost causes of a validation error: each names
// the value that failed and why.
func leaves(ve *jsonschema.ValidationError, out *[]ValueError) {
	if len(ve.Causes) == 0 {
		*out = append(*out, ValueError{Path: append([]string(nil), ve.InstanceLocation...), Message: ve.ErrorKind.LocalizedString(english)})
		return
	}
	for _, c := range ve.Causes {
		leaves(c, out)
	}
}

// coalesce is Helm's coalescing of user values over a chart's defaults.
func coalesce(defaults, values map[string]any) map[string]any {
	out := make(map[string]any, len(defaults)+len(values))
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range values {
		if v == nil {
			// A null removes a default; a null where the chart has no
			// default stays, and the schema judges it (Helm's
			// coalesceValues and coalesceTablesFullKey do the same).
			if _, isDefault := defaults[k]; isDefault {
				delete(out, k)
			} else {
				out[k] = nil
			}
			continue
		}
		d, dok := out[k].(map[string]any)
		m, mok := v.(map[string]any)
		if dok && mok {
			out[k] = coalesce(d, m)
			continue
		}
		out[k] = v
	}
	return out
}
