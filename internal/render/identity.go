package render

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/render/argocd"
)

// clusterInputs is everything a cluster's artifacts are made of, and so its
// identity: the cache stores them by its hash, and a test holds the key to
// each field (TestCacheKeyCoversEveryInput). A new input of renderCluster
// belongs here, or cached renders return what the old input made.
type clusterInputs struct {
	Renderer    string // the renderer (Options.Renderer) and the cache salt
	ID          string
	Type        string
	Sector      string
	Environment string
	Effective   string   // the effective config with its origin files
	Charts      []string // charts/ the platform owns
	Pipelines   string   // the Tekton Pipelines' declared params
	Roots       string   // the Terraform roots' variables tfvars are checked against
	GitOps      argocd.GitOps
}

func (r *renderer) inputsOf(c *config.Cluster) clusterInputs {
	return clusterInputs{
		Renderer:    r.opts.Renderer + "+" + r.opts.CacheSalt,
		ID:          c.ID(),
		Type:        c.Type,
		Sector:      c.SectorName(),
		Environment: c.Environment(),
		Effective:   fmt.Sprintf("%x", config.HashWithOrigins(c.Effective)),
		Charts:      r.opts.Charts,
		Pipelines:   r.opts.Pipelines.Signature(),
		Roots:       r.tf.Signature(),
		GitOps:      r.gitops,
	}
}

// key is the cache key of the cluster's artifacts.
func (in clusterInputs) key() string {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err) // strings and a struct of strings always encode
	}
	return fmt.Sprintf("R%x", sha256.Sum256(b))
}

// regionInputs is everything a region's artifacts (its identity chain) are
// made of.
type regionInputs struct {
	Renderer string
	Region   string
	Sector   string
	Chain    *chainRegion
}

func (in regionInputs) key() string {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("G%x", sha256.Sum256(b))
}
