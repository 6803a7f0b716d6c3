// Package iampolicy is the IAM policy language as regionctl writes and
// reads it: Document and its statements, strict parsing (Parse, ParseAWS)
// of the subset the project's judges can decide, and the placeholders
// rendered documents carry until they are installed (Substitute,
// EscapeVariables, Placeholders).
//
// It generates nothing and decides nothing: internal/render/iam writes
// documents in it, and internal/iamjudge decides requests against them.
package iampolicy
