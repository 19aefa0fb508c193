package ptm

import "math/bits"

// pcg is the generator of math/rand/v2's PCG (a 128-bit LCG with the DXSM
// output function), reproduced so that the training loops can keep its
// state in registers: pcg{hi: seed1, lo: seed2} gives the stream of
// rand.NewPCG(seed1, seed2), value for value (see TestPCGMatchesStdlib).
type pcg struct{ hi, lo uint64 }

// next returns the generator advanced by one step and the value of that
// step. It works on values, not through a pointer, so that a loop's copy of
// the state can live in registers.
func (p pcg) next() (pcg, uint64) {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	hi, lo := bits.Mul64(p.lo, mulLo)
	hi += p.hi*mulLo + p.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	p.lo, p.hi = lo, hi
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	hi *= lo | 1
	return p, hi
}

// unit maps a value of the stream to [0, 1) exactly as rand.Rand.Float64
// does.
func unit(x uint64) float64 {
	return float64(x<<11>>11) / (1 << 53)
}

// Uint64 returns the next value of the stream (it makes *pcg a
// rand.Source).
func (p *pcg) Uint64() uint64 {
	var u uint64
	*p, u = p.next()
	return u
}
