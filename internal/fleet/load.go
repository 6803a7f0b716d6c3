package fleet

import (
	"io/fs"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/schema"
)

// Load reads the fleet under dir of fsys and validates it. The fleet is
// returned even when diagnostics hold errors, so callers can show what
// loaded; clusters that failed a check are marked Partial.
func Load(fsys fs.FS, dir string, checker *schema.Checker) (*config.Fleet, diag.Diagnostics) {
	docs, diags := config.Parse(fsys, dir)
	diags = append(diags, checker.CheckLayers(docs)...)
	f, ds := config.Build(docs)
	diags = append(diags, ds...)
	diags = append(diags, checker.CheckClusters(f)...)
	diags = append(diags, checker.CheckFleet(f)...)
	return f, diags.Sorted()
}
