package ptm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernelsMatchGo checks that stayDown and stayUp (on every path of the
// assembly loops where there are some) give the bits of the portable loops,
// for every length up to 70, odd offsets and values from 0 through
// subnormals to 1.
func TestKernelsMatchGo(t *testing.T) {
	withKernelPaths(t, testKernelsMatchGo)
}

func testKernelsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	value := func() float64 {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return math.Ldexp(rng.Float64(), -1030) // subnormal
		case 2:
			return math.Ldexp(rng.Float64(), -60-rng.IntN(40))
		default:
			return rng.Float64()
		}
	}
	for n := 0; n <= 70; n++ {
		for trial := 0; trial < 20; trial++ {
			off := rng.IntN(4)
			buf := make([]float64, off+n+4)
			for i := range buf {
				buf[i] = value()
			}
			s := 1 + 30*rng.Float64()
			mv := newMoves(s)
			for _, up := range []bool{false, true} {
				got := append([]float64(nil), buf...)
				want := append([]float64(nil), buf...)
				if up {
					stayUp(got[off:off+n], mv.down, mv.up)
					stayUpGo(want[off:off+n], mv.down, mv.up)
				} else {
					stayDown(got[off:off+n], mv.up, mv.down)
					stayDownGo(want[off:off+n], mv.up, mv.down)
				}
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("up=%v n=%d off=%d s=%v: element %d = %v, portable loop %v", up, n, off, s, i, got[i], want[i])
					}
				}
			}
		}
	}
}
