package main

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/mod/semver"
)

// changelog is CHANGELOG.md as the release tags give it: for each v* tag
// that is a semantic version, newest first, the subjects of the commits on
// the first-parent history since the tag before it. Commits after the
// newest tag come first, under version (the snapshot being built, or
// "Unreleased"). Subjects are data (markdownText): none becomes a link, an
// image, HTML, a heading, a list, a mention or code on a rendered page.
func changelog(version string) ([]byte, error) {
	out, err := git("tag", "--list", "v*")
	if err != nil {
		return nil, err
	}
	var tags []string
	for _, t := range strings.Fields(out) {
		if semver.IsValid(t) {
			tags = append(tags, t)
		}
	}
	sort.Slice(tags, func(i, j int) bool { return semver.Compare(tags[i], tags[j]) < 0 })
	var b bytes.Buffer
	b.WriteString("# Changelog\n\nGenerated from the release tags and the subjects of the commits between them.\n")
	type section struct{ title, from, to string }
	var sections []section
	for i, t := range tags {
		from := ""
		if i > 0 {
			from = tags[i-1]
		}
		sections = append(sections, section{t, from, t})
	}
	last := ""
	if len(tags) > 0 {
		last = tags[len(tags)-1]
	}
	if version == "" || semver.IsValid(version) && slices.Contains(tags, version) {
		version = "Unreleased"
	}
	sections = append(sections, section{version, last, "HEAD"})
	for i := len(sections) - 1; i >= 0; i-- {
		s := sections[i]
		rng := s.to
		if s.from != "" {
			rng = s.from + ".." + s.to
		}
		log, err := git("log", "--first-parent", "--format=%h%x00%cs%x00%s", rng)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if strings.TrimSpace(log) == "" {
			if s.to == "HEAD" {
				continue // nothing since the newest tag
			}
			lines = nil
		}
		date := ""
		if len(lines) > 0 {
			date = " (" + strings.Split(lines[0], "\x00")[1] + ")"
		}
		fmt.Fprintf(&b, "\n## %s%s\n\n", markdownText(s.title), date)
		for _, l := range lines {
			f := strings.SplitN(l, "\x00", 3)
			if len(f) != 3 {
				continue
			}
			fmt.Fprintf(&b, "- %s (%s)\n", markdownText(f[2]), f[0])
		}
	}
	return b.Bytes(), nil
}

// markdownText is s shown as text on a CommonMark or GitHub page: control
// characters dropped, and every ASCII punctuation mark that can begin
// markup backslash-escaped (code, emphasis, links and images, HTML and
// entities, headings, lists and quotes, tables, strikethrough, autolinks,
// emoji, mentions, math).
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			continue
		case strings.ContainsRune(markup, r):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// markup are the ASCII punctuation marks markdownText escapes.
const markup = "\\`*_{}[]()#+-.!|~<>&:@$^="
