package modelfile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// trainedLike is a binary model of 128 clauses x 272 literals (34,816
// TAs, N = 100) with SPVs shaped like trained ones: nine in ten excluded
// (a geometric tail from state 0), the rest a binomial bump of 40 states
// around a random state; canonical at 15 bits.
func trainedLike(b testing.TB) *File {
	b.Helper()
	p := ptm.Params{Clauses: 128, T: 100, S: 10, N: 100, Epochs: 1, Seed: 1, Feedback: ptm.ConsistentFeedback}
	m, err := ptm.New(p, 2, 136, true)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n2 := 2 * m.N
	for ta := 0; ta < m.NumTAs(); ta++ {
		s := m.SPV[ta*n2 : (ta+1)*n2]
		clear(s)
		var sum float64
		if rng.IntN(10) > 0 {
			r := 0.3 + 0.6*rng.Float64()
			for k := range 40 {
				s[k] = math.Pow(r, float64(k))
				sum += s[k]
			}
		} else {
			c := rng.IntN(n2 - 40)
			for k := range 40 {
				s[c+k] = math.Exp(-float64((k-20)*(k-20)) / 50)
				sum += s[c+k]
			}
		}
		for k := range s {
			s[k] /= sum
		}
	}
	m.RefreshInclude()
	bank, err := fixed.Quantize(m, 15)
	if err != nil {
		b.Fatal(err)
	}
	th := make([][]float64, 34)
	names := make([]string, 34)
	for i := range th {
		th[i], names[i] = []float64{1, 2, 3, 4}, fmt.Sprintf("f%d", i)
	}
	f := &File{Model: m, Booleanizer: &booleanize.Thermometer{Thresholds: th}, Features: names, Classes: []string{"a", "b"},
		Split:   Split{Dataset: "synthetic", Rows: 70000, Train: []int{0, 1, 2}, Test: []int{3}},
		Mapping: ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}, Bank: bank, SPVBits: 15}
	if _, err := f.Canonicalize(); err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkEncode and BenchmarkDecode time a trained-like model of the
// size of a 128-clause x 272-literal model (go test -bench . -run '^$').
func BenchmarkEncode(b *testing.B) {
	f := trainedLike(b)
	var n int
	for b.Loop() {
		d, err := Encode(f)
		if err != nil {
			b.Fatal(err)
		}
		n = len(d)
	}
	b.ReportMetric(float64(n), "file-bytes")
}

func BenchmarkDecode(b *testing.B) {
	d, err := Encode(trainedLike(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Decode(d, "bench.ptm"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(d)), "file-bytes")
}
