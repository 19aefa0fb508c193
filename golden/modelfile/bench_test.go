package modelfile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/conv"
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

// convTrainedLike is a convolutional MNIST-shaped model (28x28 images,
// 10x10 window, 272 literals, N = 100) of the given clauses with 15-bit
// SPVs shaped like trained ones (docs: a trained MNIST model's supports
// span a median of 101 states): one TA in four a geometric tail from
// state 0 (excluded), the rest a wide bump of 60-160 states with
// dithering noise of a few units; stored at spvBits.
func convTrainedLike(b testing.TB, clauses, spvBits int) *ConvFile {
	b.Helper()
	sh := conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]int32, 10*clauses)
	for i := range w {
		w[i] = int32(rng.IntN(41) - 20)
	}
	head := conv.Head{Shape: sh, Structure: conv.Coalesced, Classes: 10, Clauses: clauses, T: 2000, Weights: w}
	const n, bits = 100, 15
	classes := make([]string, 10)
	for i := range classes {
		classes[i] = fmt.Sprint(i)
	}
	lanes := make([]uint64, clauses)
	for i := range lanes {
		lanes[i] = rng.Uint64() | 1
	}
	f := &ConvFile{Head: head, Classes: classes, Encoder: conv.Encoder{Thresholds: []int{75}}, JitterSets: 1,
		Trainer: ConvTrainer{S: 3, N: n, Bits: bits, Seed: 1, Epochs: 7}, SPVBits: spvBits, BankBits: 4, K: 16,
		Mapping: ptm.Mapping{Kind: ptm.Softmax, Temperature: 400}, Split: Split{Dataset: "synthetic", Rows: 70000, Train: seq(0, 60000), Test: seq(60000, 70000)},
		Lanes: &Lanes{Control: 1, Clauses: lanes}}
	tas := f.TAs()
	spv := make([]uint16, 2*n)
	x := make([]float64, 2*n)
	err := f.SetSPVs(func(ta int) []uint16 {
		clear(x)
		var sum float64
		if rng.IntN(4) == 0 {
			r := 0.9 + 0.09*rng.Float64()
			for k := range x {
				x[k] = math.Pow(r, float64(k))
				sum += x[k]
			}
		} else {
			width := 60 + rng.IntN(100)
			c := rng.IntN(2*n - width)
			for k := range width {
				t := float64(k-width/2) / float64(width/4)
				x[c+k] = math.Exp(-t*t/2) * (1 + 0.01*rng.NormFloat64())
				sum += max(x[c+k], 0)
			}
		}
		q := make([]uint32, 2*n)
		for k := range x {
			x[k] = max(x[k], 0) / sum
		}
		if err := fixed.QuantizeSPV(x, bits, q); err != nil {
			b.Fatal(err)
		}
		for k, v := range q {
			spv[k] = uint16(v)
		}
		return spv
	})
	if err != nil {
		b.Fatal(err)
	}
	f.Thresh = make([]uint32, tas)
	for ta := range f.Thresh {
		f.Thresh[ta] = uint32(f.threshOf(int64(f.Include[ta])))
	}
	if err := f.Validate(); err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkDecodeConv times reading convolutional models of 128 and 512
// clauses with the SPVs at 8 bits (the default) and 12 (the default
// before it), range-coded (the default) and DEFLATE-coded (files written
// before), reporting the file's bytes (go test -bench DecodeConv -run
// '^$' ./golden/modelfile).
func BenchmarkDecodeConv(b *testing.B) {
	for _, clauses := range []int{128, 512} {
		for _, w := range []int{8, 12} {
			for _, coding := range []string{SPVCodingRange, SPVCodingDeflate} {
				b.Run(fmt.Sprintf("clauses=%d/spv_bits=%d/%s", clauses, w, coding), func(b *testing.B) {
					d := recoded(b, convTrainedLike(b, clauses, w), coding)
					for b.Loop() {
						if _, err := DecodeConv(d, "bench.ptm"); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(len(d)), "file-bytes")
				})
			}
		}
	}
}
