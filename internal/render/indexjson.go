package render

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// ParseIndex decodes index.json as encoding/json's Unmarshal does. A file
// of the shape the renderer writes (plain strings without escapes, integers,
// booleans, every key known and given once) is read by indexReader, a
// quarter of Unmarshal's time on the 4 MB index of a 2,200-cluster fleet,
// which every review and the first render of a fresh clone read; anything
// else goes to Unmarshal. TestIndexReaderIsUnmarshal holds the two to the
// same Index.
func ParseIndex(b []byte) (*Index, error) {
	if idx, ok := readIndexFast(b); ok {
		return idx, nil
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, err
	}
	return &idx, nil
}

// readIndexFast reads b with indexReader, or says it cannot.
func readIndexFast(b []byte) (*Index, bool) {
	r := &indexReader{s: string(b)}
	var idx Index
	if !r.index(&idx) {
		return nil, false
	}
	r.space()
	return &idx, r.i == len(r.s)
}

// indexReader reads index.json's JSON without reflection, its strings cut
// from one copy of the file. Each method reads one value at r.i and says
// whether it was of the shape it reads; false leaves the file to
// encoding/json.
type indexReader struct {
	s string
	i int
}

func (r *indexReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// next skips space and takes the byte c.
func (r *indexReader) next(c byte) bool {
	r.space()
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// peek skips space and says whether the byte c is next, not taking it.
func (r *indexReader) peek(c byte) bool {
	r.space()
	return r.i < len(r.s) && r.s[r.i] == c
}

// str reads a string without escapes or control characters, in valid
// UTF-8 (encoding/json would change what these hold). A backslash before
// the first quote found refuses the string, so an escaped quote is never
// taken for its end.
func (r *indexReader) str(out *string) bool {
	if !r.next('"') {
		return false
	}
	end := strings.IndexByte(r.s[r.i:], '"')
	if end < 0 {
		return false
	}
	v := r.s[r.i : r.i+end]
	ascii := true
	for j := 0; j < len(v); j++ {
		if c := v[j]; c < 0x20 || c == '\\' {
			return false
		} else if c >= 0x80 {
			ascii = false
		}
	}
	if !ascii && !utf8.ValidString(v) {
		return false
	}
	r.i += end + 1
	*out = v
	return true
}

// strings reads an array of strings; an empty one is an empty slice, as
// encoding/json makes it.
func (r *indexReader) strings(out *[]string) bool {
	return r.array(func() bool {
		var s string
		if !r.str(&s) {
			return false
		}
		*out = append(*out, s)
		return true
	}, func() { *out = []string{} })
}

// array reads an array, each item by item; empty is called for [].
func (r *indexReader) array(item func() bool, empty func()) bool {
	if !r.next('[') {
		return false
	}
	if r.next(']') {
		empty()
		return true
	}
	for {
		if !item() {
			return false
		}
		if r.next(']') {
			return true
		}
		if !r.next(',') {
			return false
		}
	}
}

// object reads an object whose keys field knows, each once (n keys at
// most); field reads the key's value.
func (r *indexReader) object(n int, field func(key string) (slot int, ok bool)) bool {
	if !r.next('{') {
		return false
	}
	if r.next('}') {
		return true
	}
	var seen uint64
	for {
		var key string
		if !r.str(&key) || !r.next(':') {
			return false
		}
		slot, ok := field(key)
		if !ok || slot >= n || seen&(1<<slot) != 0 {
			return false
		}
		seen |= 1 << slot
		if r.next('}') {
			return true
		}
		if !r.next(',') {
			return false
		}
	}
}

// integer reads an integer of at most nine digits, written as JSON
// writes one (no leading zero, fraction or exponent).
func (r *indexReader) integer(out *int) bool {
	r.space()
	neg := r.i < len(r.s) && r.s[r.i] == '-'
	if neg {
		r.i++
	}
	digits, v := r.i, 0
	for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		v = v*10 + int(r.s[r.i]-'0')
		r.i++
	}
	n := r.i - digits
	if n == 0 || n > 9 || (n > 1 && r.s[digits] == '0') || (r.i < len(r.s) && (r.s[r.i] == '.' || r.s[r.i] == 'e' || r.s[r.i] == 'E')) {
		return false
	}
	if neg {
		v = -v
	}
	*out = v
	return true
}

// boolean reads true or false.
func (r *indexReader) boolean(out *bool) bool {
	r.space()
	for _, w := range []struct {
		text string
		v    bool
	}{{"true", true}, {"false", false}} {
		if len(r.s)-r.i >= len(w.text) && r.s[r.i:r.i+len(w.text)] == w.text {
			r.i += len(w.text)
			*out = w.v
			return true
		}
	}
	return false
}

func (r *indexReader) index(x *Index) bool {
	return r.object(7, func(key string) (int, bool) {
		switch key {
		case "//":
			return 0, r.str(&x.Marker)
		case "generator":
			return 1, r.str(&x.Generator)
		case "renderer":
			return 2, r.str(&x.Renderer)
		case "sectors":
			return 3, r.array(func() bool {
				x.Sectors = append(x.Sectors, IndexSector{})
				return r.sector(&x.Sectors[len(x.Sectors)-1])
			}, func() { x.Sectors = []IndexSector{} })
		case "regions":
			return 4, r.array(func() bool {
				x.Regions = append(x.Regions, IndexRegion{})
				return r.region(&x.Regions[len(x.Regions)-1])
			}, func() { x.Regions = []IndexRegion{} })
		case "clusters":
			return 5, r.array(func() bool {
				x.Clusters = append(x.Clusters, IndexCluster{})
				return r.cluster(&x.Clusters[len(x.Clusters)-1])
			}, func() { x.Clusters = []IndexCluster{} })
		case "files":
			return 6, r.strings(&x.Files)
		}
		return 0, false
	})
}

func (r *indexReader) sector(x *IndexSector) bool {
	return r.object(5, func(key string) (int, bool) {
		switch key {
		case "name":
			return 0, r.str(&x.Name)
		case "order":
			return 1, r.integer(&x.Order)
		case "environment":
			return 2, r.str(&x.Environment)
		case "soak":
			return 3, r.str(&x.Soak)
		case "regions":
			return 4, r.strings(&x.Regions)
		}
		return 0, false
	})
}

func (r *indexReader) region(x *IndexRegion) bool {
	return r.object(5, func(key string) (int, bool) {
		switch key {
		case "name":
			return 0, r.str(&x.Name)
		case "sector":
			return 1, r.str(&x.Sector)
		case "environment":
			return 2, r.str(&x.Environment)
		case "hash":
			return 3, r.str(&x.Hash)
		case "files":
			return 4, r.strings(&x.Files)
		}
		return 0, false
	})
}

func (r *indexReader) cluster(x *IndexCluster) bool {
	return r.object(11, func(key string) (int, bool) {
		switch key {
		case "id":
			return 0, r.str(&x.ID)
		case "region":
			return 1, r.str(&x.Region)
		case "name":
			return 2, r.str(&x.Name)
		case "type":
			return 3, r.str(&x.Type)
		case "sector":
			return 4, r.str(&x.Sector)
		case "environment":
			return 5, r.str(&x.Environment)
		case "delete":
			return 6, r.boolean(&x.Delete)
		case "delete_pipeline":
			return 7, r.boolean(&x.DeletePipeline)
		case "input":
			return 8, r.str(&x.Input)
		case "hash":
			return 9, r.str(&x.Hash)
		case "files":
			return 10, r.strings(&x.Files)
		}
		return 0, false
	})
}
