// Package fleetgen generates valid, realistic fleets of any size for
// benchmarks and for `regionctl dev gen-fleet`: every layer used, overrides
// at every level, rollout pins and clusters in both deletion phases.
//
// Entry point: Generate.
package fleetgen
