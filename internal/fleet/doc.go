// Package fleet loads and validates a whole fleet: it parses the layer files
// (config), checks each against its layer schema, merges every cluster's
// effective config and checks it against #Cluster and #Fleet (schema).
//
// Entry point: Load.
package fleet
