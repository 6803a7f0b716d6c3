package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// TestDecodersAreReusedOnlyAtADocumentsEnd: a decoder is kept for the next
// document only when it stopped exactly at the end of this one, so what is
// left of one document never becomes the start of another's.
func TestDecodersAreReusedOnlyAtADocumentsEnd(t *testing.T) {
	for i := 0; i < 3; i++ {
		if doc, err := decode([]byte(`{"a":1}{"b":2}`)); err == nil {
			t.Fatalf("two documents decoded as one: %v", doc)
		}
		doc, err := decode([]byte(`{"c":3}`))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]any{"c": json.Number("3")}; !reflect.DeepEqual(doc, want) {
			t.Fatalf("decoded %v, want %v", doc, want)
		}
	}
}

// TestDecodeIsAFreshDecode: documents decoded one after another, on every
// core, each decode as a new json.Decoder decodes it.
func TestDecodeIsAFreshDecode(t *testing.T) {
	var docs [][]byte
	for i := 0; i < 200; i++ {
		v := map[string]any{"n": i, "s": fmt.Sprint("x", i), "l": make([]int, i%17), "f": 1.5 * float64(i)}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, b := range docs {
				got, err := decode(b)
				if err != nil {
					t.Error(err)
					return
				}
				var want any
				dec := json.NewDecoder(bytes.NewReader(b))
				dec.UseNumber()
				if err := dec.Decode(&want); err != nil {
					t.Error(err)
					return
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("decode(%s) = %v, want %v", b, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
