package ptm

import (
	"fmt"
	"math/rand/v2"
)

// Trainer runs Algorithm 1 of the paper on a model. Its random stream is a
// PCG seeded from Params.Seed, so training is reproducible bit for bit.
type Trainer struct {
	m      *Model
	rng    *rand.Rand
	lit    []bool
	out    []bool
	order  []int
	Epoch  int // epochs completed
	sample int
}

// NewTrainer prepares training of m with the random stream of m.Seed.
func NewTrainer(m *Model) *Trainer {
	return &Trainer{
		m:   m,
		rng: rand.New(rand.NewPCG(m.Seed, 0x5054_4d5f_7472_6e21)), // "PTM_trn!"
		lit: make([]bool, m.NumLiterals()),
		out: make([]bool, m.Clauses),
	}
}

// CheckData verifies that X and y fit the model.
func (m *Model) CheckData(X [][]bool, y []int) error {
	if len(X) != len(y) {
		return fmt.Errorf("ptm: %d inputs but %d labels", len(X), len(y))
	}
	for r, x := range X {
		if len(x) != m.NumFeatures {
			return fmt.Errorf("ptm: row %d has %d features, model has %d", r, len(x), m.NumFeatures)
		}
		if y != nil && (y[r] < 0 || y[r] >= m.NumClasses) {
			return fmt.Errorf("ptm: row %d label %d outside 0..%d", r, y[r], m.NumClasses-1)
		}
	}
	return nil
}

// RunEpoch runs one pass over the data in a freshly shuffled order.
func (tr *Trainer) RunEpoch(X [][]bool, y []int) error {
	if err := tr.m.CheckData(X, y); err != nil {
		return err
	}
	if len(tr.order) != len(X) {
		tr.order = make([]int, len(X))
	}
	for i := range tr.order {
		tr.order[i] = i
	}
	tr.rng.Shuffle(len(tr.order), func(i, j int) { tr.order[i], tr.order[j] = tr.order[j], tr.order[i] })
	for _, r := range tr.order {
		tr.Update(X[r], y[r])
	}
	tr.Epoch++
	return nil
}

// Update trains on one example (Algorithm 1). For a binary model the single
// TM learns y directly; for a multiclass model the TM of class y is updated
// as a positive example and one other class, chosen uniformly, as a
// negative one.
func (tr *Trainer) Update(x []bool, y int) {
	m := tr.m
	o := m.NumFeatures
	for i, v := range x {
		tr.lit[i] = v
		tr.lit[o+i] = !v
	}
	if m.Binary {
		tr.updateTM(0, y == 1)
		return
	}
	tr.updateTM(y, true)
	other := tr.rng.IntN(m.NumClasses - 1)
	if other >= y {
		other++
	}
	tr.updateTM(other, false)
}

// updateTM applies Algorithms 2-4 to TM t with target positive (y=1) or
// negative (y=0).
func (tr *Trainer) updateTM(t int, positive bool) {
	m := tr.m
	nl := m.NumLiterals()
	// Algorithm 2: sample the TA actions and compute clause outputs. Only an
	// included literal of value 0 can falsify a clause, and an empty clause
	// outputs 1 while training, so the actions of literals of value 1 do not
	// change the output and are not drawn.
	v := 0
	for j := 0; j < m.Clauses; j++ {
		base := m.TAIndex(t, j, 0)
		out := true
		for i := 0; i < nl; i++ {
			if !tr.lit[i] && tr.rng.Float64() < m.pinc[base+i] {
				out = false
				break
			}
		}
		tr.out[j] = out
		if out {
			if j%2 == 0 {
				v++
			} else {
				v--
			}
		}
	}
	T := m.T
	if v > T {
		v = T
	} else if v < -T {
		v = -T
	}
	var prob float64
	if positive {
		prob = float64(T-v) / float64(2*T)
	} else {
		prob = float64(T+v) / float64(2*T)
	}
	for j := 0; j < m.Clauses; j++ {
		if tr.rng.Float64() >= prob {
			continue
		}
		// Type I when the clause's polarity agrees with the target.
		if (j%2 == 0) == positive {
			tr.typeI(t, j)
		} else {
			tr.typeII(t, j)
		}
	}
}

// typeI is Algorithm 3.
func (tr *Trainer) typeI(t, j int) {
	m := tr.m
	n2 := 2 * m.N
	base := m.TAIndex(t, j, 0)
	for i := 0; i < m.NumLiterals(); i++ {
		k := TPM3
		if tr.out[j] {
			if tr.lit[i] {
				k = TPM1
			} else {
				k = TPM2
			}
		}
		ta := base + i
		m.pinc[ta] += ApplyTPM(k, m.SPV[ta*n2:(ta+1)*n2], m.S)
	}
}

// typeII is Algorithm 4: only a clause that output 1 changes, and only the
// TAs of its literals of value 0.
func (tr *Trainer) typeII(t, j int) {
	m := tr.m
	if !tr.out[j] {
		return
	}
	n2 := 2 * m.N
	base := m.TAIndex(t, j, 0)
	for i := 0; i < m.NumLiterals(); i++ {
		if !tr.lit[i] {
			ta := base + i
			m.pinc[ta] += ApplyTPM(TPM4, m.SPV[ta*n2:(ta+1)*n2], m.S)
		}
	}
}
