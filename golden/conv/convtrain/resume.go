package convtrain

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/conv"
)

// State is what a trainer holds besides its configuration: every TA's SPV
// (2N words per TA, TA (c, i) = c*Literals + i, masses summing to 2^B),
// the class weights (Classes x Clauses, class-major), the control lane
// and every clause's lane, and the epochs completed. A trainer resumed
// from the State of another with the same configuration trains on exactly
// as that one would have (TestResumeIdentity).
type State struct {
	SPV     []uint16
	Weights []int32
	Control uint64
	Lanes   []uint64
	Epochs  int
}

// Lanes returns the control lane's state and every clause's lane state.
func (tr *Trainer) Lanes() (control uint64, clauses []uint64) {
	clauses = make([]uint64, tr.cfg.Clauses)
	for c := range clauses {
		clauses[c] = tr.cl.Lane(c)
	}
	return tr.ctl.State(), clauses
}

// Resume replaces a new trainer's state with st: the SPVs (include masses
// and supports derived from them), the weights, the lanes and the epoch
// count. The per-class weights are fixed by the structure, so st's must be
// them.
func (tr *Trainer) Resume(st State) error {
	C := tr.cfg.Clauses
	switch {
	case len(st.Weights) != len(tr.head.Weights):
		return fmt.Errorf("convtrain: resume: %d weights, want %d (%d classes x %d clauses)", len(st.Weights), len(tr.head.Weights), tr.cfg.Classes, C)
	case len(st.Lanes) != C:
		return fmt.Errorf("convtrain: resume: %d clause lanes, want %d", len(st.Lanes), C)
	case st.Epochs < 0:
		return fmt.Errorf("convtrain: resume: %d epochs, want >= 0", st.Epochs)
	}
	for i, w := range st.Weights {
		if tr.cfg.Structure == conv.PerClass && w != tr.head.Weights[i] {
			return fmt.Errorf("convtrain: resume: weight %d of class %d is %d, the per-class structure's is %d", i%C, i/C, w, tr.head.Weights[i])
		}
		if w < -tr.clip || w > tr.clip {
			return fmt.Errorf("convtrain: resume: weight %d of class %d is %d, outside the weight clip +-%d", i%C, i/C, w, tr.clip)
		}
	}
	if st.Control == 0 {
		return fmt.Errorf("convtrain: resume: control lane state 0 (an LFSR never reaches it)")
	}
	for c, s := range st.Lanes {
		if s == 0 {
			return fmt.Errorf("convtrain: resume: clause %d's lane state 0 (an LFSR never reaches it)", c)
		}
	}
	if err := tr.cl.Restore(st.SPV); err != nil {
		return fmt.Errorf("convtrain: resume: %w", err)
	}
	copy(tr.head.Weights, st.Weights)
	if err := tr.ctl.Seed(st.Control); err != nil {
		return fmt.Errorf("convtrain: resume: control lane: %w", err)
	}
	for c, s := range st.Lanes {
		tr.cl.SetLane(c, s)
	}
	tr.Epochs = st.Epochs
	return nil
}
