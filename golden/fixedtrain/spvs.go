package fixedtrain

import "fmt"

// spvs are the integer SPVs of a set of TAs with what updating them needs;
// Trainer and Clauses embed it, so both apply the TPMs the same way.
type spvs struct {
	n    int // N
	mv   Moves
	spv  []uint16     // 2N states per TA, TA ta at ta*2N
	inc  []uint16     // include mass per TA, always sum(spv[N:2N]) of the TA
	lo   []uint16     // support per TA: states outside lo..hi hold 0
	hi   []uint16     //
	dith []uint16     // ditherTable(2N)
	ct   *chunkTables // the chunked TPMs' tables, nil if the moves need 17 bits
}

// tpm4 applies TPM4 to TA ta: applyTPM's TPM4 without its trim loops
// (the lowest state's mass moves up one state, so the support's bottom
// does too; its top moves up one if it was an exclude state).
func (s *spvs) tpm4(ta int) {
	lo, hi, n := int(s.lo[ta]), int(s.hi[ta]), s.n
	if lo >= n { // all mass on the include side: unchanged
		return
	}
	n2 := 2 * n
	q := s.spv[ta*n2 : (ta+1)*n2 : (ta+1)*n2]
	e := min(hi, n-1)
	if e == n-1 {
		s.inc[ta] += q[n-1]
		q[n] += q[n-1]
	} else {
		q[e+1] = q[e]
	}
	copy(q[lo+1:e+1], q[lo:e])
	q[lo] = 0
	s.lo[ta], s.hi[ta] = uint16(lo+1), uint16(max(hi, e+1))
}

// shiftUp applies TPM1 at move probability 1 to TA ta: every state below
// the top hands all its mass up one state, the top state keeps its own
// (TypeIBoost). The support's bottom moves up one state, its top too
// unless it is the top state.
func (s *spvs) shiftUp(ta int) {
	lo, hi, n := int(s.lo[ta]), int(s.hi[ta]), s.n
	n2 := 2 * n
	top := n2 - 1
	if lo >= top { // all mass in the top state: unchanged
		return
	}
	q := s.spv[ta*n2 : (ta+1)*n2 : (ta+1)*n2]
	s.inc[ta] += q[n-1] // the mass crossing from state N-1 to N
	if hi == top {
		q[top] += q[top-1]
		copy(q[lo+1:top], q[lo:top-1])
	} else {
		copy(q[lo+1:hi+2], q[lo:hi+1])
		hi++
	}
	q[lo] = 0
	s.lo[ta], s.hi[ta] = uint16(lo+1), uint16(hi)
}

// apply applies TPM k to TA ta, whose support is lo..hi, with rounding
// offset r, and keeps its include mass and support.
func (s *spvs) apply(k TPM, ta int, lo, hi uint16, r uint32) {
	n2 := 2 * s.n
	q := s.spv[ta*n2 : (ta+1)*n2 : (ta+1)*n2]
	var d int32
	var a, b int
	if useChunked && k != TPM4 && s.ct != nil {
		d, a, b = applyChunked(k, q, int(lo), int(hi), s.mv, r, s.ct)
	} else {
		d, a, b = applyTPM(k, q, int(lo), int(hi), s.mv, r, s.dith)
	}
	s.inc[ta] = uint16(int32(s.inc[ta]) + d)
	s.lo[ta], s.hi[ta] = uint16(a), uint16(b)
}

// check verifies every SPV sums to 2^bits, every include mass equals its
// SPV's include states and every support holds its SPV's mass.
func (s *spvs) check(bits int) error {
	n2 := 2 * s.n
	for ta := range s.inc {
		q := s.spv[ta*n2 : (ta+1)*n2]
		var sum, inc uint32
		for i, v := range q {
			sum += uint32(v)
			if i >= s.n {
				inc += uint32(v)
			}
			if v != 0 && (i < int(s.lo[ta]) || i > int(s.hi[ta])) {
				return fmt.Errorf("fixedtrain: TA %d state %d holds %d outside its support %d..%d", ta, i, v, s.lo[ta], s.hi[ta])
			}
		}
		if sum != 1<<uint(bits) {
			return fmt.Errorf("fixedtrain: TA %d SPV mass %d, want %d", ta, sum, 1<<uint(bits))
		}
		if inc != uint32(s.inc[ta]) {
			return fmt.Errorf("fixedtrain: TA %d include mass %d, its SPV holds %d", ta, s.inc[ta], inc)
		}
	}
	return nil
}
