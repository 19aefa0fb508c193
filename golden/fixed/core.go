package fixed

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/lfsr"
)

// HW holds the hardware parameters that shape the random stream and the
// schedule (docs/fixed-point.md 3-4).
type HW struct {
	Bits         int `json:"bits"`          // B, probability width
	LFSRWidth    int `json:"lfsr_width"`    // W
	ClauseLanes  int `json:"clause_lanes"`  // LC
	LiteralLanes int `json:"literal_lanes"` // LL
}

// Lanes is L = LC*LL.
func (h HW) Lanes() int { return h.ClauseLanes * h.LiteralLanes }

// Layout is the beat schedule of a shape on a set of lanes.
type Layout struct {
	Groups int // G = ceil(NT*m / LC)
	Beats  int // Bt = ceil(2o / LL)
	Depth  int // D = G*Bt, beats per sample and bank depth
}

// Check validates the hardware parameters against a shape.
func (h HW) Check(sh Shape) error {
	if err := CheckBits(h.Bits); err != nil {
		return err
	}
	if err := lfsr.Check(h.LFSRWidth, h.Bits); err != nil {
		return err
	}
	if h.LiteralLanes < 1 || h.LiteralLanes > sh.Literals() {
		return fmt.Errorf("fixed: %d literal lanes, want 1..%d (2o)", h.LiteralLanes, sh.Literals())
	}
	if h.ClauseLanes < 1 || h.ClauseLanes > sh.TotalClauses() {
		return fmt.Errorf("fixed: %d clause lanes, want 1..%d (clauses in all TMs)", h.ClauseLanes, sh.TotalClauses())
	}
	return nil
}

// LayoutOf returns the schedule of sh on h.
func (h HW) LayoutOf(sh Shape) Layout {
	g := (sh.TotalClauses() + h.ClauseLanes - 1) / h.ClauseLanes
	bt := (sh.Literals() + h.LiteralLanes - 1) / h.LiteralLanes
	return Layout{Groups: g, Beats: bt, Depth: g * bt}
}

// SplitLanes factors a lane count L into clause lanes LC and literal lanes
// LL (LC*LL = L, LL <= 2o, LC <= NT*m) minimizing the beats per sample;
// among equals it prefers more literal lanes.
func SplitLanes(l int, sh Shape) (lc, ll int, err error) {
	if l < 1 {
		return 0, 0, fmt.Errorf("fixed: %d lanes, want >= 1", l)
	}
	best := -1
	for cand := 1; cand <= l; cand++ {
		if l%cand != 0 {
			continue
		}
		c := l / cand
		if cand > sh.Literals() || c > sh.TotalClauses() {
			continue
		}
		d := HW{ClauseLanes: c, LiteralLanes: cand}.LayoutOf(sh).Depth
		if best < 0 || d <= best {
			best, lc, ll = d, c, cand
		}
	}
	if best < 0 {
		return 0, 0, fmt.Errorf("fixed: %d lanes cannot be split into clause lanes <= %d and literal lanes <= %d", l, sh.TotalClauses(), sh.Literals())
	}
	return lc, ll, nil
}

// LaneWords returns, for every lane, its bank contents: D thresholds in
// address order, 0 for padding slots (docs/fixed-point.md 4).
func (b *Bank) LaneWords(h HW) [][]uint32 {
	lay := h.LayoutOf(b.Shape)
	nl := b.Literals()
	words := make([][]uint32, h.Lanes())
	for l := range words {
		words[l] = make([]uint32, lay.Depth)
		ci, li := l/h.LiteralLanes, l%h.LiteralLanes
		for g := 0; g < lay.Groups; g++ {
			c := g*h.ClauseLanes + ci
			if c >= b.TotalClauses() {
				continue
			}
			for bt := 0; bt < lay.Beats; bt++ {
				i := bt*h.LiteralLanes + li
				if i < nl {
					words[l][g*lay.Beats+bt] = b.Thresh[c*nl+i]
				}
			}
		}
	}
	return words
}

// VoteUnit returns U = lcm(1..nc), the vote units one sample distributes.
func VoteUnit(nc int) uint64 {
	u := uint64(1)
	for k := uint64(2); k <= uint64(nc); k++ {
		a, b := u, k
		for b != 0 {
			a, b = b, a%b
		}
		u = u / a * k
	}
	return u
}

// Stats is the accumulated result of a request (docs/fixed-point.md 6).
type Stats struct {
	Votes []uint64 `json:"votes"` // per class, in units of 1/VoteUnit(NC)
	Sum   []int64  `json:"sum"`   // per TM, of clipped class sums
	SumSq []uint64 `json:"sumsq"` // per TM, of squared clipped class sums
}

// Core is the bit-exact model of the inference core.
type Core struct {
	bank   *Bank
	hw     HW
	lay    Layout
	words  [][]uint32
	lfsrs  []*lfsr.LFSR
	max    uint32
	unit   uint64
	lit    []bool
	ok     []bool
	any    []bool
	scores []int
}

// NewCore builds the core model for a bank on hardware h.
func NewCore(b *Bank, h HW) (*Core, error) {
	if err := b.Shape.Validate(); err != nil {
		return nil, err
	}
	if h.Bits != b.Bits {
		return nil, fmt.Errorf("fixed: hardware has %d-bit probabilities, bank has %d", h.Bits, b.Bits)
	}
	if err := h.Check(b.Shape); err != nil {
		return nil, err
	}
	c := &Core{
		bank: b, hw: h, lay: h.LayoutOf(b.Shape), words: b.LaneWords(h),
		max: uint32(1)<<uint(h.Bits) - 1, unit: VoteUnit(b.Classes),
		lit: make([]bool, b.Literals()), ok: make([]bool, h.ClauseLanes), any: make([]bool, h.ClauseLanes),
		scores: make([]int, b.Classes),
	}
	for l := 0; l < h.Lanes(); l++ {
		g, err := lfsr.New(h.LFSRWidth, h.Bits, 1)
		if err != nil {
			return nil, err
		}
		c.lfsrs = append(c.lfsrs, g)
	}
	return c, nil
}

// Layout returns the core's schedule.
func (c *Core) Layout() Layout { return c.lay }

// HW returns the core's hardware parameters.
func (c *Core) HW() HW { return c.hw }

// Bank returns the core's bank.
func (c *Core) Bank() *Bank { return c.bank }

// Run executes one request: features x (o bits), K samples, seed q. It
// returns every sample's raw class sums (K*NT, sample-major) in sums (grown
// as needed) and the accumulated statistics.
func (c *Core) Run(x []bool, K int, q uint32, sums []int32) ([]int32, Stats, error) {
	b := c.bank
	if len(x) != b.Features {
		return nil, Stats{}, fmt.Errorf("fixed: input has %d features, model has %d", len(x), b.Features)
	}
	if K < 1 {
		return nil, Stats{}, fmt.Errorf("fixed: K = %d, want >= 1", K)
	}
	o, nl, nt, nc := b.Features, b.Literals(), b.TMs, b.Classes
	for i, v := range x {
		c.lit[i] = v
		c.lit[o+i] = !v
	}
	for l, g := range c.lfsrs {
		_ = g.Seed(lfsr.LaneSeed(q, l, c.hw.LFSRWidth))
	}
	if cap(sums) < K*nt {
		sums = make([]int32, K*nt)
	}
	sums = sums[:K*nt]
	st := Stats{Votes: make([]uint64, nc), Sum: make([]int64, nt), SumSq: make([]uint64, nt)}
	LC, LL := c.hw.ClauseLanes, c.hw.LiteralLanes
	totalClauses := b.TotalClauses()
	for k := 0; k < K; k++ {
		v := sums[k*nt : (k+1)*nt]
		for t := range v {
			v[t] = 0
		}
		for g := 0; g < c.lay.Groups; g++ {
			for ci := 0; ci < LC; ci++ {
				c.ok[ci], c.any[ci] = true, false
			}
			for bt := 0; bt < c.lay.Beats; bt++ {
				addr := g*c.lay.Beats + bt
				for ci := 0; ci < LC; ci++ {
					for li := 0; li < LL; li++ {
						l := ci*LL + li
						r := uint32(c.lfsrs[l].Next())
						i := bt*LL + li
						if i >= nl {
							continue
						}
						th := c.words[l][addr]
						if th == c.max || r < th {
							c.any[ci] = true
							if !c.lit[i] {
								c.ok[ci] = false
							}
						}
					}
				}
			}
			for ci := 0; ci < LC; ci++ {
				cl := g*LC + ci
				if cl >= totalClauses || !c.ok[ci] || !c.any[ci] {
					continue
				}
				t, j := cl/b.Clauses, cl%b.Clauses
				if j%2 == 0 {
					v[t]++
				} else {
					v[t]--
				}
			}
		}
		c.accumulate(v, &st)
	}
	return sums, st, nil
}

// accumulate adds one sample's class sums to the statistics.
func (c *Core) accumulate(v []int32, st *Stats) {
	b := c.bank
	T := int32(b.T)
	for t, s := range v {
		u := s
		if u > T {
			u = T
		} else if u < -T {
			u = -T
		}
		st.Sum[t] += int64(u)
		st.SumSq[t] += uint64(int64(u) * int64(u))
		if b.Binary {
			c.scores[0], c.scores[1] = int(-u), int(u)
		} else {
			c.scores[t] = int(u)
		}
	}
	max := c.scores[0]
	for _, s := range c.scores {
		if s > max {
			max = s
		}
	}
	n := uint64(0)
	for _, s := range c.scores {
		if s == max {
			n++
		}
	}
	for cl, s := range c.scores {
		if s == max {
			st.Votes[cl] += c.unit / n
		}
	}
}
