package fixedtrain

import (
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

// TestChunkedMatchesApplyTPM: the chunked TPMs (the kernel of this build
// and its Go form) give applyTPM's words, include change and support for
// random SPVs, N 1..120, several s and B.
func TestChunkedMatchesApplyTPM(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	kernels := []struct {
		name     string
		up, down func(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (uint16, uint32, uint32)
	}{{"build", up32, down32}, {"go", up32Go, down32Go}}
	if !chunkKernels {
		kernels = kernels[1:] // no AVX-512: only the Go kernels
	}
	for iter := 0; iter < 20000; iter++ {
		n := 1 + rng.IntN(120)
		n2 := 2 * n
		bits := MinBits + rng.IntN(MaxBits-MinBits+1)
		s := []float64{1.5, 2, 3.9, 10, 27}[rng.IntN(5)]
		mv := MovesOf(s)
		ct := newChunkTables(n2, mv)
		q0 := randomSPV(rng, n, bits)
		lo, hi := support(q0)
		k := []TPM{TPM1, TPM2, TPM3}[rng.IntN(3)]
		r := rng.Uint32() & 0xFFFF
		want := append([]uint16(nil), q0...)
		wd, wlo, whi := applyTPM(k, want, lo, hi, mv, r, ditherTable(n2))
		for _, kn := range kernels {
			// Pad the SPV with non-zero words on both sides: the kernels
			// must neither read them as mass nor write them.
			buf := make([]uint16, n2+2*chunk)
			for i := range buf {
				buf[i] = 0xBEEF
			}
			q := buf[chunk : chunk+n2 : chunk+n2]
			copy(q, q0)
			d, a, b := applyChunkedWith(k, q, lo, hi, mv, r, ct, kn.up, kn.down)
			if d != wd || a != wlo || b != whi {
				t.Fatalf("%s: N=%d %v lo=%d hi=%d: dI %d support %d..%d, want %d %d..%d", kn.name, n, k, lo, hi, d, a, b, wd, wlo, whi)
			}
			for i := range q {
				if q[i] != want[i] {
					t.Fatalf("%s: N=%d %v lo=%d hi=%d: state %d = %d, want %d", kn.name, n, k, lo, hi, i, q[i], want[i])
				}
			}
			for i := 0; i < chunk; i++ {
				if buf[i] != 0xBEEF || buf[chunk+n2+i] != 0xBEEF {
					t.Fatalf("%s: N=%d: a word outside the SPV was written", kn.name, n)
				}
			}
		}
	}
}

// TestTrainChunkedEqualsApplyTPM: a training run gives the same SPV words
// with and without the chunked TPMs.
func TestTrainChunkedEqualsApplyTPM(t *testing.T) {
	if !chunkKernels {
		t.Skip("no AVX-512 on this CPU")
	}
	defer func(v bool) { useChunked = v }(useChunked)
	X, y := classicXOR(300, 6, 0.2, rand.New(rand.NewPCG(3, 4)))
	var hash [2]string
	for k, on := range []bool{false, true} {
		useChunked = on
		for _, fb := range []ptm.Feedback{ptm.ConsistentFeedback, ptm.PaperFeedback} {
			cfg := Config{Params: ptm.Params{Clauses: 8, T: 6, S: 3.9, N: 40, Epochs: 4, Seed: 9, Feedback: fb}, Bits: 13}
			tr := train(t, cfg, 2, 6, false, X, y)
			if err := tr.Check(); err != nil {
				t.Fatal(err)
			}
			hash[k] += spvHash(tr)
		}
	}
	if hash[0] != hash[1] {
		t.Error("the chunked TPMs change the trained SPVs")
	}
}

// BenchmarkApplyChunked is BenchmarkApplyTPM through the chunked TPMs.
func BenchmarkApplyChunked(b *testing.B) {
	if !chunkKernels {
		b.Skip("no AVX-512 on this CPU")
	}
	q := make([]uint16, 200)
	left := 1 << 15
	for i := 0; i < 86; i++ {
		v := left / 4
		if i == 85 {
			v = left
		}
		q[i] = uint16(v)
		left -= v
	}
	mv := MovesOf(3.9)
	ct := newChunkTables(200, mv)
	lo, hi := 0, 85
	for i := 0; i < b.N; i++ {
		k := TPM3
		if i%2 == 0 {
			k = TPM1
		}
		_, lo, hi = applyChunked(k, q, lo, hi, mv, uint32(i)*7919, ct)
	}
}
