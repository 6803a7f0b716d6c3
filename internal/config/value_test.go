package config

import (
	"testing"

	"github.com/regionctl/regionctl/internal/diag"
)

// TestFloatsKeepTheirValue: a float's number lives in Int's bits; it must
// come back as the number through every reader of values.
func TestFloatsKeepTheirValue(t *testing.T) {
	v, diags := Decode("f.yaml", LayerGlobal, []byte("ratio: 1.5\nhalf: -0.25\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for key, want := range map[string]float64{"ratio": 1.5, "half": -0.25} {
		f := v.Get(key)
		if f == nil || f.Kind != Float {
			t.Fatalf("%s = %+v, want a float", key, f)
		}
		if f.Float() != want || f.Interface() != want {
			t.Errorf("%s = %v (Interface %v), want %v", key, f.Float(), f.Interface(), want)
		}
	}
	if s := v.Get("ratio").Scalar(); s != "1.5" {
		t.Errorf("Scalar = %q", s)
	}
	if Hash(v.Get("ratio")) == Hash(NewFloat(2.5, Origin{Pos: diag.Pos{File: "f.yaml"}})) {
		t.Error("1.5 and 2.5 hash alike")
	}
	if (&Value{Kind: Int, Int: 3}).Float() != 0 {
		t.Error("Float of an int is not 0")
	}
}
