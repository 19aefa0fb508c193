package pipeline

import (
	"math"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

// TestSamplesRoundTrip: samples drawn once and re-mapped give what
// Evaluate gives with the same seed; their plain form (SamplesData) maps to
// the same queries and NLL without the model; inputs without labels get
// label -1.
func TestSamplesRoundTrip(t *testing.T) {
	d, f := irisModel(t)
	rows := f.Split.Test
	const K = 50
	s, err := SampleRows(f, d, rows, K, 7)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != len(rows) {
		t.Fatalf("Len %d, want %d", s.Len(), len(rows))
	}
	mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: 0.5}
	ev, err := Evaluate(f, d, rows, K, 7, mp, 10)
	if err != nil {
		t.Fatal(err)
	}
	q := s.Queries(mp)
	for i := range q {
		if q[i].Entropy != ev.Queries[i].Entropy || q[i].Pred != ev.Queries[i].Pred {
			t.Fatalf("row %d: re-mapped entropy %v pred %d, Evaluate %v %d", i, q[i].Entropy, q[i].Pred, ev.Queries[i].Entropy, ev.Queries[i].Pred)
		}
	}
	if got := s.NLL(mp); math.Abs(got-ev.Report.NLL) > 1e-12 {
		t.Fatalf("NLL %v, Evaluate's %v", got, ev.Report.NLL)
	}
	r := SamplesFrom(s.Data())
	q2 := r.Queries(mp)
	for i := range q {
		if q2[i].Entropy != q[i].Entropy || q2[i].MutualInfo != q[i].MutualInfo {
			t.Fatalf("row %d: round trip changed the query", i)
		}
	}
	if a, b := r.NLL(mp), s.NLL(mp); a != b {
		t.Fatalf("round-trip NLL %v, want %v", a, b)
	}
	fa, err := s.Fit(ptm.Softmax)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := r.Fit(ptm.Softmax)
	if err != nil || fa != fb {
		t.Fatalf("round-trip fit %v (%v), want %v", fb, err, fa)
	}
	in, err := SampleInputs(f, [][]float64{d.X[rows[0]], {100, 100, 100, 100}}, K, 7)
	if err != nil {
		t.Fatal(err)
	}
	if l := in.Labels(); len(l) != 2 || l[0] != -1 || l[1] != -1 {
		t.Fatalf("labels of unlabelled inputs %v, want [-1 -1]", l)
	}
}

// FitAbove keeps the softmax temperature on the grid at or above the
// floor (the grid's largest value when the floor exceeds it), equals Fit
// with no floor, and leaves the vote smoothing alone.
func TestFitAbove(t *testing.T) {
	d, f := irisModel(t)
	s, err := SampleRows(f, d, f.Split.Train, 50, 3)
	if err != nil {
		t.Fatal(err)
	}
	free, _ := s.Fit(ptm.Softmax)
	same, _ := s.FitAbove(ptm.Softmax, 0)
	if free != same {
		t.Errorf("FitAbove(0) %v, Fit %v", same, free)
	}
	for _, min := range []float64{1, 2, 3} {
		mp, err := s.FitAbove(ptm.Softmax, min)
		if err != nil || mp.Temperature < min || mp.Temperature > 16 {
			t.Errorf("FitAbove(%v): %v (%v)", min, mp, err)
		}
		if free.Temperature >= min && mp != free {
			t.Errorf("FitAbove(%v) %v, want the free fit %v above the floor", min, mp, free)
		}
	}
	if mp, _ := s.FitAbove(ptm.Softmax, 100); mp.Temperature != 16 {
		t.Errorf("FitAbove(100) = %v, want the grid's largest, 16", mp)
	}
	v, _ := s.Fit(ptm.Vote)
	if w, _ := s.FitAbove(ptm.Vote, 5); v != w {
		t.Errorf("vote smoothing %v with a floor, %v without", w, v)
	}
}
