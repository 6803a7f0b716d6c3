// Package view prints results for people: diagnostics, explanations and
// summaries, coloured on a terminal and plain otherwise. It never decides
// anything. Entry point: a Printer, made with New.
package view
