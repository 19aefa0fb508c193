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

func TestEntropyAndMI(t *testing.T) {
	if !near(Entropy([]float64{0.5, 0.5}), math.Ln2) || Entropy([]float64{1, 0}) != 0 {
		t.Fatal("Entropy wrong")
	}
	// Two confident samples that disagree: total uncertainty ln 2, all of it
	// epistemic.
	s := [][]float64{{1, 0}, {0, 1}}
	if !near(PredictiveEntropy(s), math.Ln2) || !near(MutualInformation(s), math.Ln2) {
		t.Fatalf("H=%v MI=%v, want ln 2 both", PredictiveEntropy(s), MutualInformation(s))
	}
	// Identical uncertain samples: all aleatoric.
	u := [][]float64{{0.5, 0.5}, {0.5, 0.5}}
	if !near(PredictiveEntropy(u), math.Ln2) || MutualInformation(u) != 0 {
		t.Fatalf("H=%v MI=%v, want ln 2 and 0", PredictiveEntropy(u), MutualInformation(u))
	}
	sd := SampleStd([][]float64{{0.2, 0.8}, {0.6, 0.4}})
	if !near(sd[0], 0.2) || !near(sd[1], 0.2) {
		t.Fatalf("SampleStd = %v, want [0.2 0.2]", sd)
	}
	if MeanProba(nil) != nil || MutualInformation(nil) != 0 || SampleStd(nil) != nil {
		t.Fatal("empty samples")
	}
}

func TestECE(t *testing.T) {
	// Bin [0.9,1): confidences 0.9, 0.95 with one correct → |0.5-0.925|·2/4.
	// Bin [0.6,0.7): confidence 0.6, correct → 0.4·1/4.
	// Bin [1,1] (last): confidence 1, correct → 0.
	p := [][]float64{{0.9, 0.1}, {0.05, 0.95}, {0.6, 0.4}, {0, 1}}
	y := []int{0, 0, 0, 1}
	want := (math.Abs(1-1.85) + math.Abs(1-0.6) + 0) / 4
	if got := ECE(p, y, 10); !near(got, want) {
		t.Fatalf("ECE = %v, want %v", got, want)
	}
	if !math.IsNaN(ECE(nil, nil, 10)) || !math.IsNaN(ECE(p, y, 0)) {
		t.Fatal("ECE of empty input should be NaN")
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
