package baseline

import (
	"errors"
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestValidateFit(t *testing.T) {
	d, err := ValidateFit([][]float64{{1, 2}, {3, 4}}, []int{0, 2}, 3)
	if err != nil || d != 2 {
		t.Fatalf("valid input: d=%d err=%v", d, err)
	}
	bad := []struct {
		X [][]float64
		y []int
		c int
	}{
		{nil, nil, 2},
		{[][]float64{{}}, []int{0}, 2},
		{[][]float64{{1}}, []int{0, 1}, 2},
		{[][]float64{{1}}, []int{0}, 1},
		{[][]float64{{1}, {1, 2}}, []int{0, 1}, 2},
		{[][]float64{{1}, {math.Inf(1)}}, []int{0, 1}, 2},
		{[][]float64{{1}, {2}}, []int{0, -1}, 2},
	}
	for i, b := range bad {
		if _, err := ValidateFit(b.X, b.y, b.c); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("case %d: err = %v, want ErrInvalidInput", i, err)
		}
	}
}

func TestArgmax(t *testing.T) {
	if Argmax(nil) != -1 || Argmax([]float64{0.2, 0.5, 0.5, 0.1}) != 1 {
		t.Fatal("Argmax wrong")
	}
}

// fixedSamples returns the same K sample vectors for every input, cycling
// through its rows.
type fixedSamples [][]float64

func (f fixedSamples) Fit([][]float64, []int, int) error { return nil }
func (f fixedSamples) Proba([]float64) []float64         { return f[0] }
func (f fixedSamples) Samples(_ []float64, k int) [][]float64 {
	s := make([][]float64, k)
	for i := range s {
		s[i] = f[i%len(f)]
	}
	return s
}

// TestQuery checks that a classifier's samples are summarised by
// golden/metrics (entropies in bits): disagreeing confident samples are all
// epistemic uncertainty, identical uncertain samples all aleatoric.
func TestQuery(t *testing.T) {
	q, err := Query(fixedSamples{{1, 0}, {0, 1}}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !near(q.Entropy, 1) || !near(q.MutualInfo, 1) || !near(q.Std[0], 0.5) {
		t.Fatalf("disagreeing samples: H=%v MI=%v std=%v, want 1 bit, 1 bit, 0.5", q.Entropy, q.MutualInfo, q.Std)
	}
	q, err = Query(fixedSamples{{0.5, 0.5}}, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !near(q.Entropy, 1) || q.MutualInfo != 0 || q.StdMean != 0 {
		t.Fatalf("identical samples: H=%v MI=%v std=%v, want 1 bit, 0, 0", q.Entropy, q.MutualInfo, q.StdMean)
	}
	q, err = Query(fixedSamples{{0.2, 0.8}, {0.6, 0.4}}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !near(q.Std[0], 0.2) || !near(q.Std[1], 0.2) || !near(q.Mean[0], 0.4) {
		t.Fatalf("std %v mean %v, want [0.2 0.2] and 0.4", q.Std, q.Mean)
	}
	if _, err := Query(fixedSamples{{1, 0}}, nil, 0); err == nil {
		t.Fatal("K = 0 accepted")
	}
}

// rowClassifier predicts a fixed probability vector per row, the row being
// identified by its single feature.
type rowClassifier [][]float64

func (r rowClassifier) Fit([][]float64, []int, int) error { return nil }
func (r rowClassifier) Proba(x []float64) []float64       { return r[int(x[0])] }
func (r rowClassifier) Samples(x []float64, k int) [][]float64 {
	s := make([][]float64, k)
	for i := range s {
		s[i] = r[int(x[0])]
	}
	return s
}

// TestEvaluate checks the test-set report against a hand computation with
// golden/metrics' (lo, hi] bins: confidence 0.9 (right) is alone in bin 8,
// 0.95 (wrong) and 1 (right) share bin 9, 0.6 (right) is alone in bin 5.
func TestEvaluate(t *testing.T) {
	c := rowClassifier{{0.9, 0.1}, {0.05, 0.95}, {0.6, 0.4}, {0, 1}}
	X := [][]float64{{0}, {1}, {2}, {3}}
	y := []int{0, 0, 0, 1}
	r, qs, err := Evaluate(c, X, y, 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := (math.Abs(1-0.9) + math.Abs(1-1.95) + math.Abs(1-0.6)) / 4
	if len(qs) != 4 || !near(r.ECE, want) || r.Accuracy != 0.75 || r.N != 4 {
		t.Fatalf("report %+v, want ECE %v accuracy 0.75", r, want)
	}
	if _, _, err := Evaluate(c, X, y[:3], 3, 10); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, _, err := Evaluate(c, X, []int{0, 0, 0, 2}, 3, 10); err == nil {
		t.Fatal("label out of range accepted")
	}
}

type constClassifier []float64

func (c constClassifier) Fit([][]float64, []int, int) error { return nil }
func (c constClassifier) Proba([]float64) []float64         { return c }
func (c constClassifier) Samples(_ []float64, k int) [][]float64 {
	s := make([][]float64, k)
	for i := range s {
		s[i] = c
	}
	return s
}

func TestAccuracy(t *testing.T) {
	c := constClassifier{0.1, 0.7, 0.2}
	if Predict(c, nil) != 1 {
		t.Fatal("Predict")
	}
	if a := Accuracy(c, [][]float64{{0}, {0}, {0}, {0}}, []int{1, 0, 1, 1}); a != 0.75 {
		t.Fatalf("Accuracy = %v", a)
	}
	if !math.IsNaN(Accuracy(c, nil, nil)) {
		t.Fatal("Accuracy of no rows should be NaN")
	}
}
