package diff

import (
	"testing"

	"github.com/regionctl/regionctl/internal/diag"
)

// TestPosBeforeByNumber: a skipped wave names the first line that gives
// the value, by number (line 9 before line 10), not as text sorts.
func TestPosBeforeByNumber(t *testing.T) {
	nine, ten := diag.Pos{File: "config/sectors/prod.yaml", Line: 9, Col: 3}, diag.Pos{File: "config/sectors/prod.yaml", Line: 10, Col: 1}
	if !posBefore(nine, ten) || posBefore(ten, nine) {
		t.Errorf("line 9 is not before line 10")
	}
	if a, b := (diag.Pos{File: "a.yaml", Line: 50}), (diag.Pos{File: "b.yaml", Line: 1}); !posBefore(a, b) {
		t.Errorf("files are not ordered by name")
	}
	if a, b := (diag.Pos{File: "a.yaml", Line: 5, Col: 2}), (diag.Pos{File: "a.yaml", Line: 5, Col: 10}); !posBefore(a, b) || posBefore(b, a) {
		t.Errorf("columns are not ordered by number")
	}
}
