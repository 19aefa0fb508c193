package conv

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkCoreSample is one inference sample of the bit-exact core (all
// TA draws on 8 x 8 lanes, every clause over the patches) on a 28x28
// image with a 10x10 window, at 32, 128 and 256 coalesced clauses, 80% of
// thresholds 0 (a trained 4-bit model has more); seeds fixed. ns/op is
// per sample.
func BenchmarkCoreSample(b *testing.B) {
	sh := Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	rng := rand.New(rand.NewPCG(1, 1))
	pt := NewPatches(sh)
	if err := pt.Fill(randomPlanes(sh, rng)); err != nil {
		b.Fatal(err)
	}
	for _, clauses := range []int{32, 128, 256} {
		b.Run(fmt.Sprintf("clauses=%d", clauses), func(b *testing.B) {
			bank := randomBank(coalescedHead(sh, 10, clauses, 100, rng), 4, rng)
			core, err := NewCore(bank, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 8, LiteralLanes: 8})
			if err != nil {
				b.Fatal(err)
			}
			var sums []int32
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if sums, _, err = core.Run(pt, 1, uint32(i), sums); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSamplerSample is one sample of the float sampler on the same
// models as BenchmarkCoreSample (only TAs with 0 < p < 1 are drawn).
func BenchmarkSamplerSample(b *testing.B) {
	sh := Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	rng := rand.New(rand.NewPCG(1, 1))
	pt := NewPatches(sh)
	if err := pt.Fill(randomPlanes(sh, rng)); err != nil {
		b.Fatal(err)
	}
	for _, clauses := range []int{32, 128, 256} {
		b.Run(fmt.Sprintf("clauses=%d", clauses), func(b *testing.B) {
			bank := randomBank(coalescedHead(sh, 10, clauses, 100, rng), 4, rng)
			smp, err := NewSampler(bank.Float(), 1)
			if err != nil {
				b.Fatal(err)
			}
			var sums []int32
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if sums, err = smp.Run(pt, 1, sums); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
