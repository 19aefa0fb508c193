package conv

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Sampler draws inference samples from a float model. In one sample every
// TA's action is drawn once from its include probability and held for all
// patches; a clause outputs 1 when at least one literal is included and it
// fires on at least one patch; class k's raw sum is sum_c w[k][c] out_c.
// TAs whose probability is exactly 0 or 1 need no draw. A Sampler with the
// same seed reproduces its samples exactly; it is not safe for concurrent
// use.
type Sampler struct {
	m   *Model
	rng *rand.Rand
	det []uint64  // per clause: the words of the always-included literals
	idx [][]int32 // per clause: the literals with 0 < p < 1
	p   [][]float64
	inc []uint64
	out []bool
}

// NewSampler returns a sampler over m seeded with seed.
func NewSampler(m *Model, seed uint64) (*Sampler, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	nw, nl := m.Shape.Words(), m.Shape.Literals()
	s := &Sampler{m: m, rng: rand.New(rand.NewPCG(seed, 0x636f_6e76_5f69_6e66)), // "conv_inf"
		det: make([]uint64, m.Clauses*nw), idx: make([][]int32, m.Clauses), p: make([][]float64, m.Clauses),
		inc: make([]uint64, nw), out: make([]bool, m.Clauses)}
	for c := 0; c < m.Clauses; c++ {
		for i := 0; i < nl; i++ {
			switch p := m.Include[c*nl+i]; {
			case p == 1:
				s.det[c*nw+i/64] |= 1 << uint(i%64)
			case p > 0:
				s.idx[c] = append(s.idx[c], int32(i))
				s.p[c] = append(s.p[c], p)
			}
		}
	}
	return s, nil
}

// Run draws K samples for one image's patches and returns every sample's
// raw class sums (K*Classes, sample-major) in sums (grown as needed).
func (s *Sampler) Run(pt *Patches, K int, sums []int32) ([]int32, error) {
	m := s.m
	if pt.Shape != m.Shape {
		return nil, fmt.Errorf("conv: patches of shape %+v, model has %+v", pt.Shape, m.Shape)
	}
	if K < 1 {
		return nil, fmt.Errorf("conv: K = %d, want >= 1", K)
	}
	nw, nc, C := m.Shape.Words(), m.Classes, m.Clauses
	sums = grow(sums, K*nc)
	for k := 0; k < K; k++ {
		for c := 0; c < C; c++ {
			copy(s.inc, s.det[c*nw:(c+1)*nw])
			for j, i := range s.idx[c] {
				if s.rng.Float64() < s.p[c][j] {
					s.inc[i/64] |= 1 << uint(i%64)
				}
			}
			s.out[c] = popcount(s.inc) > 0 && pt.FiresAnywhere(s.inc)
		}
		m.classSums(s.out, sums[k*nc:(k+1)*nc])
	}
	return sums, nil
}

// RunSets draws K samples of one image encoded by M threshold sets (pts[j]
// the patches under set j): set j draws SetSamples(K, M, j) samples, the
// sets in order. With one set it is Run.
func (s *Sampler) RunSets(pts []*Patches, K int, sums []int32) ([]int32, error) {
	if len(pts) < 1 {
		return nil, fmt.Errorf("conv: no threshold sets")
	}
	if K < 1 {
		return nil, fmt.Errorf("conv: K = %d, want >= 1", K)
	}
	nc := s.m.Classes
	sums = grow(sums, K*nc)
	off := 0
	for j, pt := range pts {
		kj := SetSamples(K, len(pts), j)
		if kj == 0 {
			continue
		}
		if _, err := s.Run(pt, kj, sums[off*nc:(off+kj)*nc]); err != nil {
			return nil, fmt.Errorf("set %d: %w", j, err)
		}
		off += kj
	}
	return sums, nil
}

// classSums writes sum_c w[k][c] out_c for every class k into v.
func (h *Head) classSums(out []bool, v []int32) {
	C := h.Clauses
	for k := range v {
		w := h.Weights[k*C : (k+1)*C]
		var t int32
		for c, o := range out {
			if o {
				t += w[c]
			}
		}
		v[k] = t
	}
}

func grow(dst []int32, n int) []int32 {
	if cap(dst) < n {
		return make([]int32, n)
	}
	return dst[:n]
}

// Probs maps K samples of raw class sums (K*Classes) to K probability
// vectors: clipped to [-T, T], then mp (ptm.Mapping: vote or softmax).
func (h *Head) Probs(sums []int32, K int, mp ptm.Mapping) [][]float64 {
	nc := h.Classes
	out := make([][]float64, K)
	flat := make([]float64, K*nc)
	sc := make([]float64, nc)
	T := int32(h.T)
	for k := 0; k < K; k++ {
		for c := range sc {
			sc[c] = float64(clip(sums[k*nc+c], T))
		}
		out[k] = mp.Prob(sc, flat[k*nc:(k+1)*nc])
	}
	return out
}

// Stats accumulates K samples of raw class sums into the statistics the
// hardware returns (fixed.Stats, docs/fixed-point.md 6): per class the
// vote units (ties split exactly, U = fixed.VoteUnit(Classes) per
// sample), the sum and the sum of squares of the clipped class sums.
func (h *Head) Stats(sums []int32, K int) fixed.Stats {
	nc := h.Classes
	st := fixed.Stats{Votes: make([]uint64, nc), Sum: make([]int64, nc), SumSq: make([]uint64, nc)}
	u := fixed.VoteUnit(nc)
	T := int32(h.T)
	for k := 0; k < K; k++ {
		v := sums[k*nc : (k+1)*nc]
		best := clip(v[0], T)
		for c, x := range v {
			x = clip(x, T)
			st.Sum[c] += int64(x)
			st.SumSq[c] += uint64(int64(x) * int64(x))
			best = max(best, x)
		}
		n := uint64(0)
		for _, x := range v {
			if clip(x, T) == best {
				n++
			}
		}
		for c, x := range v {
			if clip(x, T) == best {
				st.Votes[c] += u / n
			}
		}
	}
	return st
}
