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
