package lfsr

import (
	"fmt"
	"sort"
)

// Taps maps each supported LFSR width W to the exponents E (below W, in
// descending order, always ending in 0) of its primitive characteristic
// polynomial x^W + sum_{e in E} x^e. The polynomials have the fewest terms
// and the smallest largest exponent found for each width, so that a leap of
// up to W-max(E) bits needs only |E|-input XORs.
var Taps = map[int][]int{
	16: {5, 3, 2, 0},
	20: {3, 0},
	24: {4, 3, 1, 0},
	32: {7, 6, 2, 0},
	40: {5, 4, 3, 0},
	48: {9, 7, 4, 0},
	64: {4, 3, 1, 0},
}

// DefaultWidth is the LFSR width used when none is given.
const DefaultWidth = 32

// Widths returns the supported LFSR widths in ascending order.
func Widths() []int {
	w := make([]int, 0, len(Taps))
	for k := range Taps {
		w = append(w, k)
	}
	sort.Ints(w)
	return w
}

// MaxLeap returns the largest draw width B that width W supports
// (W - max(E)), or 0 if W is not supported.
func MaxLeap(w int) int {
	e, ok := Taps[w]
	if !ok {
		return 0
	}
	return w - e[0]
}

// Check reports whether an LFSR of width w can deliver b-bit draws.
func Check(w, b int) error {
	if _, ok := Taps[w]; !ok {
		return fmt.Errorf("lfsr: width %d not supported (supported: %v)", w, Widths())
	}
	if b < 1 || b > MaxLeap(w) {
		return fmt.Errorf("lfsr: draw width %d does not fit a %d-bit LFSR (1..%d: a draw needs max tap + B <= W)", b, w, MaxLeap(w))
	}
	return nil
}

// Phi returns the odd W-bit golden-ratio constant used for seeding:
// 0x9E3779B97F4A7C15 >> (64-W) | 1.
func Phi(w int) uint64 {
	return 0x9E3779B97F4A7C15>>(64-uint(w)) | 1
}

func mask(w int) uint64 {
	if w == 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// Mix is the seeding bijection on W-bit words (docs/fixed-point.md 3.3): a
// shift-add-xor finalizer whose carries make lanes non-linear images of the
// request seed.
func Mix(x uint64, w int) uint64 {
	m := mask(w)
	x &= m
	x = (x + x<<10) & m
	x ^= x >> 6
	x = (x + x<<3) & m
	x ^= x >> 11
	x = (x + x<<15) & m
	return x
}

// LaneSeed returns the initial state of lane l for request seed q.
func LaneSeed(q uint32, l, w int) uint64 {
	m := mask(w)
	t := (uint64(q) + uint64(l+1)*Phi(w)) & m
	s := Mix(t, w)
	if s == 0 {
		s = Phi(w)
	}
	return s
}

// LFSR is one lane's generator. The zero value is not usable; use New.
type LFSR struct {
	state uint64
	w, b  uint
	taps  []uint
	mask  uint64
	bmask uint64
}

// New returns an LFSR of width w delivering b-bit draws from the given
// non-zero state.
func New(w, b int, state uint64) (*LFSR, error) {
	if err := Check(w, b); err != nil {
		return nil, err
	}
	l := &LFSR{w: uint(w), b: uint(b), mask: mask(w), bmask: 1<<uint(b) - 1}
	for _, e := range Taps[w] {
		l.taps = append(l.taps, uint(e))
	}
	if err := l.Seed(state); err != nil {
		return nil, err
	}
	return l, nil
}

// Seed sets the state. A zero state (the LFSR's fixed point) is refused.
func (l *LFSR) Seed(state uint64) error {
	state &= l.mask
	if state == 0 {
		return fmt.Errorf("lfsr: zero state")
	}
	l.state = state
	return nil
}

// State returns the current W-bit state (a[n] in bit 0).
func (l *LFSR) State() uint64 { return l.state }

// Next makes one draw: it advances the sequence by B steps and returns the
// B new bits, the oldest in bit 0.
func (l *LFSR) Next() uint64 {
	s := l.state
	var r uint64
	for _, e := range l.taps {
		r ^= s >> e
	}
	r &= l.bmask
	l.state = (s>>l.b | r<<(l.w-l.b)) & l.mask
	return r
}

// Step advances the sequence by a single step and returns the new bit
// a[n+W]: the plain recurrence, used to cross-check Next.
func (l *LFSR) Step() uint64 {
	s := l.state
	var bit uint64
	for _, e := range l.taps {
		bit ^= s >> e & 1
	}
	l.state = (s>>1 | bit<<(l.w-1)) & l.mask
	return bit
}
