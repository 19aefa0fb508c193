//go:build !purego

package fixedtrain

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestKernelPaths: the AVX2 loops give the Go loops' words for random
// inputs, every length 0..80 and the extreme probabilities.
func TestKernelPaths(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	rng := rand.New(rand.NewPCG(8, 9))
	for n := 0; n < 80; n++ {
		for _, prob := range []uint32{0, 1, 16804, 48732, 65535, 65536} {
			q := make([]uint16, n)
			for i := range q {
				q[i] = uint16(rng.IntN(1<<15 + 1))
				if rng.IntN(3) == 0 {
					q[i] = uint16(rng.IntN(4))
				}
			}
			dith := ditherTable(n + 7)[7:]
			r := uint16(rng.Uint32())
			for k, avx := range []bool{false, true} {
				useAVX2 = avx
				tb := make([]uint16, n+1)
				transfers(tb[:n], q, dith, r, prob)
				qq := append([]uint16(nil), q...)
				combine(qq, tb, k == 0)
				useAVX2 = !avx
				tb2 := make([]uint16, n+1)
				transfersGo(tb2[:n], q, dith, r, prob)
				qq2 := append([]uint16(nil), q...)
				combineGo(qq2, tb2, k == 0)
				for i := range tb2 {
					if tb[i] != tb2[i] {
						t.Fatalf("n=%d prob=%d: transfer %d: avx %v gives %d, other path %d", n, prob, i, avx, tb[i], tb2[i])
					}
				}
				for i := range qq2 {
					if qq[i] != qq2[i] {
						t.Fatalf("n=%d prob=%d: combined word %d: avx %v gives %d, other path %d", n, prob, i, avx, qq[i], qq2[i])
					}
				}
			}
		}
	}
}
