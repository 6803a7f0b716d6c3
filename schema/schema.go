// Package schema embeds the CUE schemas of the fleet config: one per layer
// (#Global, #Sector, #Region, #ClusterFile), #Cluster for the effective
// config of one cluster, and #Fleet for constraints across clusters. The
// checks that use them live in internal/schema.
package schema

import "embed"

// FS holds the *.cue files of this directory.
//
//go:embed *.cue
var FS embed.FS
