// Package benchmarks measures how regionctl's cost grows with the fleet:
// validate, render, render --diff and affected on generated fleets of 100 to
// 5,000 clusters. `make bench` runs it and prints one table. It holds only
// benchmarks; there is nothing to import.
package benchmarks
