package baseline

import (
	"errors"
	"fmt"
	"math"
)

// Classifier is a probabilistic classifier whose predictions can be sampled.
type Classifier interface {
	// Fit trains the model on the rows of X with labels y in [0, nClasses).
	Fit(X [][]float64, y []int, nClasses int) error
	// Proba returns the predictive mean class probabilities for x.
	Proba(x []float64) []float64
	// Samples returns K sampled class-probability vectors for x (K x nClasses),
	// the per-sample p_j(Y|X) used for entropy / mutual information / std.
	Samples(x []float64, K int) [][]float64
}

// ErrInvalidInput is wrapped by every error that reports malformed training
// data (empty or ragged X, mismatched lengths, labels out of range, non-finite
// features). Test for it with errors.Is.
var ErrInvalidInput = errors.New("baseline: invalid input")

// ValidateFit checks training data for Classifier.Fit and returns the number
// of features. It requires at least one row, rows of equal non-zero length,
// finite feature values, len(y) == len(X), nClasses >= 2 and every label in
// [0, nClasses). Errors wrap ErrInvalidInput.
func ValidateFit(X [][]float64, y []int, nClasses int) (int, error) {
	if len(X) == 0 {
		return 0, fmt.Errorf("%w: no training rows", ErrInvalidInput)
	}
	if len(y) != len(X) {
		return 0, fmt.Errorf("%w: %d rows but %d labels", ErrInvalidInput, len(X), len(y))
	}
	if nClasses < 2 {
		return 0, fmt.Errorf("%w: nClasses = %d, need at least 2", ErrInvalidInput, nClasses)
	}
	d := len(X[0])
	if d == 0 {
		return 0, fmt.Errorf("%w: rows have no features", ErrInvalidInput)
	}
	for i, row := range X {
		if len(row) != d {
			return 0, fmt.Errorf("%w: row %d has %d features, row 0 has %d", ErrInvalidInput, i, len(row), d)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%w: row %d feature %d is %v", ErrInvalidInput, i, j, v)
			}
		}
		if y[i] < 0 || y[i] >= nClasses {
			return 0, fmt.Errorf("%w: label %d of row %d outside [0, %d)", ErrInvalidInput, y[i], i, nClasses)
		}
	}
	return d, nil
}

// Argmax returns the index of the largest element of p (the first one on
// ties), or -1 if p is empty.
func Argmax(p []float64) int {
	best := -1
	for i, v := range p {
		if best < 0 || v > p[best] {
			best = i
		}
	}
	return best
}

// Predict returns the most probable class of x under c.Proba.
func Predict(c Classifier, x []float64) int {
	return Argmax(c.Proba(x))
}

// Accuracy returns the fraction of rows of X whose predicted class equals y.
// It returns NaN for empty input.
func Accuracy(c Classifier, X [][]float64, y []int) float64 {
	if len(X) == 0 {
		return math.NaN()
	}
	correct := 0
	for i, x := range X {
		if Predict(c, x) == y[i] {
			correct++
		}
	}
	return float64(correct) / float64(len(X))
}
