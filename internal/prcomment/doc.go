// Package prcomment keeps one regionctl comment per pull request (GitHub)
// or merge request (GitLab) and updates it in place on every push: Upsert
// finds the comment by its marker and edits it, or creates it once.
package prcomment
