package ptm

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Sampler draws inference samples from a model (the inference phase of the
// paper: every query samples every TA's state again). It owns a PCG random
// stream, so a Sampler with the same seed reproduces its samples exactly.
type Sampler struct {
	m       *Model
	rng     *rand.Rand
	lit     []bool
	pClause []float64
}

// NewSampler returns a sampler over m seeded with seed.
func NewSampler(m *Model, seed uint64) *Sampler {
	return &Sampler{
		m:       m,
		rng:     rand.New(rand.NewPCG(seed, 0x5054_4d5f_696e_6621)), // "PTM_inf!"
		lit:     make([]bool, m.NumLiterals()),
		pClause: make([]float64, m.NumTMs()*m.Clauses),
	}
}

func (s *Sampler) literals(x []bool) error {
	o := s.m.NumFeatures
	if len(x) != o {
		return fmt.Errorf("ptm: input has %d features, model has %d", len(x), o)
	}
	for i, v := range x {
		s.lit[i] = v
		s.lit[o+i] = !v
	}
	return nil
}

// ClauseProbs returns, for input x, the probability that each clause
// (flat index t*m + j) outputs 1 at inference: no included literal is 0 and
// at least one literal is included, TAs being independent:
//
//	P(c=1) = prod_{i: lit_i=0} (1 - p_i) * (1 - prod_{i: lit_i=1} (1 - p_i)).
func (s *Sampler) ClauseProbs(x []bool) ([]float64, error) {
	if err := s.literals(x); err != nil {
		return nil, err
	}
	m := s.m
	nl := m.NumLiterals()
	for c := range s.pClause {
		base := c * nl
		pass, none := 1.0, 1.0
		for i := 0; i < nl; i++ {
			q := 1 - m.pinc[base+i]
			if s.lit[i] {
				none *= q
			} else {
				pass *= q
			}
		}
		s.pClause[c] = pass * (1 - none)
	}
	return s.pClause, nil
}

// Sample draws K inference samples for x and writes every sample's raw class
// sums to dst (K*NT values, sample-major; dst is grown if needed). Clause
// outputs are drawn from their exact probabilities (ClauseProbs), which has
// the same distribution as sampling every TA (SampleTA) because TAs and
// hence clauses are independent given x, at a fraction of the cost.
func (s *Sampler) Sample(x []bool, K int, dst []int) ([]int, error) {
	if K < 1 {
		return nil, fmt.Errorf("ptm: K = %d, want >= 1", K)
	}
	pc, err := s.ClauseProbs(x)
	if err != nil {
		return nil, err
	}
	m := s.m
	nt := m.NumTMs()
	dst = grow(dst, K*nt)
	for k := 0; k < K; k++ {
		for t := 0; t < nt; t++ {
			v := 0
			for j := 0; j < m.Clauses; j++ {
				if s.rng.Float64() < pc[t*m.Clauses+j] {
					if j%2 == 0 {
						v++
					} else {
						v--
					}
				}
			}
			dst[k*nt+t] = v
		}
	}
	return dst, nil
}

// SampleTA is Algorithm 2 at inference, literally: for each of K samples it
// draws every TA's action from its include probability and evaluates every
// clause (an empty clause outputs 0). It is slower than Sample and exists to
// check it.
func (s *Sampler) SampleTA(x []bool, K int, dst []int) ([]int, error) {
	if K < 1 {
		return nil, fmt.Errorf("ptm: K = %d, want >= 1", K)
	}
	if err := s.literals(x); err != nil {
		return nil, err
	}
	m := s.m
	nt, nl := m.NumTMs(), m.NumLiterals()
	dst = grow(dst, K*nt)
	for k := 0; k < K; k++ {
		for t := 0; t < nt; t++ {
			v := 0
			for j := 0; j < m.Clauses; j++ {
				base := m.TAIndex(t, j, 0)
				ok, any := true, false
				for i := 0; i < nl; i++ {
					if s.rng.Float64() < m.pinc[base+i] {
						any = true
						if !s.lit[i] {
							ok = false
						}
					}
				}
				if ok && any {
					if j%2 == 0 {
						v++
					} else {
						v--
					}
				}
			}
			dst[k*nt+t] = v
		}
	}
	return dst, nil
}

func grow(dst []int, n int) []int {
	if cap(dst) < n {
		return make([]int, n)
	}
	return dst[:n]
}

// Scores turns one sample's raw class sums (NT values) into NC class scores:
// the class sums clipped to [-T, T]; a binary model's single sum u becomes
// the scores (-u, u) of classes 0 and 1.
func (m *Model) Scores(sums []int, dst []float64) []float64 {
	T := m.T
	clip := func(v int) float64 {
		if v > T {
			v = T
		} else if v < -T {
			v = -T
		}
		return float64(v)
	}
	if cap(dst) < m.NumClasses {
		dst = make([]float64, m.NumClasses)
	}
	dst = dst[:m.NumClasses]
	if m.Binary {
		u := clip(sums[0])
		dst[0], dst[1] = -u, u
		return dst
	}
	for c := range dst {
		dst[c] = clip(sums[c])
	}
	return dst
}

// MappingKind selects how one sample's class scores become p_j(Y|X).
type MappingKind string

// The supported mappings.
const (
	// Vote is one-hot on the highest score, ties split equally, mixed with
	// the uniform distribution by the mapping's Smoothing e:
	// p_j = (1-e) * vote_j + e/NC. The predictive mean is then
	// (1-e) * (fraction of samples voting for each class) + e/NC, which the
	// host derives exactly from the vote counts the hardware accumulates.
	Vote MappingKind = "vote"
	// Softmax is exp(score/tau) normalized, with temperature tau in units of
	// the clipped class sum.
	Softmax MappingKind = "softmax"
)

// Mapping is a per-sample probability map with its parameter: the
// temperature for Softmax, the smoothing for Vote.
type Mapping struct {
	Kind        MappingKind `json:"kind"`
	Temperature float64     `json:"temperature,omitempty"`
	Smoothing   float64     `json:"smoothing,omitempty"`
}

// Validate checks the mapping.
func (mp Mapping) Validate() error {
	switch mp.Kind {
	case Vote:
		if !(mp.Smoothing >= 0 && mp.Smoothing < 1) {
			return fmt.Errorf("ptm: vote smoothing %v, want 0 <= e < 1", mp.Smoothing)
		}
		return nil
	case Softmax:
		if !(mp.Temperature > 0) || math.IsInf(mp.Temperature, 0) {
			return fmt.Errorf("ptm: softmax temperature %v, want > 0", mp.Temperature)
		}
		return nil
	}
	return fmt.Errorf("ptm: unknown probability mapping %q (want vote or softmax)", mp.Kind)
}

// Prob writes p_j(Y|X) for one sample's scores into dst (len(scores)).
func (mp Mapping) Prob(scores, dst []float64) []float64 {
	if cap(dst) < len(scores) {
		dst = make([]float64, len(scores))
	}
	dst = dst[:len(scores)]
	max := math.Inf(-1)
	for _, v := range scores {
		if v > max {
			max = v
		}
	}
	switch mp.Kind {
	case Softmax:
		var z float64
		for c, v := range scores {
			dst[c] = math.Exp((v - max) / mp.Temperature)
			z += dst[c]
		}
		for c := range dst {
			dst[c] /= z
		}
	default:
		n := 0
		for _, v := range scores {
			if v == max {
				n++
			}
		}
		e := mp.Smoothing
		u := e / float64(len(scores))
		for c, v := range scores {
			if v == max {
				dst[c] = (1-e)/float64(n) + u
			} else {
				dst[c] = u
			}
		}
	}
	return dst
}

// SampleProbs draws K samples for x and maps each to a probability vector
// (K x NC), ready for package metrics.
func (s *Sampler) SampleProbs(x []bool, K int, mp Mapping) ([][]float64, error) {
	sums, err := s.Sample(x, K, nil)
	if err != nil {
		return nil, err
	}
	return s.m.SumsToProbs(sums, K, mp), nil
}

// SumsToProbs maps K samples of raw class sums (K*NT, sample-major) to K
// probability vectors.
func (m *Model) SumsToProbs(sums []int, K int, mp Mapping) [][]float64 {
	nt := m.NumTMs()
	out := make([][]float64, K)
	flat := make([]float64, K*m.NumClasses)
	var sc []float64
	for k := 0; k < K; k++ {
		sc = m.Scores(sums[k*nt:(k+1)*nt], sc)
		out[k] = mp.Prob(sc, flat[k*m.NumClasses:(k+1)*m.NumClasses])
	}
	return out
}

// SampleSets draws K samples for a query encoded by M input sets (xs[m] is
// the encoding under set m, see package booleanize's Sets): the first
// K/M (+1 when m < K mod M) samples use set 0, the next ones set 1, and so
// on, each drawn as Sample does. With one set it is Sample.
func (s *Sampler) SampleSets(xs [][]bool, K int, dst []int) ([]int, error) {
	if K < 1 {
		return nil, fmt.Errorf("ptm: K = %d, want >= 1", K)
	}
	M := len(xs)
	if M == 0 {
		return nil, fmt.Errorf("ptm: no input sets")
	}
	nt := s.m.NumTMs()
	dst = grow(dst, K*nt)
	off := 0
	var buf []int
	for m, x := range xs {
		k := K / M
		if m < K%M {
			k++
		}
		if k == 0 {
			continue
		}
		var err error
		if buf, err = s.Sample(x, k, buf); err != nil {
			return nil, fmt.Errorf("set %d: %w", m, err)
		}
		copy(dst[off:], buf[:k*nt])
		off += k * nt
	}
	return dst, nil
}
