package simulator

import "github.com/regionctl/regionctl/internal/iamjudge"

// A Settlement is a disagreement of the two judges that AWS's
// documentation decides: which side it takes, and where it says so. Each
// one has a test that shows the simulator still answers otherwise, so a
// settlement that is no longer needed is noticed.
type Settlement struct {
	Name string
	// Source is the documentation that decides it.
	Source string
	// Applies says whether the disagreement on a is this one.
	Applies func(a iamjudge.Authorization, v Verdicts) bool
}

// Settlements are every settled disagreement.
var Settlements = []Settlement{}

// Settled names the settlement of a disagreement on a, or "" when none
// applies.
func Settled(a iamjudge.Authorization, v Verdicts) string {
	for _, s := range Settlements {
		if s.Applies(a, v) {
			return s.Name + " (" + s.Source + ")"
		}
	}
	return ""
}
