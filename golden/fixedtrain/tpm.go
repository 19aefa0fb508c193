package fixedtrain

// The four TPMs as exact integer operations on one SPV (docs/fixed-point-
// training.md 3). Mass only ever moves between neighbouring states as an
// integer transfer taken from one state and added to the other, so the
// total mass of an SPV is conserved exactly by construction.

// TPM names one of the paper's four transition matrices (ptm.TPM1..TPM4).
type TPM uint8

// The four TPMs.
const (
	TPM1 TPM = iota + 1 // every state but the top moves up with (s-1)/s
	TPM2                // exclude states but the bottom move down with 1/s; include states stay
	TPM3                // every state but the bottom moves down with 1/s
	TPM4                // every exclude state moves up with probability 1
)

// Dither is the per-state increment of the rounding offset: state n of a TA
// whose rounding draw is r rounds with offset (r + n*Dither) mod 2^16.
const Dither = 0x9E37

// FracBits is F, the width of the move probabilities and rounding draws.
const FracBits = 16

// Moves are the two move probabilities of a specificity s as F-bit
// fractions: Down/2^16 approximates 1/s, Up = 2^16 - Down approximates
// (s-1)/s.
type Moves struct {
	Up, Down uint32
}

// MovesOf returns the moves of specificity s >= 1: Down = floor(2^16/s +
// 1/2), Up = 2^16 - Down. It is the only place s, a float, enters the
// trainer; the hardware receives Up and Down as integers.
func MovesOf(s float64) Moves {
	d := uint32(65536/s + 0.5)
	if d > 65536 {
		d = 65536
	}
	return Moves{Up: 65536 - d, Down: d}
}

// transfer is the integer share of mass p moved with probability
// prob/2^16, rounded with offset d in 0..2^16-1: floor((p*prob + d) / 2^16).
// Averaged over the 2^16 offsets it is exactly p*prob/2^16, and it never
// exceeds p.
func transfer(p, prob, d uint32) uint32 {
	return (p*prob + d&0xFFFF) >> FracBits
}

// ditherTable returns d[n] = n*Dither mod 2^16 for the states 0..n2-1: the
// rounding offset of state n for draw r is r + d[n] (mod 2^16).
func ditherTable(n2 int) []uint16 {
	d := make([]uint16, n2)
	for i := range d {
		d[i] = uint16(uint32(i) * Dither)
	}
	return d
}

// moveUpGo applies the upward moves of TPM1 to R: states 0..cnt-1 of R
// each hand t = floor((R[i]*prob + (r + dith[i] mod 2^16)) / 2^16) to the
// state above, R[cnt] only receives; carry is the transfer into R[0] (0
// for a whole TPM). It returns the transfer R[cnt-1] handed on.
// len(R) == cnt+1, len(dith) >= cnt.
func moveUpGo(R, dith []uint16, cnt int, r uint16, prob uint32, carry uint32) uint32 {
	R = R[:cnt+1]
	dith = dith[:cnt]
	for i := range dith {
		p := uint32(R[i])
		t := (p*prob + uint32(r+dith[i])) >> FracBits
		R[i] = uint16(p - t + carry)
		carry = t
	}
	R[cnt] += uint16(carry)
	return carry
}

// moveDownGo applies the downward moves of TPM2/TPM3 to R: states
// 1..cnt of R each hand t = floor((R[i]*prob + (r + dith[i] mod 2^16)) /
// 2^16) to the state below, R[0] only receives; carry is the transfer into
// R[cnt] from above (0 for a whole TPM). States are taken from the top
// down. len(R) == cnt+1 == len(dith).
func moveDownGo(R, dith []uint16, cnt int, r uint16, prob uint32, carry uint32) {
	R = R[:cnt+1]
	dith = dith[:cnt+1]
	for i := cnt; i >= 1; i-- {
		p := uint32(R[i])
		t := (p*prob + uint32(r+dith[i])) >> FracBits
		R[i] = uint16(p - t + carry)
		carry = t
	}
	R[0] += uint16(carry)
}

// widen extends the moving states a..b (which hold all the moving mass)
// within min..max towards a multiple of 16 states, first upwards, then
// downwards: the added states hold 0, so they hand on 0 whatever the draw,
// and the 16-state loops need no scalar tail. Runs shorter than 16 states
// stay as they are (the scalar loop is cheaper than a padded chunk).
func widen(a, b, lo, hi int) (int, int) {
	if b-a+1 < 16 { // a short run is cheaper in the scalar loop
		return a, b
	}
	extra := (16 - (b-a+1)%16) % 16
	up := min(extra, hi-b)
	b += up
	a -= min(extra-up, a-lo)
	return a, b
}

// applyTPM multiplies one SPV q (2N states, zero outside lo..hi) in place
// by TPM k with the moves mv and the rounding draw r, and returns the
// change of the include mass and the new support (trimmed: q[lo] and q[hi]
// are non-zero unless lo == hi). Only states lo-1..hi+1 are touched. dith
// is the ditherTable of 2N states. The moves run 16 states at a time with
// AVX2 on amd64 (moveUp, moveDown).
func applyTPM(k TPM, q []uint16, lo, hi int, mv Moves, r uint32, dith []uint16) (dI int32, nlo, nhi int) {
	n2 := len(q)
	n := n2 / 2
	switch k {
	case TPM1:
		top := hi // the states lo..top move; the top state 2N-1 never does
		if top == n2-1 {
			top--
		}
		if lo <= top {
			if lo <= n-1 && n-1 <= top {
				dI = int32(transfer(uint32(q[n-1]), mv.Up, r+uint32(dith[n-1])))
			}
			a, b := widen(lo, top, 0, n2-2)
			moveUp(q[a:b+2], dith[a:b+1], b-a+1, uint16(r), mv.Up)
		}
		hi = min(hi+1, n2-1)
	case TPM2, TPM3:
		end := hi
		if k == TPM2 {
			end = min(hi, n-1)
		}
		start := max(lo, 1) // state 0 never moves down
		if start <= end {
			if k == TPM3 && start <= n && n <= end {
				dI = -int32(transfer(uint32(q[n]), mv.Down, r+uint32(dith[n])))
			}
			bound := n2 - 1
			if k == TPM2 {
				bound = n - 1
			}
			a, b := widen(start, end, 1, bound)
			moveDown(q[a-1:b+1], dith[a-1:b+1], b-a+1, uint16(r), mv.Down)
		}
		lo = max(lo-1, 0)
	case TPM4:
		if lo > n-1 {
			return 0, lo, hi
		}
		e := min(hi, n-1)
		if e == n-1 {
			dI = int32(q[n-1])
			q[n] += q[n-1]
		} else {
			q[e+1] = q[e]
		}
		copy(q[lo+1:e+1], q[lo:e])
		q[lo] = 0
		hi = max(hi, e+1)
	}
	for lo < hi && q[lo] == 0 {
		lo++
	}
	for hi > lo && q[hi] == 0 {
		hi--
	}
	return dI, lo, hi
}

// ApplyTPM multiplies the SPV q (2N states) in place by TPM k with the
// moves mv and the 16-bit rounding draw r, over the whole vector, and
// returns the change of the include mass sum(q[N:]). It is the reference
// form of the specification (every state, no support tracking) that the
// trainer's support-limited update is tested against.
func ApplyTPM(k TPM, q []uint16, mv Moves, r uint32) int32 {
	n2 := len(q)
	n := n2 / 2
	old := make([]uint32, n2)
	for i, v := range q {
		old[i] = uint32(v)
	}
	move := make([]uint32, n2) // mass leaving state i
	for i := range old {
		d := r + uint32(i)*Dither
		switch {
		case k == TPM1 && i < n2-1:
			move[i] = transfer(old[i], mv.Up, d)
		case (k == TPM3 && i > 0) || (k == TPM2 && i > 0 && i < n):
			move[i] = transfer(old[i], mv.Down, d)
		case k == TPM4 && i < n:
			move[i] = old[i]
		}
	}
	var dI int32
	for i := range old {
		v := old[i] - move[i]
		if k == TPM1 || k == TPM4 {
			if i > 0 && (k == TPM1 || i-1 < n) {
				v += move[i-1]
			}
		} else if i+1 < n2 {
			v += move[i+1]
		}
		q[i] = uint16(v)
	}
	switch k {
	case TPM1, TPM4:
		dI = int32(move[n-1])
	case TPM3:
		dI = -int32(move[n])
	}
	return dI
}
