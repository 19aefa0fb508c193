package fixedtrain

import "github.com/ptmhw/ptm/golden/lfsr"

// LaneWidth is the width W of every trainer lane: a 64-bit LFSR with the
// characteristic polynomial x^64 + x^4 + x^3 + x + 1 (lfsr.Taps[64]).
const LaneWidth = 64

// lane is a leap-forward LFSR of width 64 (docs/fixed-point.md 3.1-3.2),
// inlined for speed: a draw of b bits is r = (s ^ s>>1 ^ s>>3 ^ s>>4) mod
// 2^b, and the state becomes s>>b | r<<(64-b). lfsr.LFSR gives the same
// numbers (TestLaneMatchesLFSR).
type lane struct{ s uint64 }

// draw16 makes a 16-bit draw.
func (l *lane) draw16() uint32 {
	s := l.s
	r := (s ^ s>>1 ^ s>>3 ^ s>>4) & 0xFFFF
	l.s = s>>16 | r<<48
	return uint32(r)
}

// draw32 makes a 32-bit draw.
func (l *lane) draw32() uint32 {
	s := l.s
	r := (s ^ s>>1 ^ s>>3 ^ s>>4) & 0xFFFFFFFF
	l.s = s>>32 | r<<32
	return uint32(r)
}

// Seed32 folds the 64-bit training seed into the 32-bit seed the lanes are
// derived from: the low word XOR the high word.
func Seed32(seed uint64) uint32 { return uint32(seed) ^ uint32(seed>>32) }

// ControlSeed is the initial state of the control lane (shuffles and the
// negative class): lfsr.LaneSeed(Seed32(seed), 0, 64).
func ControlSeed(seed uint64) uint64 { return lfsr.LaneSeed(Seed32(seed), 0, LaneWidth) }

// ClauseSeed is the initial state of the lane of global clause c:
// lfsr.LaneSeed(Seed32(seed), 1+c, 64).
func ClauseSeed(seed uint64, c int) uint64 { return lfsr.LaneSeed(Seed32(seed), 1+c, LaneWidth) }
