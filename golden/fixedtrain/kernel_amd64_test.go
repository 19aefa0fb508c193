//go:build !purego

package fixedtrain

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestKernelPaths: the AVX2 loops give the Go loops' words for random
// inputs, every length 0..100 and the extreme probabilities.
func TestKernelPaths(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	rng := rand.New(rand.NewPCG(8, 9))
	for cnt := 0; cnt < 100; cnt++ {
		for _, prob := range []uint32{0, 1, 16804, 48732, 65535, 65536} {
			R := make([]uint16, cnt+1)
			for i := range R {
				R[i] = uint16(rng.IntN(1<<15 + 1))
				if rng.IntN(3) == 0 {
					R[i] = uint16(rng.IntN(4))
				}
			}
			off := rng.IntN(50)
			dith := ditherTable(cnt + 1 + off)[off:]
			r := uint16(rng.Uint32())
			for _, up := range []bool{true, false} {
				var out [2][]uint16
				for k, avx := range []bool{false, true} {
					useAVX2 = avx
					q := append([]uint16(nil), R...)
					if up {
						moveUp(q, dith[:cnt], cnt, r, prob)
					} else {
						moveDown(q, dith, cnt, r, prob)
					}
					out[k] = q
				}
				for i := range out[0] {
					if out[0][i] != out[1][i] {
						t.Fatalf("cnt=%d prob=%d up=%v: word %d: AVX2 %d, Go %d", cnt, prob, up, i, out[1][i], out[0][i])
					}
				}
			}
		}
	}
}
