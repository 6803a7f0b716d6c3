package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

// LockFile is where a repository pins the other projects' charts its
// fleet names, as .terraform.lock.hcl pins providers: charts pull writes
// it, CI pulls with --locked against it, and the review renders a cached
// chart only as the side's lock pins it.
const LockFile = "charts.lock"

// MaxLock bounds the lock file.
const MaxLock = 1 << 20

// Lock is the content of LockFile: each chart of another project at a
// revision with what it must be. A Helm repository's chart is pinned by
// its archive's sha256 digest, an OCI registry's by its manifest's; a git
// repository's chart directory by the commit its tag named.
type Lock struct {
	Charts []Locked `json:"charts"`
}

// Locked is one pinned chart: Chart set for a Helm repository's chart,
// Path for a git repository's directory, or "." for an OCI registry's
// chart (Repo oci://…).
type Locked struct {
	Repo     string `json:"repo"`
	Chart    string `json:"chart,omitempty"`
	Path     string `json:"path,omitempty"`
	Revision string `json:"revision"`
	SHA256   string `json:"sha256,omitempty"`
	Commit   string `json:"commit,omitempty"`
}

func (l Locked) key() string {
	return l.Repo + "\x00" + l.Chart + "\x00" + l.Path + "\x00" + l.Revision
}

// oci says l is an OCI registry's chart.
func (l Locked) oci() bool { return l.Chart == "" && strings.HasPrefix(l.Repo, "oci://") }

// String names the chart as charts pull does.
func (l Locked) String() string {
	if l.oci() {
		return OCISource{URL: l.Repo, Revision: l.Revision}.String()
	}
	if l.Chart != "" {
		return fmt.Sprintf("%s %s of %s", l.Chart, l.Revision, l.Repo)
	}
	return GitSource{URL: l.Repo, Path: l.Path, Revision: l.Revision}.String()
}

// PinMismatch is a chart its repository serves otherwise than the lock
// pins it: a version republished, a tag moved.
type PinMismatch struct {
	Chart     Locked // as the lock pins it
	Served    string // the digest or commit the repository serves
	Republish string // what the repository did, for people
}

func (e *PinMismatch) Error() string {
	served := e.Chart
	served.SHA256, served.Commit = "", ""
	if e.Chart.Commit != "" {
		served.Commit = e.Served
	} else {
		served.SHA256 = e.Served
	}
	return fmt.Sprintf("%s is served at %s, but %s pins %s: %s; pin the new one only if you trust it (regionctl charts pull --update)", e.Chart, served.PinText(), LockFile, e.Chart.PinText(), e.Republish)
}

// PinText is what l is pinned to, for people: "sha256 …" or "commit …".
func (l Locked) PinText() string {
	if l.Commit != "" {
		return "commit " + l.Commit
	}
	return "sha256 " + l.SHA256
}

var (
	hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// check refuses an entry that is not one a pull could have written.
func (l Locked) check() error {
	switch {
	case l.Chart != "" && l.Path == "":
		if _, err := (Cache{}).path(l.Repo, l.Chart, l.Revision); err != nil {
			return err
		}
		if !strings.HasPrefix(l.Repo, "https://") {
			return fmt.Errorf("repo %q is not an https URL", l.Repo)
		}
		if !hexDigest.MatchString(l.SHA256) || l.Commit != "" {
			return fmt.Errorf("%s: a Helm repository's chart is pinned by sha256 (64 lowercase hex) alone", l)
		}
	case l.oci():
		if _, err := (OCISource{URL: l.Repo, Revision: l.Revision}).reference(); err != nil {
			return err
		}
		if l.Path != "." || !hexDigest.MatchString(l.SHA256) || l.Commit != "" {
			return fmt.Errorf("%s: an OCI registry's chart is pinned, at path \".\", by its manifest's sha256 (64 lowercase hex) alone", l)
		}
	case l.Chart == "" && l.Path != "":
		if err := (GitSource{URL: l.Repo, Path: l.Path, Revision: l.Revision}).check(); err != nil {
			return err
		}
		if !hexCommit.MatchString(l.Commit) || l.SHA256 != "" {
			return fmt.Errorf("%s: a git repository's chart is pinned by commit (40 lowercase hex) alone", l)
		}
	default:
		return fmt.Errorf("an entry names a chart (Helm repository) or a path (git repository), one of them: %+v", l)
	}
	return nil
}

// ReadLock reads LockFile from fsys: an empty lock when there is none, an
// error naming the file and line when it is not one charts pull could
// have written (unknown fields, an entry twice, a malformed pin).
func ReadLock(fsys fs.FS) (*Lock, error) {
	f, err := fsys.Open(LockFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxLock+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", LockFile, err)
	}
	if len(b) > MaxLock {
		return nil, fmt.Errorf("%s: over %d KiB", LockFile, MaxLock>>10)
	}
	return decodeLock(b)
}

// decodeLock decodes the lock entry by entry, so that an error names the
// line of the entry it is in.
func decodeLock(b []byte) (*Lock, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	at := func(err error) error { return fmt.Errorf("%s:%d: %v", LockFile, line(b, dec.InputOffset()), err) }
	expect := func(want json.Token) error {
		tok, err := dec.Token()
		if err == nil && tok != want {
			err = fmt.Errorf("%v where %v belongs (the form is {\"charts\": [...]})", tok, want)
		}
		return err
	}
	if err := expect(json.Delim('{')); err != nil {
		return nil, at(err)
	}
	if err := expect("charts"); err != nil {
		return nil, at(err)
	}
	if err := expect(json.Delim('[')); err != nil {
		return nil, at(err)
	}
	l := &Lock{}
	seen := map[string]bool{}
	for dec.More() {
		// The entry's own line: past the comma and the whitespace before it.
		start := dec.InputOffset()
		for start < int64(len(b)) && bytes.IndexByte([]byte(", \t\r\n"), b[start]) >= 0 {
			start++
		}
		var e Locked
		if err := dec.Decode(&e); err != nil {
			return nil, at(err)
		}
		e.Repo = strings.TrimSuffix(e.Repo, "/")
		err := e.check()
		if err == nil && seen[e.key()] {
			err = fmt.Errorf("%s is pinned twice", e)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", LockFile, line(b, start), err)
		}
		seen[e.key()] = true
		l.Charts = append(l.Charts, e)
	}
	for _, want := range []json.Token{json.Delim(']'), json.Delim('}')} {
		if err := expect(want); err != nil {
			return nil, at(err)
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, at(fmt.Errorf("more after the lock's object"))
	}
	return l, nil
}

func line(b []byte, off int64) int {
	return bytes.Count(b[:min(int(off), len(b))], []byte("\n")) + 1
}

// find is the entry for the chart like want, nil when there is none.
func (l *Lock) find(want Locked) *Locked {
	for i := range l.Charts {
		if l.Charts[i].key() == want.key() {
			return &l.Charts[i]
		}
	}
	return nil
}

// Pin is what the lock pins the chart like e to (a Helm chart's sha256, a
// git chart's commit), "" when it pins none.
func (l *Lock) Pin(e Locked) string {
	e.Repo = strings.TrimSuffix(e.Repo, "/")
	if f := l.find(e); f != nil {
		return f.SHA256 + f.Commit
	}
	return ""
}

// Set pins e, in place of what the lock pinned the same chart to.
func (l *Lock) Set(e Locked) {
	e.Repo = strings.TrimSuffix(e.Repo, "/")
	if old := l.find(e); old != nil {
		*old = e
		return
	}
	l.Charts = append(l.Charts, e)
}

// Marshal is the lock as charts pull writes it: sorted, one entry to a
// line, so that a pull request shows each pin that changes.
func (l *Lock) Marshal() []byte {
	charts := append([]Locked(nil), l.Charts...)
	sort.Slice(charts, func(i, j int) bool { return charts[i].key() < charts[j].key() })
	var b bytes.Buffer
	b.WriteString("{\"charts\": [")
	for i, c := range charts {
		line, _ := json.Marshal(c)
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}
