package convtrain

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/ptmhw/ptm/golden/conv"
)

// maxPlaneWords bounds the width of a literal plane: shapes with more than
// 64*maxPlaneWords patches, or images wider than 64 pixels, keep the
// patch-major conv.Patches (planesFit).
const maxPlaneWords = 16

// litPlanes is the image's literals laid out literal-major, the transpose
// of conv.Patches: the plane of literal i is pw words at bits[i*pw:], bit
// p%64 of word p/64 set iff literal i is 1 on patch p (p = y*PX + x, as in
// conv.Patches), the bits past the last patch 0. A clause then fires on
// the patches of the AND of the planes of its included literals, 64
// patches per word operation, and that AND is the list of patches
// conv.Patches.Firing returns, in the same increasing order.
//
// The thermometer literals do not depend on the image: their planes are
// set once by newLitPlanes and fill writes only the window literals.
type litPlanes struct {
	sh   conv.Shape
	f    int      // features: literal f+i is NOT literal i
	pw   int      // words per plane, ceil(patches/64)
	bits []uint64 // the planes, literal i at i*pw
	full []uint64 // every patch: the AND of no plane
	rows []uint64 // fill's scratch: image row r (plane p, row y at p*H+y), pixel x in bit x
}

// planesFit reports whether litPlanes serves shape sh: rows of at most 64
// pixels (one word) and at most 64*maxPlaneWords patches.
func planesFit(sh conv.Shape) bool {
	return sh.W <= 64 && (sh.Patches()+63)/64 <= maxPlaneWords
}

// newLitPlanes returns the planes of shape sh (planesFit) with the
// thermometer literals set and every window literal 0.
func newLitPlanes(sh conv.Shape) *litPlanes {
	pw := (sh.Patches() + 63) / 64
	lp := &litPlanes{sh: sh, f: sh.Features(), pw: pw, bits: make([]uint64, sh.Literals()*pw),
		full: make([]uint64, pw), rows: make([]uint64, sh.Planes*sh.H)}
	for p := 0; p < sh.Patches(); p++ {
		lp.full[p/64] |= 1 << uint(p%64)
	}
	// Row thermometer k (literal wb+k) is 1 on the patches of row y > k,
	// column thermometer k (literal wb+ty+k) on the patches of column x > k.
	wb, ty := sh.WindowBits(), sh.H-sh.WY
	for p := 0; p < sh.Patches(); p++ {
		y, x := p/sh.PX(), p%sh.PX()
		for k := 0; k < ty; k++ {
			lp.set(wb+k, p, y > k)
		}
		for k := 0; k < sh.W-sh.WX; k++ {
			lp.set(wb+ty+k, p, x > k)
		}
	}
	return lp
}

// set sets feature i's literal on patch p to v and its negation to !v.
func (lp *litPlanes) set(i, p int, v bool) {
	if !v {
		i += lp.f
	}
	lp.bits[i*lp.pw+p/64] |= 1 << uint(p%64)
}

// plane returns the plane of literal i.
func (lp *litPlanes) plane(i int) []uint64 {
	return lp.bits[i*lp.pw : (i+1)*lp.pw : (i+1)*lp.pw]
}

// fill sets the window literals from a booleanized image (conv.Patches.Fill's
// layout and checks). Window pixel (dy, dx) of bit-plane b is feature
// (b*WY + dy)*WX + dx; its plane's patch row y is image row y+dy shifted
// right by dx, PX bits placed at bit y*PX.
func (lp *litPlanes) fill(planes []bool) error {
	s := lp.sh
	if len(planes) != s.Planes*s.Pixels() {
		return fmt.Errorf("conv: booleanized image has %d bits, shape %dx%d x %d planes needs %d", len(planes), s.H, s.W, s.Planes, s.Planes*s.Pixels())
	}
	for r := range lp.rows {
		var v uint64
		for x, b := range planes[r*s.W : (r+1)*s.W] {
			if b {
				v |= 1 << uint(x)
			}
		}
		lp.rows[r] = v
	}
	px, py := s.PX(), s.PY()
	mx := ^uint64(0) >> uint(64-px)
	for b := 0; b < s.Planes; b++ {
		for dy := 0; dy < s.WY; dy++ {
			rows := lp.rows[b*s.H+dy : b*s.H+dy+py]
			for dx := 0; dx < s.WX; dx++ {
				i := (b*s.WY+dy)*s.WX + dx
				pos, neg := lp.plane(i), lp.plane(lp.f+i)
				clear(pos)
				for y, r := range rows {
					put(pos, y*px, r>>uint(dx)&mx, px)
				}
				for k, v := range pos {
					neg[k] = lp.full[k] &^ v
				}
			}
		}
	}
	return nil
}

// put ORs the n <= 64 low bits of v into the bit string w at bit offset off.
func put(w []uint64, off int, v uint64, n int) {
	k, sh := off/64, uint(off%64)
	w[k] |= v << sh
	if int(sh)+n > 64 {
		w[k+1] |= v >> (64 - sh)
	}
}

// fires evaluates the clause with include words inc on every patch: it
// leaves in acc (pw words) the patches where no included literal is 0 and
// reports whether there is one. It stops, with acc all 0, as soon as the
// AND of the planes so far is empty. A clause with no included literal
// fires on every patch.
func (lp *litPlanes) fires(inc, acc []uint64) bool {
	pw := lp.pw
	copy(acc, lp.full)
	for w, m := range inc {
		for m != 0 {
			i := w*64 + bits.TrailingZeros64(m)
			m &= m - 1
			p := lp.bits[i*pw : i*pw+pw : i*pw+pw]
			var any uint64
			for k := range acc {
				acc[k] &= p[k]
				any |= acc[k]
			}
			if any == 0 {
				return false
			}
		}
	}
	return true
}

// nth returns the index of the k-th (from 0) set bit of the bit string
// acc, which holds more than k set bits: the k-th patch of a firing set.
func nth(acc []uint64, k int) int {
	for w, m := range acc {
		n := bits.OnesCount64(m)
		if k >= n {
			k -= n
			continue
		}
		for ; k > 0; k-- {
			m &= m - 1
		}
		return w*64 + bits.TrailingZeros64(m)
	}
	panic("convtrain: nth past the set bits")
}

// count is the number of set bits of the bit string acc.
func count(acc []uint64) int {
	n := 0
	for _, m := range acc {
		n += bits.OnesCount64(m)
	}
	return n
}

// unpack writes the literals of patch p into dst (len >= Literals()),
// read from the image rows fill kept: window row dy of bit-plane b is
// image row y+dy shifted right by x, WX bits, and the thermometers follow
// from y and x. Eight literals are written per table look-up.
func (lp *litPlanes) unpack(p int, dst []bool) {
	s := lp.sh
	y, x := p/s.PX(), p%s.PX()
	f := lp.f
	mx := ^uint64(0) >> uint(64-s.WX)
	i := 0
	for b := 0; b < s.Planes; b++ {
		for _, r := range lp.rows[b*s.H+y : b*s.H+y+s.WY] {
			v := r >> uint(x) & mx
			expand(dst[i:i+s.WX], v)
			expand(dst[f+i:f+i+s.WX], ^v&mx)
			i += s.WX
		}
	}
	for k := 0; k < s.H-s.WY; k++ {
		dst[i], dst[f+i] = y > k, y <= k
		i++
	}
	for k := 0; k < s.W-s.WX; k++ {
		dst[i], dst[f+i] = x > k, x <= k
		i++
	}
}

// bytes8 holds in byte j of bytes8[v] bit j of v: eight bools at once.
var bytes8 = func() (t [256]uint64) {
	for v := range t {
		for j := 0; j < 8; j++ {
			t[v] |= uint64(v>>uint(j)&1) << uint(8*j)
		}
	}
	return t
}()

// expand sets dst[j] to bit j of v for every j < len(dst) (<= 64).
func expand(dst []bool, v uint64) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst))
	j := 0
	for ; j+8 <= len(b); j += 8 {
		binary.LittleEndian.PutUint64(b[j:], bytes8[byte(v>>uint(j))])
	}
	for ; j < len(b); j++ {
		b[j] = byte(v >> uint(j) & 1)
	}
}
