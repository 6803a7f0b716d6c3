package render

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/regionctl/regionctl/internal/config"
)

// FleetInputs are what every cluster's files are made of besides its own
// config and the renderer: the charts the platform owns, the Tekton
// Pipelines' declared params, the Terraform roots' variables tfvars are
// checked against, and the fleet's gitops settings (config/global's
// gitops: repository, revision and Argo CD settings in every cluster's
// files, approvers and the Tekton namespace in every region's, so that a
// change of them leaves no cluster and no region unchanged). A test holds the
// identity to each field (TestCacheKeyCoversEveryInput); a new input of
// renderCluster belongs here or in ClusterInput, or cached renders return
// what the old input made and reviews leave out a cluster that changed.
type FleetInputs struct {
	Charts []string
	// ChartValues names each chart's values.yaml and values.schema.json
	// (their digest, by chart), which the clusters' components are held to.
	ChartValues map[string]string `json:",omitempty"`
	Pipelines   string
	Roots       string
	GitOps      string // the digest of config/global's gitops settings
}

// Digest is the fleet part of every cluster's input identity.
func (w FleetInputs) Digest() string {
	b, err := json.Marshal(w)
	if err != nil {
		panic(err) // strings and a struct of strings always encode
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// ClusterInput is cluster c's input identity, the one answer to "is this
// cluster unchanged": the digest of everything a renderer makes its files
// of (the fleet's inputs, digested by FleetInputs.Digest, its name, type,
// sector and environment, and its config as the layers merged it, with the
// file each value came from; the schema's defaults are the renderer's). The
// cache keys c's files by it (with the cache salt); a review leaves out a
// cluster whose identity is the same on both sides; index.json records it
// as the cluster's input. hashOf digests a merged config (a caller may
// remember each config's digest: the two sides of a review share most).
func ClusterInput(fleet string, c *config.Cluster, hashOf func(*config.Value) [32]byte) string {
	eff := c.MergedDigest(hashOf)
	h := sha256.New()
	for _, part := range []string{fleet, c.ID(), c.Type, c.SectorName(), c.Environment(), fmt.Sprintf("%x", eff)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// fleetInputs are the fleet inputs of r's render.
func (r *renderer) fleetInputs() FleetInputs {
	return FleetInputs{Charts: r.opts.Charts, ChartValues: chartDigests(r.opts.ChartValues), Pipelines: r.opts.Pipelines.Signature(), Roots: r.tf.Signature(), GitOps: r.gitopsDigest}
}

// GitOpsDigest digests f's gitops settings, as config/global gives them.
func GitOpsDigest(f *config.Fleet) string {
	if g := f.Global.Get("gitops"); g != nil {
		return fmt.Sprintf("%x", config.Hash(g))
	}
	return ""
}

// clusterKey is the cache key of c's files: its input identity, the
// renderer that makes them of it, and the cache salt (a build of modified
// sources keeps its renders apart).
func (r *renderer) clusterKey(c *config.Cluster) (key, input string) {
	input = ClusterInput(r.fleetDigest, c, config.HashWithOrigins)
	return fmt.Sprintf("R%x", sha256.Sum256([]byte(input+"\x00"+r.opts.Renderer+"\x00"+r.opts.CacheSalt))), input
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
