// Package diff compares two renders of the fleet, a base and a head, and
// says what a change does: which clusters change, are added or destroyed,
// grouped by sector in rollout order; every changed value with the file and
// line that set it, a change inherited by many clusters shown once; which
// pipelines will run; rollout waves skipped; and the rendered files' diffs.
// It is pure: both sides come in already rendered.
//
// Entry points: Compare and Affected.
package diff
