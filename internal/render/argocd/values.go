package argocd

import (
	"github.com/regionctl/regionctl/internal/render/encode"
)

// ValuesFile encodes a component's values for a cluster (central
// topology: the ApplicationSet reads it from the fleet repository).
func ValuesFile(comp Component) ([]byte, error) {
	return encode.YAML(comp.Values)
}
