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

// transfersGo sets t[i] = floor((q[i]*prob + (r + dith[i] mod 2^16)) / 2^16)
// for every i (len(t) == len(q) == len(dith)).
func transfersGo(t, q, dith []uint16, r uint16, prob uint32) {
	if prob == 1<<FracBits { // the whole mass moves, whatever the offset
		copy(t, q)
		return
	}
	q = q[:len(t)]
	dith = dith[:len(t)]
	for i := range t {
		d := uint32(r + dith[i])
		t[i] = uint16((uint32(q[i])*prob + d) >> FracBits)
	}
}

// combineGo sets q[i] += t[i] - t[i+1] (up: mass moves to the state
// above) or q[i] += t[i+1] - t[i] (down), mod 2^16, for every i
// (len(t) == len(q)+1).
func combineGo(q, t []uint16, up bool) {
	t = t[:len(q)+1]
	if up {
		for i := range q {
			q[i] += t[i] - t[i+1]
		}
		return
	}
	for i := range q {
		q[i] += t[i+1] - t[i]
	}
}

// applyTPM multiplies one SPV q (2N states, zero outside lo..hi) in place
// by TPM k with the moves mv and the rounding draw r, and returns the
// change of the include mass and the new support (trimmed: q[lo] and q[hi]
// are non-zero unless lo == hi). Only states lo-1..hi+1 are touched. tb is
// scratch of at least 2N+2 words, dith the ditherTable of 2N states.
//
// The moving states' transfers are computed first into tb[1..] (tb[0] and
// the word after the last transfer are 0), then each state adds what it
// receives and subtracts what it hands on: two element-wise passes that
// the amd64 build runs 16 states at a time.
func applyTPM(k TPM, q []uint16, lo, hi int, mv Moves, r uint32, tb, dith []uint16) (dI int32, nlo, nhi int) {
	n2 := len(q)
	n := n2 / 2
	switch k {
	case TPM1:
		top := hi // the states lo..top move; the top state 2N-1 never does
		if top == n2-1 {
			top--
		}
		if lo <= top {
			cnt := top - lo + 1
			tb[0] = 0
			transfers(tb[1:1+cnt], q[lo:lo+cnt], dith[lo:lo+cnt], uint16(r), mv.Up)
			tb[cnt+1] = 0
			if lo <= n-1 && n-1 <= top {
				dI = int32(tb[n-lo])
			}
			combine(q[lo:lo+cnt+1], tb[:cnt+2], true)
		}
		hi = min(hi+1, n2-1)
	case TPM2, TPM3:
		end := hi
		if k == TPM2 {
			end = min(hi, n-1)
		}
		start := max(lo, 1) // state 0 never moves down
		if start <= end {
			cnt := end - start + 1
			tb[0] = 0
			transfers(tb[1:1+cnt], q[start:start+cnt], dith[start:start+cnt], uint16(r), mv.Down)
			tb[cnt+1] = 0
			if k == TPM3 && start <= n && n <= end {
				dI = -int32(tb[n-start+1])
			}
			combine(q[start-1:start+cnt], tb[:cnt+2], false)
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
