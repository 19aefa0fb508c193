package conv

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/lfsr"
)

// Bank is a quantized convolutional model: the head and one B-bit include
// threshold per TA (docs/fixed-point.md 2.2: 0 never includes, 2^B-1
// always includes, otherwise include with probability q/2^B), TA (c, i) at
// c*Literals + i.
type Bank struct {
	Head
	Bits   int      `json:"bits"`
	Thresh []uint32 `json:"-"`
}

// Check validates the bank.
func (b *Bank) Check() error {
	if err := b.Head.Validate(); err != nil {
		return err
	}
	if err := fixed.CheckBits(b.Bits); err != nil {
		return err
	}
	if len(b.Thresh) != b.TAs() {
		return fmt.Errorf("conv: %d thresholds, want %d TAs", len(b.Thresh), b.TAs())
	}
	max := uint32(1)<<uint(b.Bits) - 1
	for ta, q := range b.Thresh {
		if q > max {
			return fmt.Errorf("conv: TA %d threshold %d exceeds %d bits", ta, q, b.Bits)
		}
	}
	return nil
}

// Include returns the include probability threshold q of TA ta stands for.
func (b *Bank) Include(ta int) float64 {
	q := b.Thresh[ta]
	if q == 1<<uint(b.Bits)-1 {
		return 1
	}
	return float64(q) / float64(uint64(1)<<uint(b.Bits))
}

// Float returns the float model whose include probabilities are the
// bank's (Include): sampling it has the distribution of the core's.
func (b *Bank) Float() *Model {
	m := &Model{Head: b.Head, Include: make([]float64, b.TAs())}
	for ta := range m.Include {
		m.Include[ta] = b.Include(ta)
	}
	return m
}

// Layout is the beat schedule of a bank on a set of lanes, as in
// golden/fixed: G clause groups of LC clauses, Bt beats of LL literals.
type Layout struct {
	Groups int // G = ceil(C / LC)
	Beats  int // Bt = ceil(2F / LL)
	Depth  int // D = G*Bt, beats (draws per lane) per sample
}

// LayoutOf returns the schedule of bank b on hardware h.
func LayoutOf(b *Head, h fixed.HW) Layout {
	g := (b.Clauses + h.ClauseLanes - 1) / h.ClauseLanes
	bt := (b.Shape.Literals() + h.LiteralLanes - 1) / h.LiteralLanes
	return Layout{Groups: g, Beats: bt, Depth: g * bt}
}

// CheckHW validates hardware parameters against a head.
func CheckHW(b *Head, h fixed.HW) error {
	if err := fixed.CheckBits(h.Bits); err != nil {
		return err
	}
	if err := lfsr.Check(h.LFSRWidth, h.Bits); err != nil {
		return err
	}
	if h.LiteralLanes < 1 || h.LiteralLanes > b.Shape.Literals() {
		return fmt.Errorf("conv: %d literal lanes, want 1..%d (2F)", h.LiteralLanes, b.Shape.Literals())
	}
	if h.ClauseLanes < 1 || h.ClauseLanes > b.Clauses {
		return fmt.Errorf("conv: %d clause lanes, want 1..%d (clauses)", h.ClauseLanes, b.Clauses)
	}
	return nil
}

// Core is the bit-exact model of the convolutional inference core
// (docs/fixed-point-conv.md): the sampling stream of golden/fixed's Core
// (lanes, beats, seeds) decides every TA's action once per sample, then
// each clause is evaluated on every patch. It is not safe for concurrent
// use.
type Core struct {
	bank  *Bank
	hw    HW
	lay   Layout
	lanes []lane
	max   uint32
	inc   []uint64 // LC clauses' include words
	evals uint64   // clause-patch evaluations of a sequential early-exit scan
	any   []bool
	out   []bool
}

// HW is golden/fixed's hardware parameters (bits, LFSR width, clause and
// literal lanes).
type HW = fixed.HW

// NewCore builds the core model for a bank on hardware h.
func NewCore(b *Bank, h HW) (*Core, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	if h.Bits != b.Bits {
		return nil, fmt.Errorf("conv: hardware has %d-bit probabilities, bank has %d", h.Bits, b.Bits)
	}
	if err := CheckHW(&b.Head, h); err != nil {
		return nil, err
	}
	nw := b.Shape.Words()
	c := &Core{bank: b, hw: h, lay: LayoutOf(&b.Head, h), max: uint32(1)<<uint(h.Bits) - 1,
		inc: make([]uint64, h.ClauseLanes*nw), any: make([]bool, h.ClauseLanes), out: make([]bool, b.Clauses)}
	c.lanes = make([]lane, h.Lanes())
	return c, nil
}

// lane is a W-bit leap-forward LFSR making B-bit draws
// (docs/fixed-point.md 3.2): lfsr.LFSR's Next, with the taps unrolled.
// Unused tap slots shift by 64, which gives 0.
type lane struct {
	s          uint64
	t          [4]uint
	b, top     uint
	mask, bmsk uint64
}

func newLane(w, b int, seed uint64) lane {
	l := lane{s: seed, t: [4]uint{64, 64, 64, 64}, b: uint(b), top: uint(w - b),
		mask: 1<<uint(w) - 1, bmsk: 1<<uint(b) - 1}
	if w == 64 {
		l.mask = ^uint64(0)
	}
	for k, e := range lfsr.Taps[w] {
		l.t[k] = uint(e)
	}
	return l
}

func (l *lane) next() uint32 {
	s := l.s
	r := (s>>l.t[0] ^ s>>l.t[1] ^ s>>l.t[2] ^ s>>l.t[3]) & l.bmsk
	l.s = (s>>l.b | r<<l.top) & l.mask
	return uint32(r)
}

// Layout returns the core's schedule.
func (c *Core) Layout() Layout { return c.lay }

// PatchEvals returns the clause-patch evaluations made since the core was
// built by a sequential scan that stops at a clause's first firing patch
// and skips clauses with no included literal: a measure of the work of a
// hardware that evaluates one clause on one patch at a time.
func (c *Core) PatchEvals() uint64 { return c.evals }

// Run executes one request: an image's patches, K samples, seed q. It
// returns every sample's raw class sums (K*Classes, sample-major) in sums
// (grown as needed) and the accumulated statistics.
func (c *Core) Run(pt *Patches, K int, q uint32, sums []int32) ([]int32, fixed.Stats, error) {
	b := c.bank
	if pt.Shape != b.Shape {
		return nil, fixed.Stats{}, fmt.Errorf("conv: patches of shape %+v, bank has %+v", pt.Shape, b.Shape)
	}
	if K < 1 {
		return nil, fixed.Stats{}, fmt.Errorf("conv: K = %d, want >= 1", K)
	}
	for l := range c.lanes {
		c.lanes[l] = newLane(c.hw.LFSRWidth, c.hw.Bits, lfsr.LaneSeed(q, l, c.hw.LFSRWidth))
	}
	nc := b.Classes
	sums = grow(sums, K*nc)
	nl, nw := b.Shape.Literals(), b.Shape.Words()
	LC, LL := c.hw.ClauseLanes, c.hw.LiteralLanes
	for k := 0; k < K; k++ {
		for g := 0; g < c.lay.Groups; g++ {
			clear(c.inc)
			clear(c.any)
			for bt := 0; bt < c.lay.Beats; bt++ {
				for ci := 0; ci < LC; ci++ {
					cl := g*LC + ci
					lanes := c.lanes[ci*LL : (ci+1)*LL]
					for li := range lanes {
						r := lanes[li].next()
						i := bt*LL + li
						if i >= nl || cl >= b.Clauses {
							continue
						}
						th := b.Thresh[cl*nl+i]
						if th == c.max || r < th {
							c.any[ci] = true
							c.inc[ci*nw+i/64] |= 1 << uint(i%64)
						}
					}
				}
			}
			for ci := 0; ci < LC; ci++ {
				cl := g*LC + ci
				if cl >= b.Clauses {
					continue
				}
				c.out[cl] = false
				if c.any[ci] {
					f := pt.FirstFiring(c.inc[ci*nw : (ci+1)*nw])
					c.out[cl] = f >= 0
					if f < 0 {
						f = b.Shape.Patches() - 1
					}
					c.evals += uint64(f + 1)
				}
			}
		}
		b.classSums(c.out, sums[k*nc:(k+1)*nc])
	}
	return sums, b.Stats(sums, K), nil
}

// SetSeed is the seed of set m of a query with seed q:
// q + m*0x9E3779B9 mod 2^32 (docs/fixed-point.md 8).
func SetSeed(q uint32, m int) uint32 { return q + uint32(m)*0x9E3779B9 }

// RunSets runs one query over M threshold sets (pts[m] the image's
// patches under set m): set m draws SetSamples(K, M, m) samples with seed
// SetSeed(q, m); the samples are concatenated in set order and the
// statistics added, as docs/fixed-point.md 8 defines for tabular models.
func (c *Core) RunSets(pts []*Patches, K int, q uint32, sums []int32) ([]int32, fixed.Stats, error) {
	if len(pts) < 1 {
		return nil, fixed.Stats{}, fmt.Errorf("conv: no threshold sets")
	}
	if K < 1 {
		return nil, fixed.Stats{}, fmt.Errorf("conv: K = %d, want >= 1", K)
	}
	nc := c.bank.Classes
	sums = grow(sums, K*nc)
	off := 0
	for m, pt := range pts {
		km := SetSamples(K, len(pts), m)
		if km == 0 {
			continue
		}
		if _, _, err := c.Run(pt, km, SetSeed(q, m), sums[off*nc:(off+km)*nc]); err != nil {
			return nil, fixed.Stats{}, fmt.Errorf("set %d: %w", m, err)
		}
		off += km
	}
	return sums, c.bank.Stats(sums, K), nil
}
