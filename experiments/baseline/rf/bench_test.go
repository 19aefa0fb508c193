package rf

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

// BenchmarkFitIris grows 100 trees on 120 Iris rows (GOMAXPROCS workers).
func BenchmarkFitIris(b *testing.B) {
	X, y, _ := irisSplit(b)
	for b.Loop() {
		if err := New(Opts{Seed: 1}).Fit(X, y, 3); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitIrisOneWorker grows 100 trees on one goroutine.
func BenchmarkFitIrisOneWorker(b *testing.B) {
	X, y, _ := irisSplit(b)
	for b.Loop() {
		if err := New(Opts{Seed: 1, Workers: 1}).Fit(X, y, 3); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSamplesIris returns the 100 trees' distributions for one row.
func BenchmarkSamplesIris(b *testing.B) {
	X, y, Xt := irisSplit(b)
	m := New(Opts{Seed: 1})
	if err := m.Fit(X, y, 3); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		m.Samples(Xt[i%len(Xt)], 100)
		i++
	}
}
