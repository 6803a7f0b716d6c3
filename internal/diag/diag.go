package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a diagnostic fails the command.
type Severity uint8

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Pos is a position in a user's file. Line and Col are 1-based; a zero Line
// means the whole file.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// String formats p as file:line:col, dropping the parts that are unknown.
func (p Pos) String() string {
	switch {
	case p.File == "":
		return "<unknown>"
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Related is a second place a diagnostic is about, such as the earlier side of
// a conflict.
type Related struct {
	Pos     Pos    `json:"pos"`
	Message string `json:"message"`
}

// Diagnostic is one problem found in the user's input.
type Diagnostic struct {
	Severity Severity  `json:"-"`
	Summary  string    `json:"summary"`
	Detail   string    `json:"detail,omitempty"`
	Pos      Pos       `json:"pos"`
	Path     string    `json:"path,omitempty"` // dotted config path, when the problem is about a value
	Related  []Related `json:"related,omitempty"`
}

func (d Diagnostic) Error() string { return d.Pos.String() + ": " + d.Summary }

// Diagnostics is a list of diagnostics; it is also an error when it holds one.
type Diagnostics []Diagnostic

// Errorf builds an error diagnostic at pos.
func Errorf(pos Pos, detail string, summary string, args ...any) Diagnostic {
	return Diagnostic{Severity: Error, Pos: pos, Summary: fmt.Sprintf(summary, args...), Detail: detail}
}

// HasErrors reports whether ds holds at least one error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Err returns ds as an error when it holds an error, nil otherwise.
func (ds Diagnostics) Err() error {
	if ds.HasErrors() {
		return ds
	}
	return nil
}

func (ds Diagnostics) Error() string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Error())
	}
	return b.String()
}

// Sorted returns ds ordered by file, line and column, without exact duplicates.
func (ds Diagnostics) Sorted() Diagnostics {
	out := append(Diagnostics(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return out[i].Summary < out[j].Summary
	})
	w := 0
	for i, d := range out {
		if i > 0 && d.Pos == out[w-1].Pos && d.Summary == out[w-1].Summary {
			continue
		}
		out[w] = d
		w++
	}
	return out[:w]
}
