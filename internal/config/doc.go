// Package config loads the fleet's layer files (global, sector, region,
// cluster) from an fs.FS and merges them into each cluster's effective
// config. Every value carries its Origin: the layer, file, line and column
// that set it, and the values it overrode.
//
// Entry points: Parse reads the layer files into a Fleet of documents, and
// Merge computes the effective config of every cluster. Both are pure and
// return diagnostics instead of failing on the first problem.
package config
