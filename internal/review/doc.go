// Package review compares two commits of a fleet repository (or a commit
// and the working tree) the way a reviewer needs: Run renders both, holds
// the base to what it deployed (its committed deploy/) and the head's
// committed deploy/ to what it renders, and returns diff's report. The CLI
// commands render --diff, affected and pipeline dispatch call Run.
package review
