package render

import (
	"fmt"
	"io/fs"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/fleet"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/schema"
)

// Inputs are the directories of a repository a render reads (besides the
// schema and Terraform variables embedded in regionctl).
var Inputs = []string{"config", "charts", tekton.Dir}

// FromFS loads, validates and renders the repository in fsys (a working
// tree or a git tree). The fleet is returned even when it has errors; the
// output is nil then. opts.Charts and opts.Pipelines are read from fsys.
func FromFS(fsys fs.FS, checker *schema.Checker, opts Options) (*config.Fleet, *Output, diag.Diagnostics, error) {
	f, diags := fleet.Load(fsys, "config", checker)
	if diags.HasErrors() {
		return f, nil, diags, nil
	}
	charts, err := ReadCharts(fsys)
	if err != nil {
		return f, nil, diags, err
	}
	pipelines, err := tekton.ReadPipelines(fsys)
	if err != nil {
		return f, nil, diags, fmt.Errorf("reading %s: %w", tekton.Dir, err)
	}
	opts.Charts, opts.Pipelines = charts, pipelines
	out, rdiags := Render(f, opts)
	return f, out, append(diags, rdiags...), nil
}
