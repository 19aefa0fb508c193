package pipeline

import (
	"math"
	"testing"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestSamplesHoldNoModel: samples keep what the mapping reads of the
// model that drew them (T, classes), not the model, so a fold model is
// freed once sampled (issue 31 item 4: Calibrate's and Tune's samples held
// every fold model; ptm train --data iris --clauses 1000 --epochs 5
// peaked at 5.90 GB, 2.03 GB after), and they map as the model does.
func TestSamplesHoldNoModel(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := TrainConfig{Params: ptm.Params{Clauses: 6, T: 5, S: 3, N: 8, Epochs: 2, Seed: 3, Feedback: ptm.ConsistentFeedback}, SplitSeed: 2}
	f, err := Train(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := SampleRows(f, d, f.Split.Test, 20, 7)
	if err != nil {
		t.Fatal(err)
	}
	oof, err := OutOfFold(d, f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, x := range map[string]*Samples{"SampleRows": s, "OutOfFold": oof} {
		for i, m := range x.p.models {
			if m == f.Model || len(m.SPV) > 0 {
				t.Fatalf("%s: row %d holds a model with %d SPV values", name, i, len(m.SPV))
			}
		}
	}
	labels := s.Labels()
	for _, mp := range []ptm.Mapping{{Kind: ptm.Softmax, Temperature: 0.7}, {Kind: ptm.Vote, Smoothing: 0.05}} {
		var want float64
		for i, sums := range s.p.sums {
			q := metrics.Query(f.Model.SumsToProbs(sums, 20, mp))
			want -= math.Log(math.Max(q.Mean[labels[i]], metrics.NLLFloor))
		}
		if got := s.NLL(mp) * float64(s.Len()); got != want {
			t.Errorf("%v: NLL %v, with the model itself %v", mp, got, want)
		}
	}
}

// TestCalibrateKeepsNoSamples: Calibrate, which adds up the NLL of every
// candidate as the rows are sampled, chooses exactly what fitting on the
// kept out-of-fold samples chooses, for both mapping kinds and with a
// temperature floor.
func TestCalibrateKeepsNoSamples(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mp    ptm.Mapping
		floor float64
	}{
		{ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}, -1},
		{ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}, 0},
		{ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}, 0.25},
		{ptm.Mapping{Kind: ptm.Vote, Smoothing: 0.05}, 0},
	} {
		cfg := TrainConfig{Params: ptm.Params{Clauses: 6, T: 5, S: 3, N: 8, Epochs: 2, Seed: 3, Feedback: ptm.ConsistentFeedback},
			SplitSeed: 2, Mapping: c.mp, TemperatureFloor: c.floor}
		f, err := Train(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Calibrate(d, f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		oof, err := OutOfFold(d, f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.defaults()
		want, err := oof.FitAbove(c.mp.Kind, cfg.floor()*float64(f.Model.T))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%v, floor %v: Calibrate chose %+v, the kept samples %+v", c.mp.Kind, c.floor, got, want)
		}
	}
}

// TestMeanProbIsQuerys: Calibrate's shortcut to the predictive mean of the
// label gives metrics.Query's Mean bit for bit, for both mapping kinds,
// binary and multiclass models, on sampled class sums.
func TestMeanProbIsQuerys(t *testing.T) {
	for _, name := range []string{Iris, XOR} {
		d, err := LoadData(name, "")
		if err != nil {
			t.Fatal(err)
		}
		f, err := Train(d, TrainConfig{Params: ptm.Params{Clauses: 6, T: 5, S: 3, N: 8, Epochs: 2, Seed: 3, Feedback: ptm.ConsistentFeedback}, SplitSeed: 2})
		if err != nil {
			t.Fatal(err)
		}
		s, err := SampleRows(f, d, f.Split.Test, 17, 5)
		if err != nil {
			t.Fatal(err)
		}
		var sc, pr []float64
		n := 0
		for _, mp := range []ptm.Mapping{{Kind: ptm.Softmax, Temperature: 0.3}, {Kind: ptm.Softmax, Temperature: 7}, {Kind: ptm.Vote, Smoothing: 0.02}} {
			for i, sums := range s.p.sums {
				for c := 0; c < f.Model.NumClasses; c++ {
					want := metrics.Query(f.Model.SumsToProbs(sums, 17, mp)).Mean[c]
					if got := meanProb(f.Model, sums, 17, mp, c, &sc, &pr); got != want {
						t.Fatalf("%s, %v, row %d, class %d: %v, Query %v", name, mp, i, c, got, want)
					}
					n++
				}
			}
		}
		if n == 0 {
			t.Fatalf("%s: nothing compared", name)
		}
	}
}
