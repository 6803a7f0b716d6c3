package rollout

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
)

// SetValue returns src (a layer file) with the string at path set to value,
// changing nothing else: an existing value is replaced where it stands, a
// missing one is inserted as block lines under its deepest existing parent
// (or at the end of the file). The result is parsed back and must differ
// from src in that one value only.
func SetValue(file string, src []byte, path []string, value string) ([]byte, error) {
	doc, diags := config.Decode(file, config.LayerSector, src)
	if diags.HasErrors() || doc == nil {
		return nil, fmt.Errorf("%s does not parse: %v", file, diags)
	}
	lines := splitLines(src)
	quoted := strconv.Quote(value)
	if leaf := doc.Lookup(path...); leaf != nil {
		if leaf.Kind == config.Map || leaf.Kind == config.List {
			return nil, fmt.Errorf("%s:%d: %s is not a single value", file, leaf.Origin.Pos.Line, strings.Join(path, "."))
		}
		ln, col := leaf.Origin.Pos.Line-1, leaf.Origin.Pos.Col-1
		line := lines[ln]
		end := scalarEnd(line, col)
		if end < 0 {
			return nil, fmt.Errorf("%s:%d: cannot find the end of %s's value", file, ln+1, strings.Join(path, "."))
		}
		lines[ln] = line[:col] + quoted + line[end:]
	} else {
		// The deepest mapping of path the file already has.
		depth := 0
		parent := doc
		for depth < len(path)-1 {
			next := parent.Get(path[depth])
			if next == nil || next.Kind != config.Map {
				break
			}
			parent, depth = next, depth+1
		}
		if parent.Get(path[depth]) != nil {
			return nil, fmt.Errorf("%s: %s is not a mapping", file, strings.Join(path[:depth+1], "."))
		}
		indent, after := 0, len(lines)
		if depth > 0 {
			if len(parent.Fields) == 0 {
				return nil, fmt.Errorf("%s: %s is empty or written in flow style; write it as a block for promote to edit", file, strings.Join(path[:depth], "."))
			}
			first := parent.Fields[0].KeyPos
			if first.Line == parentKeyLine(doc, path[:depth]) {
				return nil, fmt.Errorf("%s:%d: %s is written in flow style; write it as a block for promote to edit", file, first.Line, strings.Join(path[:depth], "."))
			}
			indent = first.Col - 1
			after = lastLine(parent)
		}
		var b strings.Builder
		for i, k := range path[depth:] {
			b.WriteString(strings.Repeat(" ", indent+2*i))
			b.WriteString(k + ":")
			if i == len(path[depth:])-1 {
				b.WriteString(" " + quoted)
			}
			b.WriteString("\n")
		}
		if after == len(lines) && len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
			lines[len(lines)-1] += "\n"
		}
		lines = append(lines[:after], append([]string{b.String()}, lines[after:]...)...)
	}
	out := []byte(strings.Join(lines, ""))
	return out, checkOneChange(file, doc, out, path, value)
}

// RemoveValue returns src without the value at path (its line), and
// without the mappings above it that are left empty.
func RemoveValue(file string, src []byte, path []string) ([]byte, error) {
	doc, diags := config.Decode(file, config.LayerSector, src)
	if diags.HasErrors() || doc == nil {
		return nil, fmt.Errorf("%s does not parse: %v", file, diags)
	}
	leaf := doc.Lookup(path...)
	if leaf == nil {
		return src, nil
	}
	if leaf.Kind == config.Map || leaf.Kind == config.List {
		return nil, fmt.Errorf("%s: %s is not a single value", file, strings.Join(path, "."))
	}
	remove := map[int]bool{}
	for d := len(path); d > 0; d-- {
		parent := doc.Lookup(path[:d-1]...)
		f, _ := parent.Field(path[d-1])
		remove[f.KeyPos.Line-1] = true
		if d == len(path) && f.Value.Origin.Pos.Line != f.KeyPos.Line {
			return nil, fmt.Errorf("%s:%d: %s's value is not on its key's line", file, f.KeyPos.Line, strings.Join(path, "."))
		}
		if d > 1 && len(parent.Fields) > 1 {
			break // the parent keeps other keys
		}
		if d > 1 && parentKeyLine(doc, path[:d-1]) == f.KeyPos.Line {
			return nil, fmt.Errorf("%s:%d: %s is written in flow style; remove it by hand", file, f.KeyPos.Line, strings.Join(path[:d-1], "."))
		}
	}
	lines := splitLines(src)
	var b strings.Builder
	for i, l := range lines {
		if !remove[i] {
			b.WriteString(l)
		}
	}
	out := []byte(b.String())
	after, diags := config.Decode(file, config.LayerSector, out)
	if diags.HasErrors() || (after != nil && after.Lookup(path...) != nil) {
		return nil, fmt.Errorf("%s: removing %s would not leave a valid file; edit it by hand", file, strings.Join(path, "."))
	}
	return out, nil
}

// checkOneChange parses the edited file and compares it with the original
// with path set to value: anything else that moved is a bug, not an edit.
func checkOneChange(file string, before *config.Value, out []byte, path []string, value string) error {
	after, diags := config.Decode(file, config.LayerSector, out)
	if diags.HasErrors() || after == nil {
		return fmt.Errorf("%s: the edit does not parse (%v); edit it by hand", file, diags)
	}
	want := set(before, path, value)
	if config.Hash(want) != config.Hash(after) {
		return fmt.Errorf("%s: the edit changed more than %s; edit it by hand", file, strings.Join(path, "."))
	}
	return nil
}

func set(v *config.Value, path []string, value string) *config.Value {
	if len(path) == 0 {
		return config.NewString(value, config.Origin{})
	}
	if v == nil || v.Kind != config.Map {
		v = config.NewMap(config.Origin{}, nil)
	}
	return v.With(path[0], v.Origin.Pos, set(v.Get(path[0]), path[1:], value))
}

// scalarEnd returns where the scalar starting at col of line ends.
func scalarEnd(line string, col int) int {
	if col >= len(line) {
		return -1
	}
	switch line[col] {
	case '"':
		for i := col + 1; i < len(line); i++ {
			if line[i] == '\\' {
				i++
			} else if line[i] == '"' {
				return i + 1
			}
		}
		return -1
	case '\'':
		for i := col + 1; i < len(line); i++ {
			if line[i] == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
		return -1
	}
	end := len(strings.TrimRight(line, "\r\n"))
	if i := strings.Index(line[col:], " #"); i >= 0 {
		end = col + i
	}
	return col + len(strings.TrimRight(line[col:end], " \t"))
}

func parentKeyLine(doc *config.Value, path []string) int {
	parent := doc.Lookup(path[:len(path)-1]...)
	f, ok := parent.Field(path[len(path)-1])
	if !ok {
		return 0
	}
	return f.KeyPos.Line
}

// lastLine is the index of the line after v's last line.
func lastLine(v *config.Value) int {
	last := v.Origin.Pos.Line
	v.Walk("", func(_ string, leaf *config.Value) {
		if leaf.Origin.Pos.Line > last {
			last = leaf.Origin.Pos.Line
		}
	})
	for _, f := range v.Fields {
		if f.KeyPos.Line > last {
			last = f.KeyPos.Line
		}
	}
	return last
}

// splitLines splits src after each newline, without the empty element
// SplitAfter leaves after a final newline.
func splitLines(src []byte) []string {
	lines := strings.SplitAfter(string(src), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}
