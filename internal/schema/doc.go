// Package schema checks the fleet against the embedded CUE schemas
// (github.com/regionctl/regionctl/schema) and maps every CUE error back to
// the user's layer file, line and column.
//
// Entry point: a Checker, made with New. CheckLayers validates each layer
// document once with its layer schema; CheckClusters unifies each cluster's
// effective config with #Cluster, which adds the defaults derived from
// identity; CheckAWS applies the rules AWS enforces at apply time that a
// pattern cannot state (CIDR containment and overlap, zones, tag count, role
// name lengths); CheckFleet applies #Fleet's constraints across clusters.
// Results are keyed by content hash so unchanged inputs are not evaluated
// twice.
package schema
