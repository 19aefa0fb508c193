package fixedtrain

import (
	"fmt"
	"math/bits"
	"sync"
)

// Clauses is a bank of clauses with their integer SPVs, include masses,
// supports and one random lane per clause, with the trainer's sampling and
// Type I / Type II feedback (consistent rule) exposed clause by clause and
// the literal values passed in by the caller. It serves trainers whose
// clauses see different literals from one clause to the next within one
// example (golden/conv: each clause gets feedback on the literals of its
// own chosen patch). Methods on different clauses touch disjoint memory,
// so they may run on different goroutines at once; the words are then the
// same whatever the schedule.
//
// The TPMs, rounding draws and lanes are those of Trainer exactly: clause
// c's lane starts at ClauseSeed(seed, c), TypeI makes one 16-bit rounding
// draw per literal in literal order, TypeII makes none.
type Clauses struct {
	spvs
	bits, lits int
	lanes      []lane
	skipOnce   sync.Once
	skip       *[8][256]uint64 // SkipSample's jump over lits draws, a byte of the state at a time
}

// NewClauses returns count untrained clauses of literals literals each
// (every SPV holding 2^(B-1) in states N-1 and N), SPVs of 2N states at
// B = bits (MinBits..MaxBits), specificity s, lanes seeded from seed.
func NewClauses(count, literals, n, bits int, s float64, seed uint64) (*Clauses, error) {
	switch {
	case count < 1:
		return nil, fmt.Errorf("fixedtrain: %d clauses, want >= 1", count)
	case literals < 1:
		return nil, fmt.Errorf("fixedtrain: %d literals per clause, want >= 1", literals)
	case n < 1 || n > 1<<14:
		return nil, fmt.Errorf("fixedtrain: N = %d, want 1..16384", n)
	case bits < MinBits || bits > MaxBits:
		return nil, fmt.Errorf("fixedtrain: %d-bit SPVs, want %d..%d", bits, MinBits, MaxBits)
	case !(s >= 1) || s > 1e300:
		return nil, fmt.Errorf("fixedtrain: s = %v, want a finite value >= 1", s)
	}
	tas := count * literals
	if uint64(tas)*uint64(2*n) > 1<<34 {
		return nil, fmt.Errorf("fixedtrain: %d TAs of %d states is too large", tas, 2*n)
	}
	cl := &Clauses{spvs: spvs{n: n, mv: MovesOf(s)}, bits: bits, lits: literals}
	n2 := 2 * n
	cl.spv = make([]uint16, tas*n2)
	cl.inc = make([]uint16, tas)
	cl.lo = make([]uint16, tas)
	cl.hi = make([]uint16, tas)
	half := uint16(1) << uint(bits-1)
	for ta := 0; ta < tas; ta++ {
		cl.spv[ta*n2+n-1] = half
		cl.spv[ta*n2+n] = half
		cl.inc[ta] = half
		cl.lo[ta], cl.hi[ta] = uint16(n-1), uint16(n)
	}
	cl.lanes = make([]lane, count)
	for c := range cl.lanes {
		cl.lanes[c].s = ClauseSeed(seed, c)
	}
	cl.dith = ditherTable(n2)
	cl.ct = newChunkTables(n2, cl.mv)
	return cl, nil
}

// Count returns the number of clauses.
func (cl *Clauses) Count() int { return len(cl.lanes) }

// Literals returns the literals per clause.
func (cl *Clauses) Literals() int { return cl.lits }

// Bits returns B.
func (cl *Clauses) Bits() int { return cl.bits }

// N returns the states per action.
func (cl *Clauses) N() int { return cl.n }

// IncludeMass returns the include mass of TA ta = c*literals + i.
func (cl *Clauses) IncludeMass(ta int) int { return int(cl.inc[ta]) }

// SPV returns the SPV of TA ta (2N words; the caller must not change it).
func (cl *Clauses) SPV(ta int) []uint16 {
	n2 := 2 * cl.n
	return cl.spv[ta*n2 : (ta+1)*n2 : (ta+1)*n2]
}

// Draw16 makes a 16-bit draw from clause c's lane.
func (cl *Clauses) Draw16(c int) uint32 { return cl.lanes[c].draw16() }

// Draw32 makes a 32-bit draw from clause c's lane.
func (cl *Clauses) Draw32(c int) uint32 { return cl.lanes[c].draw32() }

// Sample draws the action of every TA of clause c, in literal order, one
// 16-bit draw each from the clause's lane: literal i is included when the
// draw is below its include mass * 2^(16-B). The included literals are set
// in dst (bit i%64 of word i/64; len(dst) >= ceil(literals/64)); other bits
// of those words are cleared. It returns the number of included literals.
//
// Four consecutive draws are made at once (leap4), the same numbers as
// four draw16 calls.
func (cl *Clauses) Sample(c int, dst []uint64) int {
	nl := cl.lits
	words := (nl + 63) / 64
	dst = dst[:words]
	inc := cl.inc[c*nl : (c+1)*nl : (c+1)*nl]
	shift := uint(16 - cl.bits)
	s := cl.lanes[c].s
	n := 0
	for w := range dst {
		var m uint64
		lo := w * 64
		end := min(nl, lo+64)
		i := lo
		for ; i+4 <= end; i += 4 {
			s = leap4(s)
			m |= below4(s, inc4(inc, i), shift) << uint(i-lo)
		}
		for ; i < end; i++ {
			r := (s ^ s>>1 ^ s>>3 ^ s>>4) & 0xFFFF
			s = s>>16 | r<<48
			m |= (r - uint64(inc[i])<<shift) >> 63 << uint(i-lo)
		}
		dst[w] = m
		n += bits.OnesCount64(m)
	}
	cl.lanes[c].s = s
	return n
}

// Four literals are compared at once in the four 16-bit lanes of a word
// (SWAR): draw r < q << k (k = 16-B >= 1) exactly when r >> k < q, as
// q << k is a multiple of 2^k; r >> k < 2^15 and q <= 2^B <= 2^15, so
// (r>>k | 0x8000) - q never borrows from the lane above, and its top bit
// is 0 exactly when r >> k < q.
const (
	laneTops = 0x8000800080008000 // the top bit of each 16-bit lane
	gather4  = 1<<48 | 1<<33 | 1<<18 | 1<<3
)

// below4 returns bit j (j < 4) set iff 16-bit word j of draws is below
// word j of q shifted left by shift (1..8).
func below4(draws, q uint64, shift uint) uint64 {
	x := draws >> shift & (0xFFFF >> shift * 0x0001000100010001)
	d := ^((x | laneTops) - q) & laneTops
	// the lane tops (bits 15, 31, 47, 63) moved to bits 48..51: bit 16j
	// of d>>15 times 2^(48-15j); every other product lands below bit 39 or
	// past bit 63, on distinct bits, so nothing carries into 48..51
	return (d >> 15 * gather4) >> 48 & 0xF
}

// inc4 returns inc[i..i+3] as the four 16-bit lanes of a word, inc[i]
// lowest.
func inc4(inc []uint16, i int) uint64 {
	q := inc[i : i+4 : i+4]
	return uint64(q[0]) | uint64(q[1])<<16 | uint64(q[2])<<32 | uint64(q[3])<<48
}

// leap4 is the lane state after four 16-bit draws from state s; the four
// draws are its 16-bit words, lowest first. The 64 new bits follow
// x[k+64] = x[k] ^ x[k+1] ^ x[k+3] ^ x[k+4] (lane); t holds that with the
// new bits taken as 0, and new bits 60..63 also take new bits 0..3 (equal
// to t's), which the shifts of t add.
func leap4(s uint64) uint64 {
	t := s ^ s>>1 ^ s>>3 ^ s>>4
	return t ^ t<<60 ^ t<<61 ^ t<<63
}

// SkipSample advances clause c's lane exactly as Sample does (one 16-bit
// draw per literal) without sampling: a trainer that will not use the
// clause's actions in a step calls it to keep the lane where Sample would
// leave it. It applies the lane's GF(2)-linear jump over Literals() draws,
// a table built on first use.
func (cl *Clauses) SkipSample(c int) {
	cl.skipOnce.Do(func() {
		j := jumpMatrix(cl.lits)
		t := new([8][256]uint64)
		for k := range t {
			for v := 1; v < 256; v++ {
				low := v & -v
				b := 0
				for low>>uint(b) != 1 {
					b++
				}
				t[k][v] = t[k][v&^low] ^ j[8*k+b]
			}
		}
		cl.skip = t
	})
	s := cl.lanes[c].s
	var r uint64
	for k := range cl.skip {
		r ^= cl.skip[k][byte(s>>uint(8*k))]
	}
	cl.lanes[c].s = r
}

// TypeI gives clause c Type I feedback under the consistent rule
// (docs/ptm-rule.md) with literal values lit (len literals): one rounding
// draw per literal in order, then TPM1 for a literal of value 1 when the
// clause fires, TPM3 otherwise.
func (cl *Clauses) TypeI(c int, lit []bool, fires bool) {
	nl, n2 := cl.lits, 2*cl.n
	_ = lit[nl-1]
	if cl.typeIFast(c, lit, fires) {
		return
	}
	l := cl.lanes[c]
	base := c * nl
	top := uint16(n2 - 1)
	for i := 0; i < nl; i++ {
		r := l.draw16()
		ta := base + i
		k := TPM3
		if fires && lit[i] {
			k = TPM1
		}
		lo, hi := cl.lo[ta], cl.hi[ta]
		if (k != TPM1 && hi == 0) || (k == TPM1 && lo == top) {
			continue
		}
		cl.apply(k, ta, lo, hi, r)
	}
	cl.lanes[c] = l
}

// TypeIBoost is TypeI with boosted true-positive feedback (tmu's
// boost_true_positive_feedback): when the clause fires, a literal of
// value 1 gets TPM1 at move probability 1 instead of UP/2^16 (every state
// but the top hands all its mass up one state: the SPV shifts up by one,
// the top state absorbing), which is the integer TPM1 with P = 2^16
// exactly, whatever the rounding draw. The draws are TypeI's (one
// rounding draw per literal in order, made and, for a boosted literal,
// unused), so a clause's lane advances as under TypeI. With fires false
// it is TypeI.
func (cl *Clauses) TypeIBoost(c int, lit []bool, fires bool) {
	if !fires {
		cl.TypeI(c, lit, false)
		return
	}
	nl, n2 := cl.lits, 2*cl.n
	_ = lit[nl-1]
	l := cl.lanes[c]
	base := c * nl
	top := uint16(n2 - 1)
	for i := 0; i < nl; i++ {
		r := l.draw16()
		ta := base + i
		lo, hi := cl.lo[ta], cl.hi[ta]
		if lit[i] {
			if lo != top {
				cl.shiftUp(ta)
			}
			continue
		}
		if hi != 0 {
			cl.apply(TPM3, ta, lo, hi, r)
		}
	}
	cl.lanes[c] = l
}

// TypeII gives clause c Type II feedback under the consistent rule with
// literal values lit and the clause's sampled includes (Sample's words):
// TPM4 on every literal of value 0 when none of them was included, on the
// single included one when exactly one was, nothing otherwise. No draws.
func (cl *Clauses) TypeII(c int, lit []bool, included []uint64) {
	nl := cl.lits
	_ = lit[nl-1]
	// z and who over the included literals only (set bits, in order)
	z, who := 0, 0
	for w, m := range included[:(nl+63)/64] {
		for ; m != 0; m &= m - 1 {
			i := w*64 + bits.TrailingZeros64(m)
			if i < nl && !lit[i] {
				z++
				who = i
				if z > 1 {
					return
				}
			}
		}
	}
	base := c * nl
	if z == 1 {
		cl.tpm4(base + who)
		return
	}
	if nl > 1<<30 { // offsets past int32
		for i := 0; i < nl; i++ {
			if !lit[i] {
				cl.tpm4(base + i)
			}
		}
		return
	}
	// TPM4 on every 0-literal, up to 256 per tpm4List call (a buffer on
	// the stack: calls on different clauses may run at once); off is the
	// literal the buffer's offsets count from.
	// The list is built without a branch on the literal values (random
	// bits, mispredicted half the time): every literal is written, and
	// the count advances past the 0-literals only.
	var buf [256]int32
	k, off := 0, 0
	for i := 0; i < nl; i++ {
		buf[k] = int32(i - off)
		k += zeroOf(lit[i])
		if k == len(buf) {
			cl.tpm4List(base+off, buf[:k])
			k, off = 0, i+1
		}
	}
	cl.tpm4List(base+off, buf[:k])
}

// zeroOf is 1 for false, 0 for true (compiled without a branch).
func zeroOf(b bool) int {
	v := 1
	if b {
		v = 0
	}
	return v
}

// Check verifies every SPV sums to 2^B, every include mass equals its
// SPV's include states and every support holds its SPV's mass.
func (cl *Clauses) Check() error { return cl.check(cl.bits) }

// Lane returns the state of clause c's lane.
func (cl *Clauses) Lane(c int) uint64 { return cl.lanes[c].s }

// SetLane sets the state of clause c's lane (a state Lane returned, so
// that training continues where it stopped).
func (cl *Clauses) SetLane(c int, s uint64) { cl.lanes[c].s = s }

// Restore replaces every SPV with spv (2N words per TA in TA order, each
// TA's masses summing to 2^B) and derives the include masses and supports
// from them: with the lanes (SetLane) the clauses continue training
// exactly as the ones whose SPVs spv holds.
func (cl *Clauses) Restore(spv []uint16) error {
	if len(spv) != len(cl.spv) {
		return fmt.Errorf("fixedtrain: restore: %d SPV words, want %d", len(spv), len(cl.spv))
	}
	n, n2 := cl.n, 2*cl.n
	copy(cl.spv, spv)
	for ta := range cl.inc {
		q := cl.spv[ta*n2 : (ta+1)*n2]
		lo, hi := -1, 0
		var inc uint32
		for i, v := range q {
			if v != 0 {
				if lo < 0 {
					lo = i
				}
				hi = i
			}
			if i >= n {
				inc += uint32(v)
			}
		}
		if lo < 0 {
			return fmt.Errorf("fixedtrain: restore: TA %d has an empty SPV", ta)
		}
		if inc > 1<<uint(cl.bits) {
			return fmt.Errorf("fixedtrain: restore: TA %d include mass %d over 2^%d", ta, inc, cl.bits)
		}
		cl.inc[ta] = uint16(inc)
		cl.lo[ta], cl.hi[ta] = uint16(lo), uint16(hi)
	}
	if err := cl.Check(); err != nil {
		return fmt.Errorf("fixedtrain: restore: %w", err)
	}
	return nil
}
