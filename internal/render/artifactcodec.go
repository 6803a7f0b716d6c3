package render

import (
	"encoding/binary"
	"errors"
)

// The result cache keeps a cluster's or a region's artifacts in this
// encoding: their count, then each artifact's path, bytes and owner, each a
// length (uvarint) and its bytes. gob, which it replaces, wrote each value's
// type description again for every entry and took a sixth of a cold
// review's render CPU.

// appendArtifacts appends arts' encoding to b.
func appendArtifacts(b []byte, arts []Artifact) []byte {
	n := binary.MaxVarintLen64
	for _, a := range arts {
		n += 3*binary.MaxVarintLen64 + len(a.Path) + len(a.Bytes) + len(a.Owner)
	}
	b = append(make([]byte, 0, len(b)+n), b...)
	b = binary.AppendUvarint(b, uint64(len(arts)))
	for _, a := range arts {
		b = binary.AppendUvarint(b, uint64(len(a.Path)))
		b = append(b, a.Path...)
		b = binary.AppendUvarint(b, uint64(len(a.Bytes)))
		b = append(b, a.Bytes...)
		b = binary.AppendUvarint(b, uint64(len(a.Owner)))
		b = append(b, a.Owner...)
	}
	return b
}

var errArtifacts = errors.New("malformed cached artifacts")

// decodeArtifacts reads what appendArtifacts wrote, all of b: an entry cut
// short, too long or with anything after it is refused (the caller renders
// again). Each artifact's bytes are a copy, not a view of b.
func decodeArtifacts(b []byte) ([]Artifact, error) {
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		field := b[k : k+int(n)]
		b = b[k+int(n):]
		return field, true
	}
	count, k := binary.Uvarint(b)
	// Each artifact takes at least three bytes: no count beyond that is
	// believed, nor a slice made for it.
	if k <= 0 || count > uint64(len(b)-k)/3 {
		return nil, errArtifacts
	}
	b = b[k:]
	arts := make([]Artifact, count)
	for i := range arts {
		p, ok1 := next()
		data, ok2 := next()
		owner, ok3 := next()
		if !ok1 || !ok2 || !ok3 {
			return nil, errArtifacts
		}
		arts[i] = Artifact{Path: string(p), Bytes: append([]byte(nil), data...), Owner: string(owner)}
	}
	if len(b) != 0 {
		return nil, errArtifacts
	}
	return arts, nil
}
