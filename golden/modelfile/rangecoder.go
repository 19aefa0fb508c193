package modelfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// The range coder of the "range" SPV coding (doc.go, "Convolutional
// models"): an adaptive binary arithmetic coder in integers only (LZMA's
// range coder: 32-bit range, carry propagation through a cached byte;
// 12-bit probabilities, each the mean of two estimates adapting by 2^-3
// and 2^-6), so that a file's bytes depend on nothing but its content.

const (
	probBits = 12
	probOne  = 1 << probBits
	probFast = 3
	probSlow = 6
	topValue = 1 << 24
	// gammaMax bounds the bit length of a gamma-coded value: residuals
	// are within +-maxD2 (2^17), supports within 2^15 states.
	gammaMax = 19
)

// prob is an adaptive probability that the next bit is 0, the mean of
// a fast- and a slow-adapting estimate, each in units of 2^-16.
type prob struct{ fast, slow uint16 }

var probInit = prob{1 << 15, 1 << 15}

// p0 is the probability of a 0 in units of 2^-probBits.
func (p *prob) p0() uint32 {
	v := (uint32(p.fast) + uint32(p.slow)) >> (17 - probBits)
	return min(max(v, 1), probOne-1)
}

func (p *prob) update(b int) {
	if b == 0 {
		p.fast += (0xFFFF - p.fast) >> probFast
		p.slow += (0xFFFF - p.slow) >> probSlow
	} else {
		p.fast -= p.fast >> probFast
		p.slow -= p.slow >> probSlow
	}
}

// rangeEncoder appends the coded bits to out.
type rangeEncoder struct {
	low       uint64
	rng       uint32
	cache     byte
	cacheSize int64
	out       []byte
}

func newRangeEncoder() *rangeEncoder {
	return &rangeEncoder{rng: 0xFFFFFFFF, cacheSize: 1}
}

func (e *rangeEncoder) shiftLow() {
	if uint32(e.low) < 0xFF000000 || e.low>>32 != 0 {
		carry := byte(e.low >> 32)
		t := e.cache
		for {
			e.out = append(e.out, t+carry)
			t = 0xFF
			e.cacheSize--
			if e.cacheSize == 0 {
				break
			}
		}
		e.cache = byte(e.low >> 24)
	}
	e.cacheSize++
	e.low = (e.low & 0x00FFFFFF) << 8
}

func (e *rangeEncoder) bit(p *prob, b int) {
	bound := (e.rng >> probBits) * p.p0()
	if b == 0 {
		e.rng = bound
	} else {
		e.low += uint64(bound)
		e.rng -= bound
	}
	p.update(b)
	for e.rng < topValue {
		e.rng <<= 8
		e.shiftLow()
	}
}

// finish flushes the coder and returns the stream.
func (e *rangeEncoder) finish() []byte {
	for range 5 {
		e.shiftLow()
	}
	return e.out
}

// rangeDecoder reads a stream rangeEncoder wrote. Reading past its end
// sets over (the stream is then corrupt: every byte a valid stream has is
// read exactly once).
type rangeDecoder struct {
	code, rng uint32
	in        []byte
	pos       int
	over      bool
}

func newRangeDecoder(in []byte) (*rangeDecoder, error) {
	if len(in) < 5 {
		return nil, fmt.Errorf("a range-coded stream of %d bytes, at least 5 needed", len(in))
	}
	if in[0] != 0 {
		return nil, fmt.Errorf("a range-coded stream starting with byte %#x, want 0", in[0])
	}
	d := &rangeDecoder{rng: 0xFFFFFFFF, in: in, pos: 5}
	for _, b := range in[1:5] {
		d.code = d.code<<8 | uint32(b)
	}
	return d, nil
}

func (d *rangeDecoder) next() uint32 {
	if d.pos >= len(d.in) {
		d.over = true
		return 0
	}
	b := d.in[d.pos]
	d.pos++
	return uint32(b)
}

func (d *rangeDecoder) bit(p *prob) int {
	bound := (d.rng >> probBits) * p.p0()
	var b int
	if d.code < bound {
		d.rng = bound
	} else {
		d.code -= bound
		d.rng -= bound
		b = 1
	}
	p.update(b)
	for d.rng < topValue {
		d.rng <<= 8
		d.code = d.code<<8 | d.next()
	}
	return b
}

// gammaModel codes a value u >= 1 as its bit length k (unary, one
// adaptive probability per step) and its k-1 low bits (one per length and
// bit position).
type gammaModel struct {
	unary [gammaMax]prob
	mant  [gammaMax + 1][gammaMax]prob
}

func (g *gammaModel) init() {
	for i := range g.unary {
		g.unary[i] = probInit
	}
	for i := range g.mant {
		for j := range g.mant[i] {
			g.mant[i][j] = probInit
		}
	}
}

func (g *gammaModel) encode(e *rangeEncoder, u uint64) {
	k := bits.Len64(u)
	for i := 1; i < k; i++ {
		e.bit(&g.unary[i-1], 1)
	}
	if k < gammaMax {
		e.bit(&g.unary[k-1], 0)
	}
	for i := k - 2; i >= 0; i-- {
		e.bit(&g.mant[k][i], int(u>>uint(i)&1))
	}
}

var errGamma = errors.New("a value longer than the coder's limit")

func (g *gammaModel) decode(d *rangeDecoder) (uint64, error) {
	k := 1
	for k < gammaMax && d.bit(&g.unary[k-1]) == 1 {
		k++
	}
	if k >= gammaMax {
		return 0, errGamma
	}
	u := uint64(1)
	for i := k - 2; i >= 0; i-- {
		u = u<<1 | uint64(d.bit(&g.mant[k][i]))
	}
	return u, nil
}

// Contexts of a residual (predictor.model): the previous mass and the
// recent residuals' magnitude, in half-octave buckets (logBucket); the
// previous slope's sign; the mass left against the previous mass (near
// the support's end); and the previous TA's mass at the same state
// against the prediction (below by more than 2, by 1-2, equal, above).
const (
	ctxMass  = 30
	ctxRes   = 20
	ctxSlope = 3
	ctxRem   = 6
	ctxUp    = 5
)

// resModel codes a residual: zero or not, sign, magnitude.
type resModel struct {
	zero  prob
	sign  [3]prob
	unary [unarySteps]prob
	mag   *gammaModel // shared by the contexts of one mass bucket
}

// unarySteps magnitudes 1..unarySteps are coded in unary, larger ones as
// an escape then gamma-coded.
const unarySteps = 16

// spvModel is the adaptive state of the whole stream.
type spvModel struct {
	lo  gammaModel
	esc [ctxMass]gammaModel
	res [ctxMass][ctxRes][ctxSlope][ctxRem][ctxUp]resModel
}

func newSPVModel() *spvModel {
	m := new(spvModel)
	m.lo.init()
	for a := range m.esc {
		m.esc[a].init()
	}
	for a := range m.res {
		for b := range m.res[a] {
			for c := range m.res[a][b] {
				for d := range m.res[a][b][c] {
					for e := range m.res[a][b][c][d] {
						r := &m.res[a][b][c][d][e]
						r.zero = probInit
						r.sign = [3]prob{probInit, probInit, probInit}
						r.mag = &m.esc[a]
						for i := range r.unary {
							r.unary[i] = probInit
						}
					}
				}
			}
		}
	}
	return m
}

// predictor tracks the masses before the one coded and gives its
// prediction and context.
type predictor struct {
	h    [4]int64 // the four masses before, h[0] the last
	last int64    // the previous residual
	act  int64    // recent residual magnitudes, decaying
	rem  int64    // the mass not yet coded
	up   int64    // the previous TA's mass at the state coded
}

func (p *predictor) predict() int64 { return max(0, p.h[0]+(p.h[0]-p.h[3]+1)/3) }

func (p *predictor) model(m *spvModel) *resModel {
	a := min(logBucket(p.h[0]), ctxMass-1)
	b := min(logBucket(p.act), ctxRes-1)
	c := 1
	switch {
	case p.h[0] < p.h[1]:
		c = 0
	case p.h[0] > p.h[1]:
		c = 2
	}
	d := min(max(bits.Len64(uint64(p.rem))-bits.Len64(uint64(p.h[0]))+2, 0), ctxRem-1)
	e := 2
	switch u := p.up - p.predict(); {
	case u < -2:
		e = 0
	case u < 0:
		e = 1
	case u > 2:
		e = 4
	case u > 0:
		e = 3
	}
	return &m.res[a][b][c][d][e]
}

func (p *predictor) signCtx() int {
	switch {
	case p.last < 0:
		return 0
	case p.last > 0:
		return 2
	}
	return 1
}

func (p *predictor) push(v, r int64) {
	p.h = [4]int64{v, p.h[0], p.h[1], p.h[2]}
	p.last = r
	p.act = (p.act + 4*max(r, -r)) / 2
	p.rem -= v
}

// encodeSPVRange codes tas SPVs of n2 states each, masses summing to 2^w
// (spv(ta, q) writes TA ta's), as the "range" coding's stream: every TA's
// support start lo (gamma-coded lo+1), then its masses from lo on, each
// as its residual from q1 + (q1 - q4 + 1)/3 (q1..q4 the masses before,
// 0 before lo; at least 0): zero or not, sign, magnitude in unary to 16
// then escaped to gamma. The record ends where the masses reach 2^w,
// so the support's end is not coded.
func encodeSPVRange(tas, n2, w int, spv func(ta int, q []uint32) error) ([]byte, error) {
	m := newSPVModel()
	e := newRangeEncoder()
	full := int64(1) << w
	q, prev := make([]uint32, n2), make([]uint32, n2)
	for ta := 0; ta < tas; ta++ {
		copy(prev, q)
		if err := spv(ta, q); err != nil {
			return nil, err
		}
		lo, hi, err := spvSupport(q, ta)
		if err != nil {
			return nil, err
		}
		m.lo.encode(e, uint64(lo)+1)
		var p predictor
		p.rem = full
		for k, v := range q[lo : hi+1] {
			p.up = int64(prev[lo+k])
			r := int64(v) - p.predict()
			rm := p.model(m)
			if r == 0 {
				e.bit(&rm.zero, 0)
			} else {
				e.bit(&rm.zero, 1)
				s := 0
				if r < 0 {
					s = 1
				}
				e.bit(&rm.sign[p.signCtx()], s)
				rm.encodeMag(e, uint64(max(r, -r)))
			}
			p.push(int64(v), r)
		}
	}
	return e.finish(), nil
}

// decodeSPVRange decodes a stream of encodeSPVRange holding tas SPVs of n2
// states at w bits, checking each record as decodeRecords does, and hands
// every TA's masses to put (q is reused). fail reports an error at byte
// at of the stream for TA ta (-1: after the last).
func decodeSPVRange(stream []byte, tas, n2, w int, put func(ta int, q []uint32) error, fail func(ta, at int, msg string) error) error {
	d, err := newRangeDecoder(stream)
	if err != nil {
		return fail(0, 0, err.Error())
	}
	full := int64(1) << w
	m := newSPVModel()
	q, prev := make([]uint32, n2), make([]uint32, n2)
	for ta := 0; ta < tas; ta++ {
		copy(prev, q)
		at := d.pos
		bad := func(format string, a ...any) error {
			return fail(ta, at, fmt.Sprintf(format, a...))
		}
		lo, err := m.lo.decode(d)
		if err != nil {
			return bad("support start: %v", err)
		}
		lo--
		if d.over {
			return bad("the stream ends inside the record")
		}
		if lo >= uint64(n2) {
			return bad("support start %d outside the %d states", lo, n2)
		}
		clear(q)
		p := predictor{rem: full}
		for k := int(lo); p.rem > 0; k++ {
			if k == n2 {
				return bad("the masses hold %d after the last state, the whole SPV %d", full-p.rem, full)
			}
			p.up = int64(prev[k])
			rm := p.model(m)
			var r int64
			if d.bit(&rm.zero) == 1 {
				neg := d.bit(&rm.sign[p.signCtx()])
				u, err := rm.decodeMag(d)
				if err != nil {
					return bad("state %d: %v", k, err)
				}
				if u >= maxD2 {
					return bad("state %d: residual %d outside +-%d", k, u, maxD2)
				}
				r = int64(u)
				if neg == 1 {
					r = -r
				}
			}
			v := p.predict() + r
			switch {
			case d.over:
				return bad("state %d: the stream ends inside the record", k)
			case v < 0 || v > p.rem:
				return bad("state %d: mass %d outside 0..%d (what the SPV has left)", k, v, p.rem)
			case k == int(lo) && v == 0:
				return bad("state %d: the support starts with zero mass", k)
			}
			q[k] = uint32(v)
			p.push(v, r)
		}
		if err := put(ta, q); err != nil {
			return bad("%v", err)
		}
	}
	if d.pos != len(stream) {
		return fail(-1, d.pos, fmt.Sprintf("%d bytes after the last record", len(stream)-d.pos))
	}
	return nil
}

// encodeMag codes a magnitude u >= 1.
func (rm *resModel) encodeMag(e *rangeEncoder, u uint64) {
	for i := uint64(1); i <= unarySteps; i++ {
		if u == i {
			e.bit(&rm.unary[i-1], 0)
			return
		}
		e.bit(&rm.unary[i-1], 1)
	}
	rm.mag.encode(e, u-unarySteps)
}

func (rm *resModel) decodeMag(d *rangeDecoder) (uint64, error) {
	for i := uint64(1); i <= unarySteps; i++ {
		if d.bit(&rm.unary[i-1]) == 0 {
			return i, nil
		}
	}
	u, err := rm.mag.decode(d)
	return u + unarySteps, err
}

// maxRangePayload bounds a "range" payload of tas TAs with values SPV
// values in all: a coded bit costs at most 12 bits (the smallest
// probability is 2^-12), a mass at most 56 coded bits (84 bytes), a
// support start 32; the DEFLATE-coded extras at most 6 bytes per TA, and
// the stream's length and the coder's flush.
func maxRangePayload(tas, values int64) int64 { return 84*values + 64*tas + 1024 }

// encodeRangePayload lays out a "range" payload: the stream's length (an
// unsigned varint), the stream of encodeSPVRange, then extra DEFLATE-
// compressed (as encodeRecords with no TA).
func encodeRangePayload(tas, n2, w int, extra []byte, spv func(ta int, q []uint32) error) ([]byte, error) {
	stream, err := encodeSPVRange(tas, n2, w, spv)
	if err != nil {
		return nil, err
	}
	rest, err := encodeRecords(0, n2, extra, nil)
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, len(stream)+len(rest)+10), uint64(len(stream)))
	out = append(out, stream...)
	return append(out, rest...), nil
}

// decodeRangePayload reads a payload of encodeRangePayload, data[off:
// off+size], as decodeRecords reads a "deflate" one: put receives every
// TA's masses, rest reads the inflated extras. Errors name the file, the
// TA (where) and the byte offset in the file.
func decodeRangePayload(data []byte, name string, off, size int64, tas, n2, w int, where func(ta int) string, rest func(rr *records) error, put func(ta int, q []uint32) error) error {
	payload := data[off : off+size]
	n, k := binary.Uvarint(payload)
	if k <= 0 || n > uint64(len(payload)-k) {
		return errorf(name, off, "payload", ErrInvalid, "range-coded stream length %d (varint of %d bytes) in a payload of %d bytes", n, k, len(payload))
	}
	start := off + int64(k)
	stream := payload[k : k+int(n)]
	err := decodeSPVRange(stream, tas, n2, w, put, func(ta, at int, msg string) error {
		field := "payload"
		if ta >= 0 {
			field = where(ta)
		}
		return errorf(name, start+int64(at), field, ErrInvalid, "range-coded SPVs, record at byte %d of the stream: %s", at, msg)
	})
	if err != nil {
		return err
	}
	eoff := start + int64(n)
	return decodeRecords(data, name, eoff, off+size-eoff, 0, n2, w, where, rest, nil)
}

// logBucket is x for x < 4, then two buckets per power of two.
func logBucket(x int64) int {
	if x < 4 {
		return int(x)
	}
	k := bits.Len64(uint64(x))
	return 2*k - 2 + int(x>>uint(k-2)&1)
}
