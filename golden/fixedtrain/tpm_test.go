package fixedtrain

import (
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/lfsr"
)

// TestLaneMatchesLFSR checks the inlined lane against golden/lfsr's
// leap-forward LFSR of width 64 for 16- and 32-bit draws.
func TestLaneMatchesLFSR(t *testing.T) {
	for _, b := range []int{16, 32} {
		seed := ClauseSeed(7, 3)
		ref, err := lfsr.New(LaneWidth, b, seed)
		if err != nil {
			t.Fatal(err)
		}
		l := lane{s: seed}
		for k := 0; k < 10000; k++ {
			var got uint32
			if b == 16 {
				got = l.draw16()
			} else {
				got = l.draw32()
			}
			if want := ref.Next(); uint64(got) != want {
				t.Fatalf("%d-bit draw %d: lane %#x, lfsr %#x", b, k, got, want)
			}
		}
	}
}

// randomSPV returns an SPV of 2n states summing to 2^bits with its mass
// in a random window (sometimes a single state, sometimes an edge).
func randomSPV(rng *rand.Rand, n, bits int) []uint16 {
	q := make([]uint16, 2*n)
	lo := rng.IntN(2 * n)
	hi := lo + rng.IntN(2*n-lo)
	switch rng.IntN(6) {
	case 0:
		lo, hi = 0, 0
	case 1:
		lo, hi = 2*n-1, 2*n-1
	case 2:
		lo, hi = 0, 2*n-1
	}
	left := 1 << uint(bits)
	for i := lo; i < hi && left > 0; i++ {
		v := rng.IntN(left + 1)
		if rng.IntN(3) == 0 {
			v = rng.IntN(min(left, 4) + 1)
		}
		q[i] = uint16(v)
		left -= v
	}
	q[hi] += uint16(left)
	return q
}

func support(q []uint16) (lo, hi int) {
	lo, hi = 0, len(q)-1
	for lo < hi && q[lo] == 0 {
		lo++
	}
	for hi > lo && q[hi] == 0 {
		hi--
	}
	return lo, hi
}

func mass(q []uint16, from int) (s int) {
	for _, v := range q[from:] {
		s += int(v)
	}
	return s
}

// TestApplyTPMSupportMatchesReference checks the trainer's support-limited
// update against the whole-vector reference bit for bit, and that both
// conserve the mass and report the include change exactly.
func TestApplyTPMSupportMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 16, 100} {
		for _, s := range []float64{1, 1.5, 3.9, 10, 27} {
			mv := MovesOf(s)
			for _, k := range []TPM{TPM1, TPM2, TPM3, TPM4} {
				for trial := 0; trial < 200; trial++ {
					bits := MinBits + rng.IntN(MaxBits-MinBits+1)
					q := randomSPV(rng, n, bits)
					r := rng.Uint32() & 0xFFFF
					want := append([]uint16(nil), q...)
					inc0 := mass(q, n)
					dRef := ApplyTPM(k, want, mv, r)
					lo, hi := support(q)
					d, a, b := applyTPM(k, q, lo, hi, mv, r, ditherTable(2*n))
					for i := range q {
						if q[i] != want[i] {
							t.Fatalf("TPM%d N=%d s=%v r=%#x state %d: support update %d, reference %d", k, n, s, r, i, q[i], want[i])
						}
					}
					if mass(q, 0) != 1<<uint(bits) {
						t.Fatalf("TPM%d N=%d s=%v: mass %d, want %d", k, n, s, mass(q, 0), 1<<uint(bits))
					}
					if inc := mass(q, n); inc != inc0+int(d) || d != dRef {
						t.Fatalf("TPM%d N=%d s=%v: include %d -> %d, reported %d (reference %d)", k, n, s, inc0, inc, d, dRef)
					}
					if wa, wb := support(q); wa != a || wb != b {
						t.Fatalf("TPM%d N=%d s=%v: support %d..%d reported, actual %d..%d", k, n, s, a, b, wa, wb)
					}
				}
			}
		}
	}
}

// TestApplyTPMExpectation checks that the rounding is exact on average:
// summed over all 2^16 rounding draws, the updated SPV is exactly 2^16
// times the product with the TPM whose move probabilities are Up/2^16 and
// Down/2^16.
func TestApplyTPMExpectation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 3, 8} {
		for _, s := range []float64{1, 3.9, 10} {
			mv := MovesOf(s)
			for _, k := range []TPM{TPM1, TPM2, TPM3} {
				q := randomSPV(rng, n, 15)
				sum := make([]uint64, 2*n)
				for r := uint32(0); r < 1<<16; r++ {
					p := append([]uint16(nil), q...)
					ApplyTPM(k, p, mv, r)
					for i, v := range p {
						sum[i] += uint64(v)
					}
				}
				// The exact product, scaled by 2^16.
				n2 := 2 * n
				want := make([]uint64, n2)
				for i := range q {
					p := uint64(q[i])
					var stay, move uint64 = 1 << 16, 0
					dst := i
					switch {
					case k == TPM1 && i < n2-1:
						move, dst = uint64(mv.Up), i+1
					case (k == TPM3 && i > 0) || (k == TPM2 && i > 0 && i < n):
						move, dst = uint64(mv.Down), i-1
					}
					stay -= move
					want[i] += p * stay
					want[dst] += p * move
				}
				for i := range want {
					if sum[i] != want[i] {
						t.Fatalf("TPM%d N=%d s=%v state %d: sum over draws %d, exact %d", k, n, s, i, sum[i], want[i])
					}
				}
			}
		}
	}
}

func TestMovesOf(t *testing.T) {
	for _, c := range []struct {
		s        float64
		up, down uint32
	}{{1, 0, 65536}, {2, 32768, 32768}, {3.9, 48732, 16804}, {1e9, 65536, 0}} {
		if got := MovesOf(c.s); got.Up != c.up || got.Down != c.down {
			t.Errorf("MovesOf(%v) = %+v, want up %d down %d", c.s, got, c.up, c.down)
		}
	}
}
