package ptm

import (
	"errors"
	"fmt"
	"math"
)

// Params are the PTM hyper-parameters.
type Params struct {
	// Clauses is m, the number of clauses per TM (half vote for, half
	// against, the even 0-based ones being positive).
	Clauses int `json:"clauses"`
	// T is the target: class sums are clipped to [-T, T] and clauses are
	// selected for feedback with probability (T -/+ clip(v)) / 2T.
	T int `json:"t"`
	// S is the specificity s >= 1.
	S float64 `json:"s"`
	// N is the number of states per action; an SPV has 2N entries.
	N int `json:"n"`
	// Epochs is the number of passes over the training data.
	Epochs int `json:"epochs"`
	// Seed drives every random choice of training.
	Seed uint64 `json:"seed"`
	// Feedback is the SPV update rule (PaperFeedback or ConsistentFeedback).
	Feedback Feedback `json:"feedback"`
}

// DefaultParams returns the defaults used by `ptm train` when a flag is not
// given.
func DefaultParams() Params {
	return Params{Clauses: 20, T: 10, S: 2, N: 100, Epochs: 100, Seed: 1, Feedback: ConsistentFeedback}
}

// Validate reports the first invalid hyper-parameter.
func (p Params) Validate() error {
	switch {
	case p.Clauses < 1:
		return fmt.Errorf("ptm: clauses = %d, want >= 1", p.Clauses)
	case p.T < 1:
		return fmt.Errorf("ptm: T = %d, want >= 1", p.T)
	case !(p.S >= 1) || math.IsInf(p.S, 0):
		return fmt.Errorf("ptm: s = %v, want a finite value >= 1", p.S)
	case p.N < 1 || p.N > 1<<15:
		return fmt.Errorf("ptm: N = %d, want 1..32768", p.N)
	case p.Epochs < 0:
		return fmt.Errorf("ptm: epochs = %d, want >= 0", p.Epochs)
	case p.Feedback != PaperFeedback && p.Feedback != ConsistentFeedback:
		return fmt.Errorf("ptm: feedback rule %q, want %q or %q", p.Feedback, PaperFeedback, ConsistentFeedback)
	}
	return nil
}

// Model is a PTM: the SPVs of every TA of every TM.
type Model struct {
	Params
	// Binary is true for a single-TM two-class model.
	Binary bool `json:"binary"`
	// NumClasses is NC (2 for a binary model).
	NumClasses int `json:"classes"`
	// NumFeatures is o, the number of Boolean features; a clause has 2o
	// literals.
	NumFeatures int `json:"features"`
	// SPV holds all state probability vectors, TA (t, j, i) at offset
	// ((t*m + j)*2o + i) * 2N.
	SPV []float64 `json:"-"`

	pinc   []float64 // include mass per TA, kept in step with SPV
	lo, hi []int32   // support of each SPV: states outside lo..hi hold exactly 0
}

// Tiny is the mass below which the edge states of an SPV's support are set
// to exactly zero during training. It is far below the float64 resolution of
// the SPV's total mass (2^-53), so it does not change any include
// probability beyond rounding, but it keeps updates O(support) instead of
// O(2N) and lets converged automata reach exactly 0 or 1.
const Tiny = 0x1p-60

// Errors returned for bad shapes.
var (
	ErrShape = errors.New("ptm: bad model shape")
)

// New returns an untrained model: every SPV has p(S_N) = p(S_{N+1}) = 0.5
// (0-based states N-1 and N).
func New(p Params, numClasses, numFeatures int, binary bool) (*Model, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if binary && numClasses != 2 {
		return nil, fmt.Errorf("%w: binary model with %d classes", ErrShape, numClasses)
	}
	if numClasses < 2 {
		return nil, fmt.Errorf("%w: %d classes, want >= 2", ErrShape, numClasses)
	}
	if numFeatures < 1 {
		return nil, fmt.Errorf("%w: %d features, want >= 1", ErrShape, numFeatures)
	}
	m := &Model{Params: p, Binary: binary, NumClasses: numClasses, NumFeatures: numFeatures}
	m.SPV = make([]float64, m.NumTAs()*2*p.N)
	n2 := 2 * p.N
	for ta := 0; ta < m.NumTAs(); ta++ {
		m.SPV[ta*n2+p.N-1] = 0.5
		m.SPV[ta*n2+p.N] = 0.5
	}
	m.RefreshInclude()
	return m, nil
}

// NumTMs is NT: 1 for a binary model, else the number of classes.
func (m *Model) NumTMs() int {
	if m.Binary {
		return 1
	}
	return m.NumClasses
}

// NumLiterals is 2o.
func (m *Model) NumLiterals() int { return 2 * m.NumFeatures }

// NumTAs is NT * m * 2o.
func (m *Model) NumTAs() int { return m.NumTMs() * m.Clauses * m.NumLiterals() }

// TAIndex returns the flat index of TA (tm, clause, literal).
func (m *Model) TAIndex(tm, clause, literal int) int {
	return (tm*m.Clauses+clause)*m.NumLiterals() + literal
}

// TASPV returns the SPV of TA (tm, clause, literal) (a view, not a copy).
func (m *Model) TASPV(tm, clause, literal int) []float64 {
	n2 := 2 * m.N
	o := m.TAIndex(tm, clause, literal) * n2
	return m.SPV[o : o+n2 : o+n2]
}

// Include returns P(include) of TA (tm, clause, literal): the mass of its
// include states.
func (m *Model) Include(tm, clause, literal int) float64 {
	return m.pinc[m.TAIndex(tm, clause, literal)]
}

// IncludeAll returns P(include) of every TA in flat order.
func (m *Model) IncludeAll() []float64 { return m.pinc }

// RefreshInclude recomputes the include masses from the SPVs; call it after
// changing SPV directly (for example after loading a model file).
func (m *Model) RefreshInclude() {
	n2 := 2 * m.N
	if len(m.pinc) != m.NumTAs() {
		m.pinc = make([]float64, m.NumTAs())
		m.lo = make([]int32, m.NumTAs())
		m.hi = make([]int32, m.NumTAs())
	}
	for ta := range m.pinc {
		p := m.SPV[ta*n2 : (ta+1)*n2]
		var s float64
		for _, v := range p[m.N:] {
			s += v
		}
		m.pinc[ta] = s
		lo, hi := 0, n2-1
		for lo < hi && p[lo] == 0 {
			lo++
		}
		for hi > lo && p[hi] == 0 {
			hi--
		}
		m.lo[ta], m.hi[ta] = int32(lo), int32(hi)
	}
}

// Check verifies that the model is internally consistent: shape, SPV length,
// and every SPV a probability vector (non-negative, finite, summing to 1
// within 1e-6).
func (m *Model) Check() error {
	if err := m.Params.Validate(); err != nil {
		return err
	}
	if m.NumClasses < 2 || (m.Binary && m.NumClasses != 2) || m.NumFeatures < 1 {
		return fmt.Errorf("%w: classes=%d binary=%v features=%d", ErrShape, m.NumClasses, m.Binary, m.NumFeatures)
	}
	n2 := 2 * m.N
	if len(m.SPV) != m.NumTAs()*n2 {
		return fmt.Errorf("%w: %d SPV values, want %d", ErrShape, len(m.SPV), m.NumTAs()*n2)
	}
	for ta := 0; ta < m.NumTAs(); ta++ {
		var s float64
		for n, v := range m.SPV[ta*n2 : (ta+1)*n2] {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("ptm: TA %d state %d probability %v is not a finite non-negative number", ta, n, v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-6 {
			return fmt.Errorf("ptm: TA %d SPV sums to %v, want 1", ta, s)
		}
	}
	return nil
}

// apply multiplies the SPVs of the TAs base+i, i in lits, by TPM k (with
// the moves mv of m.S) over their supports, then trims edge states holding
// less than Tiny. base is the first TA of a clause, and lits are literals.
func (m *Model) apply(base int, lits []int, k TPM, mv moves) {
	n, n2 := m.N, 2*m.N
	end := base + m.NumLiterals()
	spv := m.SPV[base*n2 : end*n2]
	pinc, lo, hi := m.pinc[base:end], m.lo[base:end], m.hi[base:end]
	for _, i := range lits {
		p := spv[i*n2 : (i+1)*n2 : (i+1)*n2]
		d, a, b := update(k, p, mv, int(lo[i]), int(hi[i]))
		for a < b && p[a] < Tiny {
			if a >= n {
				d -= p[a]
			}
			p[a] = 0
			a++
		}
		for b > a && p[b] < Tiny {
			if b >= n {
				d -= p[b]
			}
			p[b] = 0
			b--
		}
		pinc[i] += d
		lo[i], hi[i] = int32(a), int32(b)
	}
}
