package conv

import (
	"fmt"
	"math/bits"
)

// Limits on shapes: an image of at most MaxSide x MaxSide pixels and
// MaxPlanes bit-planes.
const (
	MaxSide   = 1024
	MaxPlanes = 16
)

// Shape is the geometry of a convolutional model: an H x W image
// booleanized into Planes bit-planes, a WY x WX window moved with stride 1.
//
// The features of the patch at (y, x) (0 <= y <= H-WY, 0 <= x <= W-WX),
// in order:
//
//   - the window's bits, feature (p*WY + dy)*WX + dx being plane p's bit
//     at pixel (y+dy, x+dx);
//   - H-WY row thermometer bits, bit k (k = 0..H-WY-1) being y > k;
//   - W-WX column thermometer bits, bit k being x > k.
//
// Literal i < F (F = Features()) is feature i; literal F+i is its negation.
type Shape struct {
	H      int `json:"h"`
	W      int `json:"w"`
	Planes int `json:"planes"`
	WY     int `json:"wy"`
	WX     int `json:"wx"`
}

// Validate reports the first invalid dimension.
func (s Shape) Validate() error {
	switch {
	case s.H < 1 || s.H > MaxSide || s.W < 1 || s.W > MaxSide:
		return fmt.Errorf("conv: image %dx%d, want 1..%d on each side", s.H, s.W, MaxSide)
	case s.Planes < 1 || s.Planes > MaxPlanes:
		return fmt.Errorf("conv: %d bit-planes, want 1..%d", s.Planes, MaxPlanes)
	case s.WY < 1 || s.WY > s.H || s.WX < 1 || s.WX > s.W:
		return fmt.Errorf("conv: window %dx%d does not fit the %dx%d image", s.WY, s.WX, s.H, s.W)
	}
	return nil
}

// PY is the number of patch rows, H-WY+1.
func (s Shape) PY() int { return s.H - s.WY + 1 }

// PX is the number of patch columns, W-WX+1.
func (s Shape) PX() int { return s.W - s.WX + 1 }

// Patches is the number of patch positions, PY*PX.
func (s Shape) Patches() int { return s.PY() * s.PX() }

// WindowBits is WY*WX*Planes.
func (s Shape) WindowBits() int { return s.WY * s.WX * s.Planes }

// Features is F = WY*WX*Planes + (H-WY) + (W-WX).
func (s Shape) Features() int { return s.WindowBits() + s.H - s.WY + s.W - s.WX }

// Literals is 2F.
func (s Shape) Literals() int { return 2 * s.Features() }

// Words is the number of 64-bit words holding one patch's literals.
func (s Shape) Words() int { return (s.Literals() + 63) / 64 }

// Pixels is H*W.
func (s Shape) Pixels() int { return s.H * s.W }

// Patches holds the literals of every patch of one booleanized image,
// Words() words per patch, patch (y, x) at index y*PX + x, literal i in
// bit i%64 of word i/64. Unused bits of the last word are 0.
type Patches struct {
	Shape Shape
	Bits  []uint64
	rows  []uint64 // scratch of Fill's word path: one word per plane row
}

// NewPatches returns an all-zero Patches of shape s.
func NewPatches(s Shape) *Patches {
	return &Patches{Shape: s, Bits: make([]uint64, s.Patches()*s.Words())}
}

// Patch returns the words of patch p.
func (pt *Patches) Patch(p int) []uint64 {
	w := pt.Shape.Words()
	return pt.Bits[p*w : (p+1)*w : (p+1)*w]
}

// Literal reports literal i of patch p.
func (pt *Patches) Literal(p, i int) bool {
	w := pt.Shape.Words()
	return pt.Bits[p*w+i/64]>>uint(i%64)&1 == 1
}

// Unpack writes the literals of patch p into dst (len >= Literals()).
func (pt *Patches) Unpack(p int, dst []bool) {
	nl := pt.Shape.Literals()
	words := pt.Patch(p)
	for i := 0; i < nl; i++ {
		dst[i] = words[i/64]>>uint(i%64)&1 == 1
	}
}

// Fill sets the literals of every patch from a booleanized image: planes
// holds Planes*H*W bits, plane p's pixel (y, x) at index (p*H + y)*W + x.
func (pt *Patches) Fill(planes []bool) error {
	s := pt.Shape
	if len(planes) != s.Planes*s.Pixels() {
		return fmt.Errorf("conv: booleanized image has %d bits, shape %dx%d x %d planes needs %d", len(planes), s.H, s.W, s.Planes, s.Planes*s.Pixels())
	}
	if len(pt.Bits) != s.Patches()*s.Words() {
		return fmt.Errorf("conv: patch buffer has %d words, shape needs %d", len(pt.Bits), s.Patches()*s.Words())
	}
	if s.W < 64 && s.H-s.WY < 64 {
		pt.fillWords(planes)
		return nil
	}
	f := s.Features()
	nw := s.Words()
	for y := 0; y < s.PY(); y++ {
		for x := 0; x < s.PX(); x++ {
			w := pt.Bits[(y*s.PX()+x)*nw : (y*s.PX()+x+1)*nw]
			clear(w)
			set := func(i int) { w[i/64] |= 1 << uint(i%64) }
			i := 0
			for p := 0; p < s.Planes; p++ {
				for dy := 0; dy < s.WY; dy++ {
					row := planes[(p*s.H+y+dy)*s.W+x : (p*s.H+y+dy)*s.W+x+s.WX]
					for _, b := range row {
						if b {
							set(i)
						} else {
							set(f + i)
						}
						i++
					}
				}
			}
			for k := 0; k < s.H-s.WY; k++ {
				if y > k {
					set(i)
				} else {
					set(f + i)
				}
				i++
			}
			for k := 0; k < s.W-s.WX; k++ {
				if x > k {
					set(i)
				} else {
					set(f + i)
				}
				i++
			}
		}
	}
	return nil
}

// fillWords is Fill for images narrower than 64 pixels: every plane row
// becomes one word and each window row is shifted into place WX bits at a
// time.
func (pt *Patches) fillWords(planes []bool) {
	s := pt.Shape
	if len(pt.rows) != s.Planes*s.H {
		pt.rows = make([]uint64, s.Planes*s.H)
	}
	for r := range pt.rows {
		var v uint64
		for x, b := range planes[r*s.W : (r+1)*s.W] {
			if b {
				v |= 1 << uint(x)
			}
		}
		pt.rows[r] = v
	}
	f := s.Features()
	nw := s.Words()
	wb := s.WindowBits()
	ty, tx := s.H-s.WY, s.W-s.WX
	mx := uint64(1)<<uint(s.WX) - 1
	for y := 0; y < s.PY(); y++ {
		for x := 0; x < s.PX(); x++ {
			w := pt.Bits[(y*s.PX()+x)*nw : (y*s.PX()+x+1)*nw]
			clear(w)
			off := 0
			for p := 0; p < s.Planes; p++ {
				for _, r := range pt.rows[p*s.H+y : p*s.H+y+s.WY] {
					v := r >> uint(x) & mx
					put(w, off, v, s.WX)
					put(w, f+off, ^v&mx, s.WX)
					off += s.WX
				}
			}
			// Row thermometer: bits k < y set; column: bits k < x set.
			if ty > 0 {
				v := uint64(1)<<uint(y) - 1
				put(w, wb, v, ty)
				put(w, f+wb, ^v&(uint64(1)<<uint(ty)-1), ty)
			}
			if tx > 0 {
				v := uint64(1)<<uint(x) - 1
				put(w, wb+ty, v, tx)
				put(w, f+wb+ty, ^v&(uint64(1)<<uint(tx)-1), tx)
			}
		}
	}
}

// put ORs the n < 64 low bits of v into the bit string w at bit offset off.
func put(w []uint64, off int, v uint64, n int) {
	k, sh := off/64, uint(off%64)
	w[k] |= v << sh
	if int(sh)+n > 64 {
		w[k+1] |= v >> (64 - sh)
	}
}

// Fires reports whether the clause with include words inc (Words() words)
// fires on patch words lit: no included literal is 0.
func Fires(inc, lit []uint64) bool {
	for w, m := range inc {
		if m&^lit[w] != 0 {
			return false
		}
	}
	return true
}

// FiresAnywhere reports whether the clause with include words inc fires
// on at least one patch of pt (the OR over patches), scanning patches in
// order and stopping at the first that fires. A clause with no included
// literal fires everywhere.
func (pt *Patches) FiresAnywhere(inc []uint64) bool {
	nw := len(inc)
	b := pt.Bits
	switch nw {
	case 5:
		i0, i1, i2, i3, i4 := inc[0], inc[1], inc[2], inc[3], inc[4]
		for p := 0; p+5 <= len(b); p += 5 {
			if i0&^b[p] == 0 && i1&^b[p+1] == 0 && i2&^b[p+2] == 0 && i3&^b[p+3] == 0 && i4&^b[p+4] == 0 {
				return true
			}
		}
		return false
	}
	for p := 0; p+nw <= len(b); p += nw {
		if Fires(inc, b[p:p+nw]) {
			return true
		}
	}
	return false
}

// FirstFiring returns the first patch (in increasing order) on which the
// clause with include words inc fires, or -1: the number of patches a
// sequential scan with early exit evaluates is FirstFiring+1, or Patches()
// when it returns -1.
func (pt *Patches) FirstFiring(inc []uint64) int {
	nw := len(inc)
	for p, k := 0, 0; p+nw <= len(pt.Bits); p, k = p+nw, k+1 {
		if Fires(inc, pt.Bits[p:p+nw]) {
			return k
		}
	}
	return -1
}

// Firing appends to dst the patches on which the clause with include
// words inc fires, in increasing order, and returns it.
func (pt *Patches) Firing(inc []uint64, dst []int32) []int32 {
	nw := len(inc)
	b := pt.Bits
	if nw == 5 {
		i0, i1, i2, i3, i4 := inc[0], inc[1], inc[2], inc[3], inc[4]
		for p, k := 0, int32(0); p+5 <= len(b); p, k = p+5, k+1 {
			if i0&^b[p] == 0 && i1&^b[p+1] == 0 && i2&^b[p+2] == 0 && i3&^b[p+3] == 0 && i4&^b[p+4] == 0 {
				dst = append(dst, k)
			}
		}
		return dst
	}
	for p, k := 0, int32(0); p+nw <= len(b); p, k = p+nw, k+1 {
		if Fires(inc, b[p:p+nw]) {
			dst = append(dst, k)
		}
	}
	return dst
}

// popcount is the number of set bits in words.
func popcount(words []uint64) int {
	n := 0
	for _, w := range words {
		n += bits.OnesCount64(w)
	}
	return n
}
