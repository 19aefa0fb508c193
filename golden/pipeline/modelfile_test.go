package pipeline

import (
	"reflect"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestFileRoundTrip: Train returns the model as the model file stores it
// (golden/modelfile format 2, SPVs at 16 bits or at the fixed-point
// trainer's width), so that evaluating it before and after a write and
// read gives the same samples and figures.
func TestFileRoundTrip(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.DefaultParams()
	p.Epochs = 5
	for _, c := range []struct {
		name string
		cfg  TrainConfig
		bits int
	}{
		{"float", TrainConfig{Params: p, SplitSeed: 1}, 16},
		{"float-8", TrainConfig{Params: p, SplitSeed: 1, Bits: 8}, 16},
		{"fixed", TrainConfig{Params: p, SplitSeed: 1, Fixed: true}, 15},
		{"fixed-10", TrainConfig{Params: p, SplitSeed: 1, Fixed: true, Bits: 10}, 10},
	} {
		f, err := Train(d, c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r, err := f.Canonicalize(); err != nil || r.TAs != 0 || r.Bits != c.bits || f.SPVBits != c.bits {
			t.Fatalf("%s: Train's model is not canonical at %d bits: %+v %v", c.name, c.bits, r, err)
		}
		data, err := modelfile.Encode(f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g, err := modelfile.Decode(data, c.name+".ptm")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(f.Model.SPV, g.Model.SPV) || !reflect.DeepEqual(f.Bank, g.Bank) {
			t.Fatalf("%s: the model read back differs from Train's", c.name)
		}
		a, err := Evaluate(f, d, f.Split.Test, 20, 3, f.Mapping, 10)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Evaluate(g, d, g.Split.Test, 20, 3, g.Mapping, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Report, b.Report) || !reflect.DeepEqual(a.Queries, b.Queries) {
			t.Errorf("%s: evaluation before the file %+v, after %+v", c.name, a.Report, b.Report)
		}
		t.Logf("%s: %d bytes, SPVs at %d bits, bank at %d; accuracy %.3f", c.name, len(data), g.SPVBits, g.Bank.Bits, b.Report.Accuracy)
	}
}
