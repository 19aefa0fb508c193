package gp

import (
	"testing"

	"github.com/ptmhw/ptm/experiments/baseline/internal/datasets"
)

// irisSplit returns the seed-1 stratified 80/20 Iris split.
func irisSplit(b *testing.B) (X [][]float64, y []int, Xt [][]float64) {
	b.Helper()
	d, err := datasets.LoadCSV("../testdata/iris.csv")
	if err != nil {
		b.Fatal(err)
	}
	train, test := datasets.StratifiedSplit(d.Y, 0.2, 1)
	X, y = d.Subset(train)
	Xt, _ = d.Subset(test)
	return X, y, Xt
}

func benchFit(b *testing.B, mc Multiclass) {
	X, y, _ := irisSplit(b)
	for b.Loop() {
		if err := New(Opts{Multiclass: mc, Seed: 1}).Fit(X, y, 3); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSamples(b *testing.B, mc Multiclass) {
	X, y, Xt := irisSplit(b)
	m := New(Opts{Multiclass: mc, Seed: 1})
	if err := m.Fit(X, y, 3); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		m.Samples(Xt[i%len(Xt)], 100)
		i++
	}
}

// BenchmarkFitIris fits the softmax GP (hyper-parameter search included) on
// 120 Iris rows.
func BenchmarkFitIris(b *testing.B) { benchFit(b, Softmax) }

// BenchmarkFitIrisOneVsRest fits three binary GPs on 120 Iris rows.
func BenchmarkFitIrisOneVsRest(b *testing.B) { benchFit(b, OneVsRest) }

// BenchmarkSamplesIris draws K=100 samples for one Iris test row.
func BenchmarkSamplesIris(b *testing.B) { benchSamples(b, Softmax) }

// BenchmarkSamplesIrisOneVsRest draws K=100 one-vs-rest samples.
func BenchmarkSamplesIrisOneVsRest(b *testing.B) { benchSamples(b, OneVsRest) }

// BenchmarkProbaIris evaluates the predictive mean for one Iris test row.
func BenchmarkProbaIris(b *testing.B) {
	X, y, Xt := irisSplit(b)
	m := New(Opts{Seed: 1})
	if err := m.Fit(X, y, 3); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		m.Proba(Xt[i%len(Xt)])
		i++
	}
}

// BenchmarkFitBinary1000 fits a binary GP on 1000 2-D points (hyper-parameter
// search on the default 300-point subset).
func BenchmarkFitBinary1000(b *testing.B) {
	X, y := datasets.Blobs([][]float64{{-1, -1}, {1, 1}}, 500, 0.8, 1)
	for b.Loop() {
		if err := New(Opts{Seed: 1}).Fit(X, y, 2); err != nil {
			b.Fatal(err)
		}
	}
}
