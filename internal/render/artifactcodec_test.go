package render

import (
	"bytes"
	"reflect"
	"testing"
)

func TestArtifactsRoundTrip(t *testing.T) {
	cases := [][]Artifact{
		nil,
		{{Path: "production/us-east-1/mc01.tfvars.json", Bytes: []byte("{}\n"), Owner: "us-east-1/mc01"}},
		{{Path: "index.json"}, {Path: "a", Bytes: bytes.Repeat([]byte{0, 0xff, '\n'}, 300), Owner: "r"}, {Path: "é/ü", Bytes: []byte{}, Owner: ""}},
	}
	for _, arts := range cases {
		b := appendArtifacts([]byte("prefix"), arts)
		if !bytes.HasPrefix(b, []byte("prefix")) {
			t.Fatalf("appendArtifacts dropped what it appends to")
		}
		got, err := decodeArtifacts(b[len("prefix"):])
		if err != nil {
			t.Fatalf("%v: %v", arts, err)
		}
		if len(got) != len(arts) {
			t.Fatalf("%d artifacts back, want %d", len(got), len(arts))
		}
		for i := range arts {
			if got[i].Path != arts[i].Path || !bytes.Equal(got[i].Bytes, arts[i].Bytes) || got[i].Owner != arts[i].Owner {
				t.Errorf("artifact %d: got %+v, want %+v", i, got[i], arts[i])
			}
		}
		// Every cut of the entry, and the entry with a byte more, is
		// refused.
		enc := b[len("prefix"):]
		for n := 0; n < len(enc); n++ {
			if _, err := decodeArtifacts(enc[:n]); err == nil && n != len(enc) {
				t.Errorf("%d of %d bytes decoded", n, len(enc))
			}
		}
		if _, err := decodeArtifacts(append(append([]byte(nil), enc...), 0)); err == nil {
			t.Error("an entry with a byte after it decoded")
		}
	}
}

// FuzzDecodeArtifacts: whatever the cache file holds, decoding returns an
// error or artifacts whose encoding decodes to them again; it never panics
// nor allocates for a count the bytes cannot hold.
func FuzzDecodeArtifacts(f *testing.F) {
	f.Add(appendArtifacts(nil, []Artifact{{Path: "p", Bytes: []byte("b"), Owner: "o"}}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{3, 1, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		arts, err := decodeArtifacts(b)
		if err != nil {
			return
		}
		if again := mustDecode(t, appendArtifacts(nil, arts)); !reflect.DeepEqual(again, arts) {
			t.Fatalf("decoded %q to %+v, which encodes to what decodes to %+v", b, arts, again)
		}
	})
}

func mustDecode(t *testing.T, b []byte) []Artifact {
	arts, err := decodeArtifacts(b)
	if err != nil {
		t.Fatal(err)
	}
	return arts
}
