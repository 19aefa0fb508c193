package ptm

import (
	"fmt"
	"math/rand/v2"
)

// Feedback selects how a TA's SPV is updated when its clause receives
// feedback.
type Feedback string

const (
	// PaperFeedback is Algorithms 3 and 4 exactly as printed: Type I
	// multiplies the SPV of a literal of value 0 by TPM2 when the sampled
	// clause output is 1 (include states unchanged) and by TPM3 when it is 0;
	// Type II multiplies by TPM4 only when the sampled clause output is 1.
	PaperFeedback Feedback = "paper"
	// ConsistentFeedback gives every state of a TA the feedback that TA would
	// receive if it were in that state, the other TAs of the clause keeping
	// their sampled actions. This is the feedback table read state by state:
	// an include state of a literal of value 0 makes the clause output 0, so
	// under Type I it always gets the clause-0 column (TPM3), and under Type
	// II its exclude states move up (TPM4) whenever the other TAs leave the
	// clause firing. It differs from PaperFeedback only for literals of
	// value 0, where the paper's TPM2 leaves the include mass untouched (the
	// table's "NA" cells). With label noise and irrelevant features,
	// PaperFeedback lets irrelevant literals keep their include mass and
	// fails to learn the classic noisy XOR (about 0.5 accuracy), while
	// ConsistentFeedback learns it like a standard TM (see docs/ptm-rule.md).
	ConsistentFeedback Feedback = "consistent"
)

// Trainer runs Algorithm 1 of the paper on a model. Its random stream is a
// PCG seeded from Params.Seed, so training is reproducible bit for bit.
type Trainer struct {
	m     *Model
	src   pcg        // the random stream, drawn from directly in the inner loops
	rng   *rand.Rand // src as a rand.Source, for shuffling and class choice
	lit1  []int      // the literals of value 1 of the current example, in increasing order
	lit0  []int      // its literals of value 0, in increasing order
	zeros []int      // included literals of value 0 sampled per clause: 0, 1 or 2 (2 = two or more)
	who   []int      // the single included literal of value 0 when zeros == 1
	order []int
	// Epochs counts the epochs completed.
	Epochs int
	// Progress, if set, is called within RunEpoch every ProgressRows rows
	// and after the last one, with the rows done and the rows of the epoch.
	Progress func(done, total int)
}

// ProgressRows is how many rows pass between two Trainer.Progress calls.
const ProgressRows = 256

// NewTrainer prepares training of m with the random stream of m.Seed.
func NewTrainer(m *Model) *Trainer {
	tr := &Trainer{
		m:     m,
		src:   pcg{hi: m.Seed, lo: 0x5054_4d5f_7472_6e21}, // rand.NewPCG(m.Seed, "PTM_trn!")
		lit1:  make([]int, 0, m.NumFeatures),
		lit0:  make([]int, 0, m.NumFeatures),
		zeros: make([]int, m.Clauses),
		who:   make([]int, m.Clauses),
	}
	tr.rng = rand.New(&tr.src)
	return tr
}

// CheckData verifies that X and y fit the model (y may be nil).
func (m *Model) CheckData(X [][]bool, y []int) error {
	if y != nil && len(X) != len(y) {
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
	for k, r := range tr.order {
		tr.Update(X[r], y[r])
		if tr.Progress != nil && ((k+1)%ProgressRows == 0 || k+1 == len(tr.order)) {
			tr.Progress(k+1, len(tr.order))
		}
	}
	// Re-derive the include masses from the SPVs so that rounding in their
	// incremental updates never accumulates past an epoch, and a model read
	// back from a file behaves exactly like the one that was saved.
	tr.m.RefreshInclude()
	tr.Epochs++
	return nil
}

// Update trains on one example (Algorithm 1). For a binary model the single
// TM learns y directly; for a multiclass model the TM of class y is updated
// as a positive example and one other class, chosen uniformly, as a
// negative one. x must have NumFeatures values and y be a valid class.
func (tr *Trainer) Update(x []bool, y int) {
	m := tr.m
	o := m.NumFeatures
	tr.lit1, tr.lit0 = tr.lit1[:0], tr.lit0[:0]
	for i, v := range x { // literal i is x[i], literal o+i its negation
		if v {
			tr.lit1 = append(tr.lit1, i)
		} else {
			tr.lit0 = append(tr.lit0, i)
		}
	}
	for i, v := range x {
		if v {
			tr.lit0 = append(tr.lit0, o+i)
		} else {
			tr.lit1 = append(tr.lit1, o+i)
		}
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
	v := tr.sampleClauses(t)
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
	mv := newMoves(m.S)
	for j := 0; j < m.Clauses; j++ {
		var x uint64
		if tr.src, x = tr.src.next(); unit(x) >= prob {
			continue
		}
		// Type I when the clause's polarity agrees with the target.
		if (j%2 == 0) == positive {
			tr.typeI(t, j, mv)
		} else {
			tr.typeII(t, j)
		}
	}
}

// sampleClauses is Algorithm 2 for TM t: it samples the TA actions, records
// per clause how many included literals of value 0 falsify it (and which
// one if only one does), and returns the class sum. Only an included
// literal of value 0 can falsify a clause, and an empty clause outputs 1
// while training, so only the TAs of literals of value 0 are drawn, in
// literal order, until the outcome is decided (the first include for
// PaperFeedback, the second for ConsistentFeedback, which also needs to
// know which literal alone falsified the clause).
func (tr *Trainer) sampleClauses(t int) (v int) {
	m := tr.m
	nl := m.NumLiterals()
	stopAt := 1
	if m.Feedback == ConsistentFeedback {
		stopAt = 2
	}
	// The stream is a local copy while drawing; it is stored back at the
	// end.
	src := tr.src
	for j := 0; j < m.Clauses; j++ {
		base := m.TAIndex(t, j, 0)
		var z int
		src, z, tr.who[j] = drawIncludes(src, tr.lit0, m.pinc[base:base+nl:base+nl], stopAt)
		tr.zeros[j] = z
		if z == 0 {
			if j%2 == 0 {
				v++
			} else {
				v--
			}
		}
	}
	tr.src = src
	return v
}

// typeI is Algorithm 3, with the moves mv of m.S.
func (tr *Trainer) typeI(t, j int, mv moves) {
	m := tr.m
	out := tr.zeros[j] == 0
	zeroTPM := TPM3
	if out && m.Feedback != ConsistentFeedback {
		zeroTPM = TPM2
	}
	oneTPM := TPM3
	if out {
		oneTPM = TPM1
	}
	base := m.TAIndex(t, j, 0)
	// Each TA's update involves only its own SPV, so the literals of value
	// 1 and those of value 0 can be taken in two runs.
	m.apply(base, tr.lit1, oneTPM, mv)
	m.apply(base, tr.lit0, zeroTPM, mv)
}

// typeII is Algorithm 4: only the TAs of literals of value 0 change, and
// only where the clause fires (PaperFeedback: the sampled clause output is
// 1; ConsistentFeedback: the other TAs' sampled actions leave it firing).
func (tr *Trainer) typeII(t, j int) {
	m := tr.m
	z := tr.zeros[j]
	if z >= 2 || (z == 1 && m.Feedback != ConsistentFeedback) {
		return
	}
	base := m.TAIndex(t, j, 0)
	if z == 1 {
		m.apply(base, tr.who[j:j+1], TPM4, moves{})
		return
	}
	m.apply(base, tr.lit0, TPM4, moves{})
}

// drawIncludes draws, from src, the actions of the TAs of the literals lits
// of one clause (include probabilities pinc) in order until stopAt of them
// are included, and returns the advanced stream, the number included and
// the last literal included. The stream is passed by value so that its
// state stays in registers through the loop.
func drawIncludes(src pcg, lits []int, pinc []float64, stopAt int) (pcg, int, int) {
	z, who := 0, 0
	for _, i := range lits {
		var x uint64
		if src, x = src.next(); unit(x) < pinc[i] {
			who = i
			if z++; z == stopAt {
				break
			}
		}
	}
	return src, z, who
}
